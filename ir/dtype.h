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
};

// Bytes per element; String is 0 (strings live out of line), Bool is 1.
size_t dtype_size(DType t);
// Short stable name used in IR text: f32, i64, bool, bf16, str ...
std::string_view dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view name);
bool dtype_is_float(DType t);    // f16, bf16, f32, f64 (not the 8-bit floats: see ir/float8.h)
bool dtype_is_integer(DType t);  // signed or unsigned ints (not bool)
bool dtype_is_signed(DType t);
bool dtype_is_valid(int32_t onnx_code);

}  // namespace onnxc::ir
