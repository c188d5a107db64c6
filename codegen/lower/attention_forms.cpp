// The seeds' attention forms, onnxc domain, one kernel each, on rank-3 operands
// Q [B, Tq, Dq], K [B, S, Dk], V [B, S, Dv] -> Y [B, Tq, Dv] and (optional) weights W [B, Tq, S]:
//   onnxc.AdditiveAttention  score = Σ_a v[a]·tanh(Q[a] + K[a]) (+ c)         (Bahdanau; Q, K projected)
//   onnxc.CosineAttention    score = β·(q·k) / max(sqrt(|q|²·|k|²), eps)      (NTM content addressing)
//   onnxc.KernelAttention    score = -Σ_d ((q_d - k_d)·w)² / 2                 (Nadaraya–Watson)
// then an optional boolean mask (false: the score becomes `mask_fill`, as masked_fill does), a
// softmax over S and Y = Σ_s W·V. Each score keeps the op order the model wrote (strict IEEE).
#include "codegen/lower/lower_util.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// Element of a rank-3 operand at (b, t, d), broadcasting size-1 dims (a query of one step, say).
Expr at3(const HTensor& t, Expr b, Expr i, Expr d) {
  Index idx = {std::move(b), std::move(i), std::move(d)};
  for (int k = 0; k < 3; ++k)
    if (Halide::Internal::is_const_one(t.shape[k])) idx[k] = 0;
  return t.at(idx);
}

struct Operands {
  HTensor q, k, v;
  Expr batch, tq, s, dq, dv;
  Halide::Type at;
};

Operands operands(LowerContext& ctx) {
  Operands o{ctx.in[0], ctx.in[1], ctx.in[2], {}, {}, {}, {}, {}, Halide::Float(32)};
  for (const HTensor* t : {&o.q, &o.k, &o.v})
    user_check(t->rank() == 3) << ctx.node.describe() << ": Q, K and V must be rank 3 [batch, length, features]";
  const auto& y = out_shape(ctx);
  o.batch = y[0];
  o.tq = y[1];
  o.dv = y[2];
  o.s = o.k.shape[1];
  o.dq = o.q.shape[2];
  if (halide_type(o.v.dtype) == Halide::Float(64)) o.at = Halide::Float(64);
  return o;
}

// Mask, softmax over s, weighted sum of V. `score(s, i, b)` is in Halide order.
std::vector<HTensor> finish(LowerContext& ctx, const Operands& o, Func score, int mask_input) {
  Var s("s"), i("i"), b("b"), d("d");
  Func masked("attn_masked");
  Expr sc = score(s, i, b);
  if (has_input(ctx, mask_input)) {
    const HTensor& m = ctx.in[mask_input];
    Expr keep = to_bool(broadcast_at(m, {b, i, s}, {o.batch, o.tq, o.s}));
    Expr fill = literal(o.at, ctx.node.attr_float("mask_fill", -INFINITY));
    sc = Halide::select(keep, sc, fill);
  }
  masked(s, i, b) = sc;
  Halide::RDom r(0, o.s, "r");
  Func mx("attn_max"), ex("attn_exp"), sum("attn_sum"), w("attn_weights"), y("attn_out");
  mx(i, b) = o.at.min();
  mx(i, b) = Halide::max(mx(i, b), masked(r, i, b));
  ex(s, i, b) = exp_ieee(masked(s, i, b) - mx(i, b));
  sum(i, b) = Halide::Internal::make_zero(o.at);
  sum(i, b) += ex(r, i, b);
  w(s, i, b) = ex(s, i, b) / sum(i, b);
  y(d, i, b) = Halide::Internal::make_zero(o.at);
  y(d, i, b) += w(r, i, b) * Halide::cast(o.at, at3(o.v, b, r, d));
  Func yo("attn_y"), wo("attn_w");
  Halide::Type ot = halide_type(out_dtype(ctx));
  yo(d, i, b) = Halide::cast(ot, y(d, i, b));
  std::vector<Func> stages = {masked, mx, ex, sum, w, y};
  ctx.schedule = [stages](Func out, const Halide::Target& t) {
    for (Func f : stages) f.compute_root();
    schedule_output(out, KernelClass::Elementwise, t);
  };
  std::vector<HTensor> outs = {HTensor{yo, {o.batch, o.tq, o.dv}, out_dtype(ctx)}};
  if (ctx.node.output(1)) {
    wo(s, i, b) = Halide::cast(halide_type(out_dtype(ctx, 1)), w(s, i, b));
    outs.push_back(HTensor{wo, {o.batch, o.tq, o.s}, out_dtype(ctx, 1)});
  }
  return outs;
}

