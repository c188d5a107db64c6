// Halide forms of the float8 conversions in ir/float8.cpp, written on the bits with the same steps so
// that the two can be checked against each other element by element (tests/codegen/float8_test.cpp).
#include "codegen/lower/float8.h"

#include <cmath>

namespace onnxc::codegen {
namespace {

using Halide::Expr;

Expr u32(uint32_t v) { return Expr(v); }
Expr f32_bits(const Expr& u) { return Halide::reinterpret(Halide::Float(32), u); }
Expr nan_f32() { return f32_bits(u32(0x7fc00000u)); }

Expr e8m0_decode(const Expr& b) {
  // 2^(b-127): the exponent field alone, except 2^-127, which is a float32 subnormal.
  return Halide::select(b == u32(0xff), nan_f32(), f32_bits(Halide::select(b == u32(0), u32(0x00400000u), b << 23)));
}

Expr e8m0_encode(const Expr& u, bool saturate, ir::E8M0Round mode) {
  Expr e = (u >> 23) & u32(0xff);
  Expr up = Halide::Internal::const_false();
  if (mode == ir::E8M0Round::Up) {
    up = (u & u32(0x7fffff)) != u32(0);
  } else if (mode == ir::E8M0Round::Nearest) {
    Expr g = (u & u32(0x400000)) != u32(0), r = (u & u32(0x200000)) != u32(0);
    Expr s = (u & u32(0x1fffff)) != u32(0), lsb = e > u32(0);
    up = g && (r || s || lsb);
  }
  if (saturate) up = up && e != u32(0xfe);
  Expr code = Halide::select(e == u32(0xff), e, e + Halide::select(up, u32(1), u32(0)));
  return Halide::cast(Halide::UInt(8), code);
}

}  // namespace

Expr float8_decode(const Expr& bits, ir::DType t) {
  Expr b = Halide::cast(Halide::UInt(32), bits);
  if (t == ir::DType::Float8E8M0) return e8m0_decode(b);
  const ir::Float8Layout& l = *ir::float8_layout(t);
  const uint32_t m = static_cast<uint32_t>(l.man_bits), sign_mask = 1u << l.sign_bit;
  Expr sign = (b & u32(sign_mask)) << (31 - l.sign_bit), mag = b & u32(sign_mask - 1);
  Expr e = mag >> m, man = mag & u32((1u << m) - 1);
  Expr normal = f32_bits(((e + u32(127 - l.bias)) << 23) | (man << (23 - m)));
  Expr subnormal = Halide::cast(Halide::Float(32), man) * std::ldexp(1.0f, 1 - l.bias - l.man_bits);
  Expr v = Halide::select(e == u32(0), subnormal, normal);
  if (l.ieee) v = Halide::select(e == u32(31), Halide::select(man == u32(0), f32_bits(u32(0x7f800000u)), nan_f32()), v);
  if (!l.ieee && !l.fnuz && !l.finite) v = Halide::select(mag == u32(0x7f), nan_f32(), v);
  v = f32_bits(Halide::reinterpret(Halide::UInt(32), v) | sign);
  if (l.fnuz) v = Halide::select(b == u32(0x80), nan_f32(), v);
  return v;
}

Expr float8_encode(const Expr& f32, ir::DType t, bool saturate, ir::E8M0Round mode) {
  internal_check(f32.type() == Halide::Float(32)) << "float8_encode takes a float32, not " << f32.type();
  Expr u = Halide::reinterpret(Halide::UInt(32), f32);
  if (t == ir::DType::Float8E8M0) return e8m0_encode(u, saturate, mode);
  const ir::Float8Layout& l = *ir::float8_layout(t);
  const int m = l.man_bits, shift = 23 - m;
  const uint32_t sign_mask = 1u << l.sign_bit;
  Expr a = u & u32(0x7fffffffu);
  Expr sign = (u >> (31 - l.sign_bit)) & u32(sign_mask);
  // Below the smallest normal the scaled magnitude is exact; round() rounds ties to even. The clamp
  // only keeps the unselected lanes (large magnitudes) from a float-to-int overflow.
  Expr scaled = Halide::min(f32_bits(a) * std::ldexp(1.0f, l.bias - 1 + m), static_cast<float>(1 << (m + 1)));
  Expr sub_code = Halide::cast(Halide::UInt(32), Halide::round(scaled));
  Expr r = a + u32((1u << (shift - 1)) - 1) + ((a >> shift) & u32(1));
  Expr normal_code = (r >> shift) - u32(static_cast<uint32_t>(127 - l.bias) << m);
  Expr code = Halide::select(a < u32(static_cast<uint32_t>(128 - l.bias) << 23), sub_code, normal_code);
  Expr overflow = code > u32(l.max_code);
  // E2M1 has no NaN: ml_dtypes gives a zero of the opposite sign.
  Expr nan_code = l.finite ? (sign ^ u32(sign_mask)) : l.fnuz ? u32(0x80) : (sign | u32(l.ieee ? 0x7e : 0x7f));
  Expr result;
  if (saturate || l.finite) {
    result = sign | Halide::min(code, u32(l.max_code));
  } else {
    Expr over_code = l.fnuz ? u32(0x80) : (sign | u32(l.ieee ? 0x7c : 0x7f));
    result = Halide::select(overflow, over_code, sign | code);
  }
  if (l.fnuz) result = Halide::select(code == u32(0), u32(0), result);  // no negative zero
  result = Halide::select(a > u32(0x7f800000u), nan_code, result);
  return Halide::cast(Halide::UInt(8), result);
}

}  // namespace onnxc::codegen
