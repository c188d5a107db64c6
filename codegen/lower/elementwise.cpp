// Elementwise ops: unary math and activations, casts, and n-ary ops with multidirectional (numpy)
// broadcasting over symbolic extents. Float math on f16/bf16 is computed in f32 and rounded once.
#include <cmath>

#include "codegen/lower/float8.h"
#include "codegen/lower/lower_util.h"
#include "ir/onnxc_attrs.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;
using Halide::Type;
using Fn = std::function<Expr(const std::vector<Expr>&, const ir::Node&)>;

// Type the arithmetic runs in: f32 for narrow floats, f32 for integers fed to float-only math.
Type compute_type(Type t, bool float_math) {
  if (t.is_float() && t.bits() < 32) return Halide::Float(32);
  if (t.is_bfloat()) return Halide::Float(32);
  if (float_math && !t.is_float()) return Halide::Float(t.bits() > 32 ? 64 : 32);
  return t;
}

Expr lit(const Expr& like, double v) { return literal(like.type(), v); }

// out(i) = f(inputs broadcast to i). `float_math`: the op is defined on floats only. An 8- or 4-bit float
// input (IsNaN, IsInf) is read as its float32 value.
LowerFn broadcast_op(bool float_math, Fn f) {
  return [f, float_math](LowerContext& ctx) -> std::vector<HTensor> {
    const auto& shape = out_shape(ctx);
    std::vector<const HTensor*> ins;
    for (const auto& t : ctx.in) ins.push_back(t.defined() ? &t : nullptr);
    return {define(ctx.node.op_type(), shape, out_dtype(ctx), [&](const Index& i) {
      std::vector<Expr> v;
      for (const HTensor* t : ins) {
        if (!t) {
          v.push_back(Expr());
          continue;
        }
        Expr e = broadcast_at(*t, i, shape);
        if (ir::dtype_is_narrow_float(t->dtype)) e = float8_decode(e, t->dtype);
        Type ct = compute_type(e.type(), float_math);
        v.push_back(ct == e.type() ? e : Halide::cast(ct, e));
      }
      return f(v, ctx.node);
    })};
  };
}

LowerFn unary_float(std::function<Expr(Expr, const ir::Node&)> f) {
  return broadcast_op(true, [f](const std::vector<Expr>& v, const ir::Node& n) { return f(v[0], n); });
}
LowerFn unary(std::function<Expr(Expr, const ir::Node&)> f) {
  return broadcast_op(false, [f](const std::vector<Expr>& v, const ir::Node& n) { return f(v[0], n); });
}
LowerFn binary(std::function<Expr(Expr, Expr)> f) {
  return broadcast_op(false, [f](const std::vector<Expr>& v, const ir::Node&) { return f(v[0], v[1]); });
}
// Variadic ops fold left over their inputs.
LowerFn variadic(std::function<Expr(Expr, Expr)> f, bool mean = false) {
  return broadcast_op(false, [f, mean](const std::vector<Expr>& v, const ir::Node&) {
    Expr r = v[0];
    for (size_t i = 1; i < v.size(); ++i) r = f(r, v[i]);
    return mean ? r / lit(r, static_cast<double>(v.size())) : r;
  });
}

Expr clamp_nan(Expr x, Expr lo, Expr hi) { return min_nan(max_nan(x, lo), hi); }

Expr sigmoid(Expr x) { return lit(x, 1) / (lit(x, 1) + exp_ieee(-x)); }
Expr softplus(Expr x) { return Halide::max(x, lit(x, 0)) + log_ieee(lit(x, 1) + exp_ieee(-Halide::abs(x))); }
Expr erf_any(Expr x) {
  if (x.type() == Halide::Float(32)) return erf_ieee(x);
  return Halide::cast(x.type(), erf_ieee(Halide::cast<float>(x)));
}
float fattr(const ir::Node& n, const char* name, float def) { return n.attr_float(name, def); }

Expr gelu(Expr x, const ir::Node& n) {
  if (n.attr_string("approximate", "none") == "tanh") {
    Expr inner = lit(x, std::sqrt(2.0 / M_PI)) * (x + lit(x, 0.044715) * x * x * x);
    return lit(x, 0.5) * x * (lit(x, 1) + tanh_ieee(inner));
  }
  return lit(x, 0.5) * x * (lit(x, 1) + erf_any(x * lit(x, M_SQRT1_2)));
}

Expr sign(Expr x) {
  return Halide::select(x > lit(x, 0), lit(x, 1), x < lit(x, 0), lit(x, -1), lit(x, 0));
}