Expr cast_at(const Operands& o, Expr e) { return Halide::cast(o.at, std::move(e)); }

// Inputs: Q, K, V, v [A], mask?, c? (a scalar added to every score).
std::vector<HTensor> additive(LowerContext& ctx) {
  Operands o = operands(ctx);
  const HTensor& va = ctx.in[3];
  Var s("s"), i("i"), b("b");
  Halide::RDom a(0, o.dq, "a");
  Func score("additive_score");
  score(s, i, b) = Halide::Internal::make_zero(o.at);
  score(s, i, b) += cast_at(o, va.at({a.x})) * tanh_ieee(cast_at(o, at3(o.q, b, i, a.x)) + cast_at(o, at3(o.k, b, s, a.x)));
  Func biased("additive_biased");
  biased(s, i, b) = has_input(ctx, 5) ? score(s, i, b) + cast_at(o, ctx.in[5].at(Index(ctx.in[5].rank(), Expr(0))))
                                      : score(s, i, b);
  return finish(ctx, o, biased, 4);
}

// Inputs: Q, K, V, beta? (broadcastable to [B, Tq, 1]), mask?. Attribute eps.
std::vector<HTensor> cosine(LowerContext& ctx) {
  Operands o = operands(ctx);
  Expr eps = literal(o.at, ctx.node.attr_float("eps", 1e-8f));
  Var s("s"), i("i"), b("b");
  Halide::RDom r(0, o.dq, "r");
  Func dot("cos_dot"), qq("cos_qq"), kk("cos_kk");
  auto qv = [&](Expr bb, Expr ii, Expr dd) { return cast_at(o, at3(o.q, bb, ii, dd)); };
  auto kv = [&](Expr bb, Expr ss, Expr dd) { return cast_at(o, at3(o.k, bb, ss, dd)); };
  dot(s, i, b) = Halide::Internal::make_zero(o.at);
  dot(s, i, b) += kv(b, s, r.x) * qv(b, i, r.x);
  qq(i, b) = Halide::Internal::make_zero(o.at);
  qq(i, b) += qv(b, i, r.x) * qv(b, i, r.x);
  kk(s, b) = Halide::Internal::make_zero(o.at);
  kk(s, b) += kv(b, s, r.x) * kv(b, s, r.x);
  Func score("cos_score");
  Expr cos = dot(s, i, b) / Halide::max(Halide::sqrt(kk(s, b) * qq(i, b)), eps);
  if (has_input(ctx, 3)) cos = cast_at(o, broadcast_at(ctx.in[3], {b, i, Expr(0)}, {o.batch, o.tq, 1})) * cos;
  score(s, i, b) = cos;
  return finish(ctx, o, score, 4);
}

// Inputs: Q, K, V, w (one element), mask?.
std::vector<HTensor> kernel_pooling(LowerContext& ctx) {
  Operands o = operands(ctx);
  Expr w = cast_at(o, ctx.in[3].at(Index(ctx.in[3].rank(), Expr(0))));
  Var s("s"), i("i"), b("b");
  Func score("kernel_score");
  if (Halide::Internal::is_const_one(o.dq)) {  // the usual scalar kernel: -((q - k)·w)² / 2
    Expr dw = (cast_at(o, at3(o.q, b, i, 0)) - cast_at(o, at3(o.k, b, s, 0))) * w;
    score(s, i, b) = -(dw * dw) / literal(o.at, 2);
  } else {
    Halide::RDom r(0, o.dq, "r");
    Func ss("kernel_sqdist");
    ss(s, i, b) = Halide::Internal::make_zero(o.at);
    Expr dw = (cast_at(o, at3(o.q, b, i, r.x)) - cast_at(o, at3(o.k, b, s, r.x))) * w;
    ss(s, i, b) += dw * dw;
    score(s, i, b) = -ss(s, i, b) / literal(o.at, 2);
  }
  return finish(ctx, o, score, 4);
}

const Registrar kAdditive("onnxc", "AdditiveAttention", KernelClass::Attention, additive);
const Registrar kCosine("onnxc", "CosineAttention", KernelClass::Attention, cosine);
const Registrar kKernel("onnxc", "KernelAttention", KernelClass::Attention, kernel_pooling);

}  // namespace

}  // namespace onnxc::codegen
