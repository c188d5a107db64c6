// Float32 exp in Halide IR (see fast_math.h). Halide 14's own exp evaluates a degree-7 polynomial
// on [0, ln 2) with separate multiplies and adds (strict_float keeps them apart), guards its
// exponent with integer compares and flushes every result below 2^-126 to 0; onnxc then wrapped
// it in NaN/inf selects. This one reduces to |r| <= ln2/2, needs degree 6, fuses every multiply-add
// and gets the whole range from one two-step scaling.
#include "codegen/lower/fast_math.h"

#include "ir/error.h"

namespace onnxc::codegen {

namespace {

Halide::Expr f32(float v) { return Halide::Expr(v); }

}  // namespace

Halide::Expr fused_multiply_add(const Halide::Expr& a, const Halide::Expr& b, const Halide::Expr& c) {
  return Halide::Internal::Call::make(a.type(), "llvm.fma.f32", {a, b, c}, Halide::Internal::Call::PureExtern);
}

// 1. Clamp x to [-104, 89]: below, e^x rounds to +0 (it is under half of 2^-149 from -103.973);
//    above, it overflows (from 88.7228). The clamp keeps n within [-150, 128] for step 4; NaN is
//    put back at the end.
// 2. n = round(x / ln2), r = x - n ln2 with ln2 split in two (Cody-Waite): C1 = ln2 rounded to
//    float, C2 = ln2 - C1. fma(n, -C1, x) is exact (x and n C1 are multiples of 2^-24 when
//    |n| >= 2, and the difference is under 2^23 of those steps), so the one rounding is in the
//    small second term and r is within ~2^-25 |r| + 2^-40 of x - n ln2.
// 3. e^r = 1 + r + r^2 q(r) on |r| <= ln2/2, q of degree 4 fitted (weighted least squares with
//    Lawson's reweighting towards minimax) to the relative error of e^r: 0.05 ulp before rounding.
//    Horner steps are FMAs; the last, r + r^2 q, rounds a value under 0.42, and adding 1 rounds
//    once more: about 0.5 ulp of e^r in all.
// 4. 2^n is applied as 2^(n - n/2) * 2^(n/2) (n/2 rounded down), each factor a normal float built
//    in the exponent bits, so n from -150 to 128 needs no compare: p 2^(n/2) is exact, and the
//    second multiply rounds once, to a normal, a subnormal (correctly placed, not flushed), +0,
//    or +inf on overflow.
Halide::Expr exp_f32(const Halide::Expr& x) {
  internal_check(x.type().element_of() == Halide::Float(32)) << "exp_f32 of " << x.type();
  Halide::Expr xc = Halide::clamp(x, f32(-104.0f), f32(89.0f));
  Halide::Expr n = Halide::round(xc * f32(1.44269504088896341f));
  Halide::Expr r = fused_multiply_add(n, f32(-0.693147182464599609375f), xc);
  r = fused_multiply_add(n, f32(1.9046542999577e-09f), r);
  const float q[] = {4.999999404e-01f, 1.666652113e-01f, 4.166838899e-02f, 8.368710056e-03f, 1.381461276e-03f};
  Halide::Expr poly = f32(q[4]);
  for (int i = 3; i >= 0; --i) poly = fused_multiply_add(poly, r, f32(q[i]));
  Halide::Expr p = fused_multiply_add(poly, r * r, r) + f32(1.0f);
  Halide::Type i32 = Halide::Int(32);
  Halide::Expr k = Halide::cast(i32, n), k_low = k >> 1, k_high = k - k_low;
  Halide::Expr scale_low = Halide::reinterpret(Halide::Float(32), (k_low + 127) << 23);
  Halide::Expr scale_high = Halide::reinterpret(Halide::Float(32), (k_high + 127) << 23);
  // strict_float here too: keep_ieee_semantics leaves Tuple-valued Funcs (the attention state)
  // under fast-math, where LLVM could reassociate these steps or drop the NaN and range handling.
  return Halide::strict_float(Halide::select(Halide::is_nan(x), x, (p * scale_low) * scale_high));
}

}  // namespace onnxc::codegen