// x ** y, with small constant integer exponents as multiplications (exact and vectorizable).
Expr power(Expr x, Expr y) {
  Type rt = x.type();
  Expr yc = Halide::Internal::simplify(Halide::cast(Halide::Float(64), y));
  if (auto c = Halide::Internal::as_const_float(yc)) {
    if (*c == 1) return x;
    if (*c == 2) return x * x;
    if (*c == 3) return x * x * x;
    if (*c == 0.5 && rt.is_float()) return Halide::sqrt(x);
    if (*c == -1 && rt.is_float()) return lit(x, 1) / x;
  }
  if (!rt.is_float()) return Halide::cast(rt, Halide::pow(Halide::cast<double>(x), Halide::cast<double>(y)));
  return Halide::pow(x, Halide::cast(rt, y));
}

// Integer division truncating toward zero, from Halide's Euclidean division (which defines x / 0 as 0,
// where div_round_to_zero would trap on a zero divisor in a masked vector lane).
Expr divide(Expr a, Expr b) {
  if (a.type().is_float() || a.type().is_uint()) return a / b;
  Expr q = a / b, r = a % b;  // r >= 0
  Expr one = Halide::Internal::make_one(a.type());
  return Halide::select(a < 0 && r != 0, Halide::select(b > 0, q + one, q - one), q);
}

Expr modulo(Expr a, Expr b, const ir::Node& n) {
  if (a.type().is_float()) {
    // C's fmod: the quotient truncated; an infinite divisor leaves a finite dividend as it is.
    Expr r = Halide::select(Halide::is_inf(b) && Halide::is_finite(a), a, a - Halide::trunc(a / b) * b);
    if (n.attr_int("fmod", 0)) return r;
    // fmod=0 on floats (allowed from opset 28): the quotient floored, so the result takes the
    // divisor's sign, zero included (+0 or -0 as the divisor's).
    r = Halide::select(r != lit(r, 0) && ((r < lit(r, 0)) != (b < lit(b, 0))), r + b, r);
    // The zero's sign bit copied from b (a -0.0 literal would be folded to +0).
    Type bits = Halide::UInt(r.type().bits());
    Expr sign = Halide::reinterpret(bits, b) & Halide::Internal::make_const(bits, uint64_t(1) << (r.type().bits() - 1));
    return Halide::select(r == lit(r, 0), Halide::reinterpret(r.type(), sign), r);
  }
  if (n.attr_int("fmod", 0)) return a - divide(a, b) * b;
  Expr r = a % b;  // Euclidean: r >= 0; ONNX takes the divisor's sign
  if (a.type().is_uint()) return r;
  return Halide::select(b < lit(b, 0) && r != lit(r, 0), r + b, r);
}

Expr clip(const std::vector<Expr>& v, const ir::Node& n) {
  Expr x = v[0];
  Expr lo = v.size() > 1 && v[1].defined() ? v[1] : Expr();
  Expr hi = v.size() > 2 && v[2].defined() ? v[2] : Expr();
  if (n.has_attr("min")) lo = lit(x, n.attr_float("min", 0));
  if (n.has_attr("max")) hi = lit(x, n.attr_float("max", 0));
  if (lo.defined()) x = max_nan(x, lo);
  if (hi.defined()) x = min_nan(x, hi);
  return x;
}

Expr is_inf(Expr x, const ir::Node& n) {
  if (!x.type().is_float()) return Halide::Internal::const_false();
  Expr inf = Halide::is_inf(x);
  bool neg = n.attr_int("detect_negative", 1), pos = n.attr_int("detect_positive", 1);
  if (neg && pos) return inf;
  if (neg) return inf && x < lit(x, 0);
  if (pos) return inf && x > lit(x, 0);
  return Halide::Internal::const_false();
}

// Cast / CastLike: float -> bool is x != 0; f32 -> bf16 rounds to nearest even, as ONNX's newer
// references (and 1.23's test data) do, except in a node raised from before opset 19
// (ir::kBf16Truncates), which truncates the low mantissa bits as the 1.12 reference did; 8-bit floats
// and float4e2m1 convert through float32 (`saturate`, opset 19; `round_mode` for E8M0, opset 24; a
// float64 value is rounded twice, to float32 and then to 8 or 4 bits); everything else is a C-style conversion. A sub-byte
// integer target keeps the low bits of the C conversion to int32 (sign-extended for int4/int2), as
// ONNX's reference does (-9.0 -> int4 7).
Expr cast_to_subbyte(ir::DType to, Expr x) {
  const int bits = ir::dtype_packed_bits(to);
  // Bits of the int32, masked as unsigned: Halide assumes signed int32 arithmetic never overflows (a
  // shift pair would fold away), and it would merge cast<uint32>(cast<int32>(float)) into one
  // float -> uint32 conversion, which negative values do not survive.
  Expr bits32 = Halide::reinterpret(Halide::UInt(32), Halide::cast<int32_t>(x));
  Expr low = Halide::cast<int32_t>(bits32 & Halide::Expr((1u << bits) - 1));
  if (ir::dtype_is_signed(to)) return Halide::cast<int8_t>(Halide::select(low >= (1 << (bits - 1)), low - (1 << bits), low));
  return Halide::cast<uint8_t>(low);
}

