// The narrow float element types of ONNX as bit layouts (8-bit, opset 19: E4M3FN, E4M3FNUZ, E5M2,
// E5M2FNUZ; opset 24: E8M0; 4-bit, opset 23: E2M1), and scalar conversions to and from float32 with
// the rounding, saturation and NaN rules of ONNX's Cast (what its reference computes through
// ml_dtypes). Kernels use the same rules in Halide form (codegen/lower/float8.h); these serve constant
// folding, test data and comparisons. Each is held as its code in one byte (E2M1 in the low 4 bits).
#pragma once

#include <cstdint>
#include <string_view>

#include "ir/dtype.h"

namespace onnxc::ir {

// A sign-exponent-mantissa layout. `fnuz` ("finite, no negative zero"): 0x80 is the only NaN and
// there is no infinity; `finite` (E2M1): no NaN and no infinity at all; otherwise all-ones exponent and
// mantissa is NaN (E4M3FN, no infinity) or the exponent all ones is infinity/NaN as in IEEE (E5M2,
// `ieee`).
struct Float8Layout {
  int man_bits;
  int bias;
  bool ieee;      // E5M2: exponent 31 is inf (mantissa 0) or NaN
  bool fnuz;      // 0x80 is NaN, no -0, no inf
  uint8_t max_code;  // the largest finite magnitude's bits
  int sign_bit;   // 7, or 3 for the 4-bit E2M1
  bool finite;    // E2M1: every code is a number; overflow saturates whatever `saturate` says
};

// The layout of E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ or E2M1; nullptr for any other dtype (E8M0
// included: it has no sign and no mantissa, see below).
const Float8Layout* float8_layout(DType t);
// The five 8-bit floats and float4e2m1: the types Cast, QuantizeLinear and DequantizeLinear convert
// through float32 with the functions below, and other ops only move as bytes.
bool dtype_is_narrow_float(DType t);

// `t` is any narrow float (dtype_is_narrow_float).
float float8_to_f32(uint8_t bits, DType t);
// Round to nearest even. Out of range: the largest finite value when `saturate` (infinities too),
// else infinity (E5M2) or NaN (the others). NaN stays NaN (sign kept where the type has one). E2M1
// always saturates, and NaN becomes a zero of the opposite sign (ml_dtypes' convention: +NaN -> -0).
uint8_t f32_to_float8(float f, DType t, bool saturate);

// E8M0 holds a power of two, 2^(bits-127); 0xFF is NaN. Cast's round_mode (opset 24) picks the
// power for a value between two: up (the default), down or nearest.
enum class E8M0Round { Up, Down, Nearest };
bool e8m0_round_from_name(std::string_view name, E8M0Round* out);
uint8_t f32_to_e8m0(float f, bool saturate, E8M0Round mode);

}  // namespace onnxc::ir
