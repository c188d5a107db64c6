// Element types, numbered as ONNX's TensorProto.DataType so the frontend and the artifact contract
// need no translation table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace onnxc::ir {

enum class DType : int32_t {
  Undefined = 0,
  Float32 = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Float64 = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
  // 8-bit floats (ir/float8.h): storage types that Cast, QuantizeLinear and DequantizeLinear convert;
  // other ops only move their bytes.
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
  Float8E8M0 = 24,
  // The 4-bit float (ONNX 1.18, opset 23): sign, 2 exponent bits, 1 mantissa bit; no infinity, no NaN.
  // Packed two to a byte in files like int4; held unpacked, its 4-bit code in the low bits of a byte
  // (sign in bit 3), converted like the 8-bit floats (ir/float8.h).
  Float4E2M1 = 23,
  // Sub-byte integers (ONNX 1.16 / 1.20). ONNX files pack them (two int4 or four int2 per byte, the
  // first element in the low bits); in memory, in the IR and in kernels they are held unpacked, one
  // element per byte (int8/uint8 values in range, signed ones sign-extended), so every op that reads
  // bytes reads them unchanged. The frontend packs and unpacks at the file boundary.
  UInt4 = 21,
  Int4 = 22,
  UInt2 = 25,
  Int2 = 26,
};

// Bytes per element in memory; String is 0 (strings live out of line), Bool is 1, the sub-byte
// integers 1 (held unpacked).
size_t dtype_size(DType t);
// Bits per element in an ONNX file: 4 or 2 for the packed sub-byte types (the integers and float4e2m1),
// 0 for every other type.
int dtype_packed_bits(DType t);
// The range of a sub-byte integer type ([-8, 7], [0, 15], [-2, 1], [0, 3]); false for other types.
bool dtype_subbyte_range(DType t, int* lo, int* hi);
// Short stable name used in IR text: f32, i64, bool, bf16, str ...
std::string_view dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view name);
bool dtype_is_float(DType t);    // f16, bf16, f32, f64 (not the 8-bit floats: see ir/float8.h)
bool dtype_is_integer(DType t);  // signed or unsigned ints (not bool)
bool dtype_is_signed(DType t);
bool dtype_is_valid(int32_t onnx_code);

}  // namespace onnxc::ir