LowerFn cast_op() {
  return [](LowerContext& ctx) -> std::vector<HTensor> {
    const HTensor& a = ctx.in[0];
    ir::DType to = out_dtype(ctx);
    bool saturate = ctx.node.attr_int("saturate", 1) != 0;
    ir::E8M0Round mode = ir::E8M0Round::Up;
    user_check(ir::e8m0_round_from_name(ctx.node.attr_string("round_mode", "up"), &mode))
        << ctx.node.describe() << ": round_mode must be up, down or nearest";
    return {define("Cast", out_shape(ctx), to, [&](const Index& i) {
      Expr x = a.at(i);
      if (ir::dtype_is_narrow_float(a.dtype)) x = float8_decode(x, a.dtype);
      if (ir::dtype_is_narrow_float(to)) return float8_encode(Halide::cast(Halide::Float(32), x), to, saturate, mode);
      if (to == ir::DType::Bool) return from_bool(to_bool(x));
      if (ir::dtype_packed_bits(to)) return cast_to_subbyte(to, x);
      bool truncates = ctx.opset < 19 || ctx.node.attr_int(ir::kBf16Truncates, 0);  // a model left unraised, or raised
      if (to == ir::DType::BFloat16 && x.type() == Halide::Float(32) && truncates)
        return Halide::reinterpret(Halide::BFloat(16),
                                   Halide::cast<uint16_t>(Halide::reinterpret(Halide::UInt(32), x) >> 16));
      return cast_keep_nan(halide_type(to), x);
    })};
  };
}

// BitShift: opset 28 admits signed ints. A shift by a negative amount or by the bit width or more
// gives 0 (the sign for a signed right shift, which is arithmetic); a signed left shift shifts the
// bits as unsigned ones, so overflow wraps.
Expr bit_shift(const std::vector<Expr>& v, const ir::Node& n) {
  Expr a = v[0], b = v[1];
  Type t = a.type(), ut = t.with_code(Halide::Type::UInt);
  Expr out_of_range = b >= Halide::Internal::make_const(b.type(), t.bits());
  if (t.is_int()) out_of_range = out_of_range || b < lit(b, 0);
  Expr amount = Halide::cast(ut, Halide::clamp(b, lit(b, 0), Halide::Internal::make_const(b.type(), t.bits() - 1)));
  Expr zero = Halide::Internal::make_zero(t);
  if (n.attr_string("direction", "LEFT") == "RIGHT") {
    Expr fill = t.is_int() ? Halide::select(a < zero, Halide::Internal::make_const(t, -1), zero) : zero;
    return Halide::select(out_of_range, fill, a >> amount);
  }
  return Halide::select(out_of_range, zero, Halide::reinterpret(t, Halide::reinterpret(ut, a) << amount));
}

// BitCast (opset 26): the input's bits read as `to`, of the same element size. Bool is one byte
// holding 0 or 1 on both sides, so it converts by value.
std::vector<HTensor> bit_cast(LowerContext& ctx) {
  const HTensor& a = ctx.in[0];
  ir::DType to = out_dtype(ctx);
  user_check(to != ir::DType::String && a.dtype != ir::DType::String && ir::dtype_size(to) == ir::dtype_size(a.dtype))
      << ctx.node.describe() << ": BitCast needs input and output of one element size (not strings); "
      << ir::dtype_name(a.dtype) << " -> " << ir::dtype_name(to) << " is not";
  return {define("BitCast", out_shape(ctx), to, [&](const Index& i) {
    Expr x = a.at(i);
    if (to == ir::DType::Bool) return from_bool(x != Halide::Internal::make_zero(x.type()));
    if (a.dtype == ir::DType::Bool) return Halide::cast(halide_type(to), x);
    return Halide::reinterpret(halide_type(to), x);
  })};
}

