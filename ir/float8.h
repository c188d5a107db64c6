// The 8-bit float element types of ONNX (opset 19: E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ; opset 24:
// E8M0) as bit layouts, and scalar conversions to and from float32 with the rounding, saturation
// and NaN rules of ONNX's Cast (what its reference computes through ml_dtypes). Kernels use the
// same rules in Halide form (codegen/lower/float8.h); these serve constant folding, test data and
// comparisons.
#pragma once

#include <cstdint>
#include <string_view>

#include "ir/dtype.h"

namespace onnxc::ir {

// A sign-exponent-mantissa layout. `fnuz` ("finite, no negative zero"): 0x80 is the only NaN and
// there is no infinity; otherwise all-ones exponent and mantissa is NaN (E4M3FN, no infinity) or the
// exponent all ones is infinity/NaN as in IEEE (E5M2, `ieee`).
struct Float8Layout {
  int man_bits;
  int bias;
  bool ieee;      // E5M2: exponent 31 is inf (mantissa 0) or NaN
  bool fnuz;      // 0x80 is NaN, no -0, no inf
  uint8_t max_code;  // the largest finite magnitude's bits
};

// The layout of E4M3FN, E4M3FNUZ, E5M2 or E5M2FNUZ; nullptr for any other dtype (E8M0 included:
// it has no sign and no mantissa, see below).
const Float8Layout* float8_layout(DType t);
bool dtype_is_float8(DType t);  // the four above and E8M0

float float8_to_f32(uint8_t bits, DType t);
// Round to nearest even. Out of range: the largest finite value when `saturate` (infinities too),
// else infinity (E5M2) or NaN (the others). NaN stays NaN (sign kept where the type has one).
uint8_t f32_to_float8(float f, DType t, bool saturate);

// E8M0 holds a power of two, 2^(bits-127); 0xFF is NaN. Cast's round_mode (opset 24) picks the
// power for a value between two: up (the default), down or nearest.
enum class E8M0Round { Up, Down, Nearest };
bool e8m0_round_from_name(std::string_view name, E8M0Round* out);
uint8_t f32_to_e8m0(float f, bool saturate, E8M0Round mode);

}  // namespace onnxc::ir
