// Scalar float8 conversions; codegen/lower/float8.cpp computes the same in Halide.
#include "ir/float8.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace onnxc::ir {
namespace {

constexpr Float8Layout kE4M3FN{3, 7, false, false, 0x7e, 7, false};     // max 448
constexpr Float8Layout kE4M3FNUZ{3, 8, false, true, 0x7f, 7, false};    // max 240
constexpr Float8Layout kE5M2{2, 15, true, false, 0x7b, 7, false};       // max 57344
constexpr Float8Layout kE5M2FNUZ{2, 16, false, true, 0x7f, 7, false};   // max 57344
constexpr Float8Layout kE2M1{1, 1, false, false, 0x7, 3, true};         // max 6

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace

const Float8Layout* float8_layout(DType t) {
  switch (t) {
    case DType::Float8E4M3FN: return &kE4M3FN;
    case DType::Float8E4M3FNUZ: return &kE4M3FNUZ;
    case DType::Float8E5M2: return &kE5M2;
    case DType::Float8E5M2FNUZ: return &kE5M2FNUZ;
    case DType::Float4E2M1: return &kE2M1;
    default: return nullptr;
  }
}

bool dtype_is_narrow_float(DType t) { return float8_layout(t) != nullptr || t == DType::Float8E8M0; }

float float8_to_f32(uint8_t b, DType t) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (t == DType::Float8E8M0) return b == 0xff ? nan : float_of(b == 0 ? 0x00400000u : uint32_t{b} << 23);
  const Float8Layout& l = *float8_layout(t);
  const int sign_mask = 1 << l.sign_bit;
  bool neg = b & sign_mask;
  int mag = b & (sign_mask - 1), e = mag >> l.man_bits, man = mag & ((1 << l.man_bits) - 1);
  if (l.fnuz && b == 0x80) return nan;
  if (!l.fnuz && !l.ieee && !l.finite && mag == 0x7f) return neg ? -nan : nan;
  if (l.ieee && e == 31) {
    float special = man ? nan : std::numeric_limits<float>::infinity();
    return neg ? -special : special;
  }
  // Subnormal: man * 2^(1-bias-m); normal: (2^m + man) * 2^(e-bias-m). Both exact in float32.
  float v = e == 0 ? std::ldexp(static_cast<float>(man), 1 - l.bias - l.man_bits)
                   : std::ldexp(static_cast<float>((1 << l.man_bits) + man), e - l.bias - l.man_bits);
  return neg ? -v : v;
}

uint8_t f32_to_float8(float f, DType t, bool saturate) {
  if (t == DType::Float8E8M0) return f32_to_e8m0(f, saturate, E8M0Round::Up);
  const Float8Layout& l = *float8_layout(t);
  const uint32_t sign_mask = 1u << l.sign_bit;
  uint32_t u = bits_of(f), a = u & 0x7fffffffu;
  uint8_t sign = static_cast<uint8_t>((u >> (31 - l.sign_bit)) & sign_mask);
  if (a > 0x7f800000u) {
    if (l.finite) return static_cast<uint8_t>(sign ^ sign_mask);
    return l.fnuz ? 0x80 : static_cast<uint8_t>(sign | (l.ieee ? 0x7e : 0x7f));
  }
  uint32_t code;
  if (a < static_cast<uint32_t>(128 - l.bias) << 23) {
    // Below the smallest normal: a multiple of 2^(1-bias-m); the scaling is exact, so rounding the
    // scaled value to an integer (ties to even) is the rounding of f. 2^m is the smallest normal.
    code = static_cast<uint32_t>(std::nearbyint(std::ldexp(float_of(a), l.bias - 1 + l.man_bits)));
  } else {
    // Round the float32 bits to m mantissa bits, ties to even, then rebias the exponent.
    int shift = 23 - l.man_bits;
    uint32_t r = a + (1u << (shift - 1)) - 1 + ((a >> shift) & 1);
    code = (r >> shift) - (static_cast<uint32_t>(127 - l.bias) << l.man_bits);
  }
  if (code > l.max_code) {
    if (saturate || l.finite) code = l.max_code;
    else return l.fnuz ? 0x80 : static_cast<uint8_t>(sign | (l.ieee ? 0x7c : 0x7f));
  }
  if (code == 0 && l.fnuz) return 0;
  return static_cast<uint8_t>(sign | code);
}

bool e8m0_round_from_name(std::string_view name, E8M0Round* out) {
  if (name == "up") *out = E8M0Round::Up;
  else if (name == "down") *out = E8M0Round::Down;
  else if (name == "nearest") *out = E8M0Round::Nearest;
  else return false;
  return true;
}

// As ONNX's reference (numpy_helper.to_float8e8m0): the float32 exponent field, ignoring the sign,
// moved up one when the rounding mode says so; NaN and infinity give 0xFF.
uint8_t f32_to_e8m0(float f, bool saturate, E8M0Round mode) {
  uint32_t u = bits_of(f), e = (u >> 23) & 0xff;
  if (e == 0xff) return 0xff;
  bool up = false;
  if (mode == E8M0Round::Up) {
    up = (u & 0x7fffffu) != 0;
  } else if (mode == E8M0Round::Nearest) {
    bool g = u & 0x400000u, r = u & 0x200000u, s = u & 0x1fffffu, lsb = e > 0;
    up = g && (r || s || lsb);
  }
  if (up && !(saturate && e == 0xfe)) ++e;
  return static_cast<uint8_t>(e);
}

}  // namespace onnxc::ir