// Dropout run as a kernel (its mask is used, or training_mode is not constant false): the output is
// the input and the mask all true in inference mode, and in training mode with a ratio of 0; any other
// training-mode Dropout needs random numbers, which onnxc does not generate. A ratio or training_mode
// given at run time is checked at run time: the kernel fails with a message saying so (not a result).
std::vector<HTensor> dropout(LowerContext& ctx) {
  Expr deterministic = Halide::Internal::const_true();
  if (has_input(ctx, 2)) {
    auto tm = const_ints(ctx, 2);
    auto ratio = has_input(ctx, 1) ? const_floats(ctx, 1) : std::optional<std::vector<double>>(std::vector<double>{0.5});
    bool inference = tm && !tm->empty() && (*tm)[0] == 0;
    bool zero_ratio = ratio && !ratio->empty() && (*ratio)[0] == 0.0;
    user_check(inference || zero_ratio || !tm || !ratio)
        << ctx.node.describe() << ": Dropout in training mode is not supported (it draws random numbers; only a "
        << "ratio of 0 is deterministic)";
    if (!inference && !zero_ratio) {
      Expr training = tm ? Expr(true) : to_bool(element(ctx, 2, 0));
      Expr r = ratio ? Halide::Internal::make_const(Halide::Float(64), (*ratio)[0]) : Halide::cast<double>(element(ctx, 1, 0));
      deterministic = !training || r == Halide::Internal::make_zero(r.type());
    }
  }
  const HTensor& a = ctx.in[0];
  if (!Halide::Internal::is_const_one(deterministic)) ctx.checks_data = true;
  auto checked = [&](Expr v) {
    return Halide::require(deterministic, v,
                           "Dropout in training mode with a nonzero ratio is not supported (it draws random numbers)");
  };
  std::vector<HTensor> r = {
      define("Dropout", out_shape(ctx), out_dtype(ctx), [&](const Index& i) { return checked(a.at(i)); })};
  if (ctx.node.output(1))
    r.push_back(define("DropoutMask", out_shape(ctx, 1), ir::DType::Bool,
                       [&](const Index&) { return checked(Expr(uint8_t(1))); }));
  return r;
}

constexpr auto EW = KernelClass::Elementwise;
#define UNARY_FLOAT(op, body) Registrar reg_##op("", #op, EW, unary_float([](Expr x, const ir::Node& n) { return body; }))
#define UNARY(op, body) Registrar reg_##op("", #op, EW, unary([](Expr x, const ir::Node& n) { return body; }))
#define BINARY(op, body) Registrar reg_##op("", #op, EW, binary([](Expr a, Expr b) { return body; }))

UNARY_FLOAT(Sqrt, Halide::sqrt(x));
UNARY_FLOAT(Exp, exp_ieee(x));
UNARY_FLOAT(Log, log_ieee(x));
UNARY_FLOAT(Tanh, tanh_ieee(x));
UNARY_FLOAT(Erf, erf_any(x));
UNARY_FLOAT(Sigmoid, sigmoid(x));
UNARY_FLOAT(Reciprocal, lit(x, 1) / x);
UNARY_FLOAT(Floor, Halide::floor(x));
UNARY_FLOAT(Ceil, Halide::ceil(x));
UNARY_FLOAT(Round, Halide::round(x));
UNARY_FLOAT(Sin, Halide::sin(x));
UNARY_FLOAT(Cos, Halide::cos(x));
UNARY_FLOAT(Tan, Halide::tan(x));
UNARY_FLOAT(Asin, Halide::asin(x));
UNARY_FLOAT(Acos, Halide::acos(x));
UNARY_FLOAT(Atan, Halide::atan(x));
UNARY_FLOAT(Sinh, Halide::sinh(x));
UNARY_FLOAT(Cosh, Halide::cosh(x));
UNARY_FLOAT(Asinh, Halide::asinh(x));
UNARY_FLOAT(Acosh, Halide::acosh(x));
UNARY_FLOAT(Atanh, Halide::atanh(x));
UNARY_FLOAT(LeakyRelu, Halide::select(x < lit(x, 0), lit(x, fattr(n, "alpha", 0.01f)) * x, x));
UNARY_FLOAT(Elu, Halide::select(x < lit(x, 0), lit(x, fattr(n, "alpha", 1.f)) * (exp_ieee(x) - lit(x, 1)), x));
UNARY_FLOAT(Selu, lit(x, fattr(n, "gamma", 1.05070102214813232421875f)) *
                      Halide::select(x <= lit(x, 0), lit(x, fattr(n, "alpha", 1.67326319217681884765625f)) *
                                                         (exp_ieee(x) - lit(x, 1)), x));
UNARY_FLOAT(Celu, Halide::max(lit(x, 0), x) + Halide::min(lit(x, 0), lit(x, fattr(n, "alpha", 1.f)) *
                                              (exp_ieee(x / lit(x, fattr(n, "alpha", 1.f))) - lit(x, 1))));
