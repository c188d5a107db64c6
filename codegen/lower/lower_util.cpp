// Helpers shared by the lowering files (see lower_util.h).
#include "codegen/lower/lower_util.h"

#include "codegen/lower/fast_math.h"

#include "ir/float8.h"

#include <algorithm>
#include <cmath>

namespace onnxc::codegen {

std::vector<Halide::Var> make_vars(int rank) {
  std::vector<Halide::Var> v;
  for (int i = 0; i < rank; ++i) v.emplace_back("d" + std::to_string(i));
  return v;
}

Index onnx_index(const std::vector<Halide::Var>& vars) { return Index(vars.rbegin(), vars.rend()); }

Halide::Expr cast_keep_nan(Halide::Type t, Halide::Expr v) {
  if (!(t.is_float() && t.bits() == 16 && v.type().is_float() && v.type().bits() > 16)) return Halide::cast(t, v);
  Halide::Expr nan = Halide::reinterpret(t, Halide::Expr(static_cast<uint16_t>(t.is_bfloat() ? 0x7fc0 : 0x7e00)));
  return Halide::select(Halide::is_nan(v), nan, Halide::cast(t, v));
}

Halide::Expr max_nan(Halide::Expr a, Halide::Expr b) {
  if (!a.type().is_float()) return Halide::max(a, b);
  return Halide::select(Halide::is_nan(a), a, Halide::is_nan(b), b, Halide::max(a, b));
}

Halide::Expr min_nan(Halide::Expr a, Halide::Expr b) {
  if (!a.type().is_float()) return Halide::min(a, b);
  return Halide::select(Halide::is_nan(a), a, Halide::is_nan(b), b, Halide::min(a, b));
}

Halide::Expr nan_where(const Halide::Expr& cond, const Halide::Expr& value) {
  Halide::Type t = value.type(), bits = Halide::UInt(t.bits());
  uint64_t qnan = t.bits() == 64 ? 0x7ff8000000000000ull : t.bits() == 32 ? 0x7fc00000ull : t.is_bfloat() ? 0x7fc0 : 0x7e00;
  Halide::Expr b = Halide::select(cond, Halide::Internal::make_const(bits, qnan), Halide::reinterpret(bits, value));
  return Halide::reinterpret(t, b);
}

Halide::Expr is_minus_infinity(const Halide::Expr& x) {
  Halide::Type t = x.type(), bits = Halide::UInt(t.bits(), t.lanes());
  uint64_t ninf = t.bits() == 64 ? 0xfff0000000000000ull : t.bits() == 32 ? 0xff800000ull : t.is_bfloat() ? 0xff80 : 0xfc00;
  return Halide::reinterpret(bits, x) == Halide::Internal::make_const(bits, ninf);
}

Halide::Expr is_zero_extent(const Halide::Expr& extent) {
  Halide::Expr e = extent;
  if (const auto* c = e.as<Halide::Internal::Cast>(); c && c->value.as<Halide::Internal::Variable>()) e = c->value;
  // In the simplifier's own form: Halide learns a specialization's condition as the simplified one,
  // and a guard `!condition` folds in the first simplification (before the bounds checks) only
  // where its condition is written exactly so.
  return Halide::Internal::simplify(e == Halide::Internal::make_zero(e.type()));
}

void skip_reads_if_empty(LowerContext& ctx) {
  if (ctx.in.empty() || !ctx.in[0].defined() || ctx.empty_reads_left == 0) return;
  Halide::Expr empty;
  for (const Halide::Expr& e : ctx.in[0].shape) {
    if (Halide::Internal::is_const(e)) continue;
    // Not `extent == 0`, which Halide would substitute into the specialization: a row length of a
    // constant 0 there makes Halide size the row's buffers, at compile time, from split bounds below 0.
    Halide::Expr z = e <= 0;
    empty = empty.defined() ? empty || z : z;
  }
  if (!empty.defined()) return;
  // One condition, in the simplifier's form, which the guards negate as is (see is_zero_extent).
  empty = Halide::Internal::simplify(empty);
  ctx.empty_reads.push_back(empty);
  for (size_t k = 0; k < ctx.in.size(); ++k) {
    const HTensor t = ctx.in[k];
    if (!t.defined()) continue;
    ctx.in[k] = define(t.func.name() + "_unless_empty", t.shape, t.dtype, [&](const Index& i) {
      Halide::Expr v = t.at(i);
      return Halide::select(!empty, v, Halide::Internal::make_zero(v.type()));
    });
  }
}

HTensor define(const std::string& name, std::vector<Halide::Expr> shape, ir::DType dtype,
               const std::function<Halide::Expr(const Index&)>& body) {
  HTensor t;
  t.func = Halide::Func(name);
  t.dtype = dtype;
  auto vars = make_vars(static_cast<int>(shape.size()));
  Halide::Expr v = body(onnx_index(vars));
  Halide::Type ty = halide_type(dtype);
  internal_check(!ir::dtype_is_narrow_float(dtype) || v.type() == ty)
      << name << ": a " << ir::dtype_name(dtype) << " result must be encoded (float8_encode), not cast from " << v.type();
  if (v.type() != ty) v = cast_keep_nan(ty, v);
  std::vector<Halide::Var> args(vars.begin(), vars.end());
  t.func(args) = v;
  t.shape = std::move(shape);
  return t;
}

Halide::Expr broadcast_at(const HTensor& t, const Index& out_idx, const std::vector<Halide::Expr>& out_shape) {
  int r = t.rank(), ro = static_cast<int>(out_idx.size());
  internal_check(r <= ro) << "broadcast_at: input rank " << r << " > output rank " << ro;
  Index idx(r);
  for (int i = 0; i < r; ++i) {
    int o = ro - r + i;
    const Halide::Expr& e = t.shape[i];
    if (Halide::Internal::is_const_one(e)) idx[i] = 0;
    else if (Halide::Internal::equal(e, out_shape[o])) idx[i] = out_idx[o];
    else idx[i] = Halide::min(out_idx[o], e - 1);
  }
  return t.at(idx);
}

int normalize_axis(int64_t axis, int rank, const ir::Node& node) {
  user_check(axis >= -rank && axis < std::max(rank, 1))
      << node.describe() << ": axis " << axis << " is out of range for rank " << rank;
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

ir::DType out_dtype(const LowerContext& ctx, int i) { return ctx.node.output(i)->dtype(); }

const std::vector<Halide::Expr>& out_shape(const LowerContext& ctx, int i) {
  internal_check(i < static_cast<int>(ctx.out_shape.size())) << "no output " << i;
  return ctx.out_shape[i];
}

bool has_input(const LowerContext& ctx, int i) {
  return i < static_cast<int>(ctx.in.size()) && ctx.in[i].defined();
}

std::optional<std::vector<int64_t>> const_ints(const LowerContext& ctx, int i) {
  if (i >= static_cast<int>(ctx.const_in.size()) || !ctx.const_in[i]) return std::nullopt;
  const ir::Tensor& t = *ctx.const_in[i];
  std::vector<int64_t> r(static_cast<size_t>(t.numel()));
  for (int64_t k = 0; k < t.numel(); ++k) r[k] = t.get_i64(k);
  return r;
}

std::optional<std::vector<double>> const_floats(const LowerContext& ctx, int i) {
  if (i >= static_cast<int>(ctx.const_in.size()) || !ctx.const_in[i]) return std::nullopt;
  const ir::Tensor& t = *ctx.const_in[i];
  std::vector<double> r(static_cast<size_t>(t.numel()));
  for (int64_t k = 0; k < t.numel(); ++k) r[k] = t.get_f64(k);
  return r;
}

Halide::Expr literal(Halide::Type t, double v) {
  if (t.is_float()) return Halide::cast(t, Halide::Expr(v));
  if (t.is_uint()) return Halide::Internal::make_const(t, static_cast<uint64_t>(static_cast<int64_t>(v)));
  return Halide::Internal::make_const(t, static_cast<int64_t>(v));
}

Halide::Expr element(const LowerContext& ctx, int i, int k) {
  internal_check(has_input(ctx, i)) << ctx.node.describe() << ": input " << i << " is absent";
  const HTensor& t = ctx.in[i];
  Halide::Type ty = halide_type(t.dtype);
  if (i < static_cast<int>(ctx.const_in.size()) && ctx.const_in[i]) {
    const ir::Tensor& c = *ctx.const_in[i];
    internal_check(k < c.numel()) << ctx.node.describe() << ": element " << k << " of input " << i;
    if (ty.is_float()) return literal(ty, c.get_f64(k));
    return Halide::Internal::make_const(ty, c.get_i64(k));
  }
  if (t.rank() == 0) return t.func();
  internal_check(t.rank() == 1) << ctx.node.describe() << ": input " << i << " must be 1-D";
  return t.at({Halide::Expr(k)});
}

Halide::Expr element_i32(const LowerContext& ctx, int i, int k) {
  Halide::Expr e = element(ctx, i, k);
  if (e.type().is_uint() && e.type().bits() >= 32)
    e = Halide::min(e, Halide::Internal::make_const(e.type(), INT32_MAX / 2));
  else if (e.type().bits() > 32)
    e = Halide::clamp(e, Halide::Internal::make_const(e.type(), INT32_MIN / 2),
                      Halide::Internal::make_const(e.type(), INT32_MAX / 2));
  return Halide::Internal::simplify(Halide::cast(Halide::Int(32), e));
}

Halide::Type accumulator_type(Halide::Type t) {
  if (t.is_float() && t.bits() < 32) return Halide::Float(32);
  if (t.is_bfloat()) return Halide::Float(32);
  return t;
}

RowSpace::RowSpace(const HTensor& x, const std::vector<int>& reduced) {
  int rank = x.rank();
  vars = make_vars(rank);
  idx = onnx_index(vars);
  std::vector<Halide::Range> ranges;
  for (int a : reduced) ranges.emplace_back(0, x.shape[a]);
  if (!ranges.empty()) r = Halide::RDom(Halide::Region(ranges.begin(), ranges.end()));
  ridx = idx;
  for (size_t k = 0; k < reduced.size(); ++k) ridx[reduced[k]] = r[static_cast<int>(k)];
  for (int h = 0; h < rank; ++h)
    if (std::find(reduced.begin(), reduced.end(), rank - 1 - h) == reduced.end()) stat_vars.push_back(vars[h]);
  bool trailing = !reduced.empty() && reduced.back() == rank - 1 && reduced.front() == rank - static_cast<int>(reduced.size());
  for (size_t k = 1; trailing && k < reduced.size(); ++k) trailing = reduced[k] == reduced[k - 1] + 1;
  reduced_inner = trailing ? static_cast<int>(reduced.size()) : 0;
}

std::vector<Halide::Expr> RowSpace::at(const Index& onnx) {
  return std::vector<Halide::Expr>(onnx.rbegin(), onnx.rend());
}

// f32 takes fast_math's exp; f64 calls libm, which is IEEE already.
Halide::Expr exp_ieee(const Halide::Expr& x) {
  if (x.type() != Halide::Float(32)) return Halide::exp(x);
  return exp_f32(x);
}

Halide::Expr log_ieee(const Halide::Expr& x) {
  if (x.type() != Halide::Float(32)) return Halide::log(x);
  return Halide::select(Halide::is_nan(x) || x == literal(x.type(), INFINITY), x, Halide::log(x));
}

Halide::Expr erf_ieee(const Halide::Expr& x) {
  if (x.type() != Halide::Float(32)) return Halide::erf(x);
  Halide::Expr lim = literal(x.type(), 8);  // erf(8) is 1 in float and double
  return Halide::select(Halide::is_nan(x), x, Halide::erf(Halide::clamp(x, -lim, lim)));
}

// |x| < 0.625: x + x^3 P(x^2), P a degree-4 minimax fit of (tanh(a) - a) / a^3 (relative error of
// tanh under 0.8 ulp there; no cancellation, and subnormals come out as x). Above: 1 - 2/(e^2a + 1),
// where the result is >= 0.55 so the subtraction loses little (under 1.6 ulp with Halide's exp);
// the argument is capped at 9.5, past which that form already rounds to 1 (tanh(a) does from
// a = 9.01). The branches work on |x|; the sign bit of x is put back last, so -0 gives -0.
Halide::Expr tanh_ieee(const Halide::Expr& x) {
  if (x.type() != Halide::Float(32)) return Halide::tanh(x);
  auto f = [](float v) { return Halide::Expr(v); };
  Halide::Expr a = Halide::abs(x), t = a * a;
  const float p[] = {-0.3333328366279602f, 0.13331511616706848f, -0.053744539618492126f,
                     0.02065279521048069f, -0.005718637723475695f};
  Halide::Expr poly = f(p[4]);
  for (int i = 3; i >= 0; --i) poly = poly * t + f(p[i]);
  Halide::Expr small = a + a * (t * poly);
  Halide::Expr big = f(1) - f(2) / (exp_f32(f(2) * Halide::min(a, f(9.5f))) + f(1));
  // NaN is tested explicitly: the simplifier may flip a comparison, and min(NaN, 9.5) is 9.5.
  Halide::Expr r = Halide::select(Halide::is_nan(x), x, a < f(0.625f), small, big);
  Halide::Type u = Halide::UInt(32);
  Halide::Expr sign = Halide::reinterpret(u, x) & Halide::Internal::make_const(u, uint64_t{0x80000000u});
  return Halide::reinterpret(x.type(), Halide::reinterpret(u, r) | sign);
}

// Every buffer the runtime passes a kernel is dense, starting at 0, with the extents of the kernel's
// IR shape (execute.c builds them so). Saying so lets the simplifier make strides constants where
// the shape is static: a GEMM's eight rows of A become one pointer and eight immediate offsets
// instead of row addresses computed in vector registers and moved out one by one. Halide checks
// the constraints on entry, so a caller passing anything else gets an error, not a wrong result.
// Extents themselves are left to the run time: Halide 14 asserts (CodeGen_LLVM, "base >= 0") on a
// reversed vector load whose guarded tail starts at a constant negative offset, which constant
// extents produce for CumSum(reverse=1) over a static axis.
void constrain_dense(const Halide::OutputImageParam& p, const std::vector<Halide::Expr>& onnx_shape) {
  const int r = p.dimensions();
  internal_check(static_cast<int>(onnx_shape.size()) == r) << "buffer " << p.name() << ": rank mismatch";
  Halide::Expr stride = 1;
  for (int d = 0; d < r; ++d) {
    p.dim(d).set_min(0).set_stride(stride);
    stride = Halide::Internal::simplify(stride * onnx_shape[static_cast<size_t>(r - 1 - d)]);
  }
}

void constrain_rows(const Halide::OutputImageParam& p) {
  for (int d = 0; d < p.dimensions(); ++d) p.dim(d).set_min(0);
  if (p.dimensions() > 0) p.dim(0).set_stride(1);
}

}  // namespace onnxc::codegen