UNARY_FLOAT(HardSigmoid, clamp_nan(lit(x, fattr(n, "alpha", 0.2f)) * x + lit(x, fattr(n, "beta", 0.5f)),
                                       lit(x, 0), lit(x, 1)));
// ONNX's HardSwish is x · HardSigmoid(x) with alpha = 1/6 and beta = 0.5: alpha · x in x's type, as
// ONNX's reference computes it, not x / 6 (a division per element in every MobileNetV3 epilogue).
UNARY_FLOAT(HardSwish, x * clamp_nan(lit(x, 1.0 / 6) * x + lit(x, 0.5), lit(x, 0), lit(x, 1)));
UNARY_FLOAT(Softplus, softplus(x));
UNARY_FLOAT(Softsign, x / (lit(x, 1) + Halide::abs(x)));
UNARY_FLOAT(ThresholdedRelu, Halide::select(x > lit(x, fattr(n, "alpha", 1.f)), x, lit(x, 0)));
UNARY_FLOAT(Mish, x * tanh_ieee(softplus(x)));
UNARY_FLOAT(Swish, x * sigmoid(lit(x, fattr(n, "alpha", 1.f)) * x));  // opset 24
UNARY_FLOAT(Gelu, gelu(x, n));
UNARY_FLOAT(Shrink, Halide::select(x < lit(x, -fattr(n, "lambd", 0.5f)), x + lit(x, fattr(n, "bias", 0.f)),
                                   x > lit(x, fattr(n, "lambd", 0.5f)), x - lit(x, fattr(n, "bias", 0.f)),
                                   lit(x, 0)));
UNARY(Relu, max_nan(x, lit(x, 0)));
UNARY(Neg, -x);
UNARY(Abs, x.type().is_uint() ? x : Halide::cast(x.type(), Halide::abs(x)));
UNARY(Sign, sign(x));
UNARY(IsNaN, x.type().is_float() ? Halide::is_nan(x) : Halide::Internal::const_false());
UNARY(IsInf, is_inf(x, n));
UNARY(Not, from_bool(!to_bool(x)));
UNARY(BitwiseNot, ~x);
UNARY(Identity, x);

BINARY(Add, a + b);
BINARY(Sub, a - b);
BINARY(Mul, a * b);
BINARY(Div, divide(a, b));
BINARY(Pow, power(a, b));
BINARY(Equal, a == b);
BINARY(Less, a < b);
BINARY(Greater, a > b);
BINARY(LessOrEqual, a <= b);
BINARY(GreaterOrEqual, a >= b);
BINARY(And, to_bool(a) && to_bool(b));
BINARY(Or, to_bool(a) || to_bool(b));
BINARY(Xor, to_bool(a) != to_bool(b));
BINARY(BitwiseAnd, a & b);
BINARY(BitwiseOr, a | b);
BINARY(BitwiseXor, a ^ b);
BINARY(PRelu, Halide::select(a < lit(a, 0), a * b, a));

Registrar reg_Mod("", "Mod", EW, broadcast_op(false, [](const std::vector<Expr>& v, const ir::Node& n) {
  return modulo(v[0], v[1], n);
}));
Registrar reg_BitShift("", "BitShift", EW, broadcast_op(false, bit_shift));
// SwiGLU (opset 28): Swish(A) * B, the gate's sigmoid scaled by alpha; A and B of one shape.
Registrar reg_SwiGLU("", "SwiGLU", EW, broadcast_op(true, [](const std::vector<Expr>& v, const ir::Node& n) {
  return v[0] * sigmoid(lit(v[0], fattr(n, "alpha", 1.f)) * v[0]) * v[1];
}));
Registrar reg_BitCast("", "BitCast", EW, bit_cast);
Registrar reg_Max("", "Max", EW, variadic(max_nan));
Registrar reg_Min("", "Min", EW, variadic(min_nan));
Registrar reg_Sum("", "Sum", EW, variadic([](Expr a, Expr b) { return a + b; }));
Registrar reg_Mean("", "Mean", EW, variadic([](Expr a, Expr b) { return a + b; }, true));
Registrar reg_Clip("", "Clip", EW, broadcast_op(false, clip));
Registrar reg_Where("", "Where", EW, broadcast_op(false, [](const std::vector<Expr>& v, const ir::Node&) {
  return Halide::select(to_bool(v[0]), v[1], v[2]);
}));
Registrar reg_Cast("", "Cast", EW, cast_op());
Registrar reg_CastLike("", "CastLike", EW, cast_op());
Registrar reg_Dropout("", "Dropout", EW, dropout);

}  // namespace

}  // namespace onnxc::codegen
