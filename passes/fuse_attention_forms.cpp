// fuse_attention_forms: the seeds' attention forms -> one onnxc op each, run by one kernel
// (codegen/lower/attention_forms.cpp), family "attention". Luong's general and dot scores are
// scaled dot-product attention with one head and scale 1: the attention rule's.
//
//   additive (Bahdanau):  Add(Q, K) ─▶ Tanh ─▶ MatMul(·, v[A,1]) ─▶ [Add c] ─▶ [Squeeze+Unsqueeze]
//                          ─▶ [Where(cond, fill, ·)] ─▶ Softmax ─▶ MatMul(·, V)
//                        (or scores squeezed to [B, S], masked and softmaxed there, and the weights
//                        unsqueezed to [B, 1, S] before the MatMul: the decoder-cell spelling)
//   cosine (NTM):   ReduceSum(K·Q) / Max(Sqrt(ReduceSum(K·K)·ReduceSum(Q·Q)), eps) ─▶ [Mul β]
//                          ─▶ Softmax ─▶ [Unsqueeze] ─▶ MatMul(·, V)
//   kernel (Nadaraya–Watson):  Sub([Tile] q, k) ─▶ Mul w ─▶ d·d ─▶ Neg ─▶ ·½ ─▶ Softmax ─▶ [Unsqueeze] ─▶ MatMul(·, V)
//
// The fused op takes rank-3 Q [B, Tq, D], K [B, S, D], V [B, S, Dv] and gives Y [B, Tq, Dv] and the
// weights [B, Tq, S]; when the model also uses the softmax (it returns the attention weights), that
// value is taken from the fused op too, so nothing is computed twice.
#include "passes/fuse_attention_forms.h"

#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

using namespace pat;
using ir::Dim;
using ir::Value;

const ir::Shape* shape(const Value* v) { return v && v->shape() ? &*v->shape() : nullptr; }
int rank(const Value* v) { return shape(v) ? static_cast<int>(shape(v)->size()) : -1; }
Dim dim(const Value* v, int i) { return (*shape(v))[i < 0 ? rank(v) + i : i]; }

// Softmax over the last axis (canonicalize gives every Softmax opset-13 semantics).
Pattern softmax_last(const Pattern& x) {
  return op("Softmax", {x}).where_node([](const ir::Node& n) {
    int64_t axis = n.attr_int("axis", -1);
    int r = rank(n.input(0));
    return axis == -1 || (r > 0 && axis == r - 1) ? std::string() : std::string("Softmax is not over the last axis");
  });
}

// The weighted sum of values: MatMul(W, V), W maybe made rank 3 by an Unsqueeze.
Pattern weighted_sum(const Pattern& weights) {
  return op("MatMul", {alt({op("Unsqueeze", {weights, any()}), weights}), any().capture("v")});
}

ir::Value* axes(RewriteBuilder& b, const std::vector<int64_t>& a) { return b.constant(i64_tensor(a), "axes"); }

// Replaces the match root by output 0 of `fused` and, when the softmax `w` is used outside the
// match, `w` by output 1 (squeezed back to w's rank).
void replace_outputs(const Match& m, RewriteBuilder& b, ir::Node* fused) {
  b.replace({m.root()}, "Identity", {fused->output(0)});
  Value* w = m["w"];
  if (w->uses().size() <= 1 && !w->is_graph_output()) return;
  if (rank(w) == 3) b.replace({w}, "Identity", {fused->output(1)});
  else b.replace({w}, "Squeeze", {fused->output(1), axes(b, {1})});
}

bool outputs_needed(const Match& m) { return m["w"]->uses().size() > 1 || m["w"]->is_graph_output(); }

// ---- additive ----

Pattern additive_pattern() {
  Pattern tanh = op("Tanh", {op("Add", {any().capture("qa"), any().capture("ka")})});
  Pattern proj = op("MatMul", {tanh, any().constant().capture("va")}).capture("score0");
  Pattern biased = alt({op("Add", {proj, any().constant().scalar().capture("c")}), proj});
  Pattern layout = alt({op("Unsqueeze", {op("Squeeze", {biased, any()}), any()}), op("Transpose", {biased}),
                        op("Reshape", {biased, any()}), op("Squeeze", {biased, any()}), biased})
                       .capture("scores");
  Pattern masked = alt({op("Where", {any().capture("cond"), any().constant().scalar().capture("fill"), layout}), layout});
  return weighted_sum(softmax_last(masked).capture("w"));
}

// Which of the Add's operands is the query: the one of length 1 (one decoder step).
bool query_first(const Match& m) { return rank(m["qa"]) == 3 && dim(m["qa"], 1) == Dim(1); }

std::string additive_check(const Match& m, const FusionContext&) {
  Value *q = m["qa"], *k = m["ka"];
  if (!query_first(m)) std::swap(q, k);
  for (const Value* v : {q, k, m["v"], m["score0"]})
    if (rank(v) != 3) return "Q, K, V and the scores are not all rank 3";
  if (dim(q, 1) != Dim(1)) return "the query is not one step (its length is not 1)";
  Dim s = dim(k, 1);
  // The scores are [B, 1, S], or [B, S] (one query row, squeezed away before the softmax).
  bool rows = rank(m["scores"]) == 3 && dim(m["scores"], 1) == Dim(1) && dim(m["scores"], 2) == s;
  bool squeezed = rank(m["scores"]) == 2 && dim(m["scores"], 0) == dim(q, 0) && dim(m["scores"], 1) == s;
  if (dim(m["score0"], 1) != s || dim(m["score0"], 2) != Dim(1) || !(rows || squeezed))
    return "the scores are not [batch, keys, 1] turned into [batch, 1, keys] or [batch, keys]";
  const ir::Tensor& va = m["va"]->constant();
  if (va.dims().size() != 2 || va.dims()[1] != 1 || dim(q, 2) != Dim(va.dims()[0]) || dim(k, 2) != dim(q, 2))
    return "v is not [A, 1] with Q and K of width A";
  if (dim(m["v"], 1) != s) return "the values are not one per key";
  if (m.has("cond") && (m["cond"]->dtype() != ir::DType::Bool || rank(m["cond"]) > rank(m["scores"])))
    return "the mask is not a bool tensor that broadcasts to the scores";
  return "";
}

void additive_rewrite(const Match& m, RewriteBuilder& b) {
  Value *q = m["qa"], *k = m["ka"];
  if (!query_first(m)) std::swap(q, k);
  ir::Tensor va = m["va"]->constant();
  ir::Value* v1 = b.constant(va.reshaped({va.dims()[0]}), "additive_v");
  std::vector<ir::Value*> in = {q, k, m["v"], v1, nullptr, nullptr};
  std::vector<ir::Attribute> attrs;
  if (m.has("cond")) {
    Value* cond = m["cond"];
    // A mask over [B, S] scores gets their query axis back, so it broadcasts as it did.
    if (rank(m["scores"]) == 2 && rank(cond) == 2) cond = b.add("Unsqueeze", {cond, axes(b, {1})})->output(0);
    in[4] = b.add("Not", {cond})->output(0);
    attrs.push_back(RewriteBuilder::attr("mask_fill", static_cast<float>(m["fill"]->constant().get_f64(0))));
  }
  if (m.has("c")) in[5] = m["c"];
  while (!in.back()) in.pop_back();
  replace_outputs(m, b, b.add("AdditiveAttention", in, attrs, outputs_needed(m) ? 2 : 1, "onnxc"));
}

// ---- cosine ----

Pattern cosine_pattern() {
  Pattern k = any().capture("k"), q = any().capture("q");
  auto rsum = [](const Pattern& a, const Pattern& c, const std::string& name) {
    return op("ReduceSum", {op("Mul", {a, c}), any().constant().capture(name)}).attr("keepdims", 0, 1);
  };
  Pattern norms = op("Mul", {rsum(k, k, "axes_k"), rsum(q, q, "axes_q")});
  Pattern cos = op("Div", {rsum(k, q, "axes_d"), op("Max", {op("Sqrt", {norms}), any().constant().scalar().capture("eps")})});
  Pattern sharp = alt({op("Mul", {any().capture("beta"), cos}), cos}).capture("scores");
  return weighted_sum(softmax_last(sharp).capture("w"));
}

std::string cosine_check(const Match& m, const FusionContext& c) {
  Value *q = m["q"], *k = m["k"];
  if (rank(q) == 3 && rank(k) == 3 && dim(k, 1) == Dim(1)) std::swap(q, k);
  if (rank(q) != 3 || rank(k) != 3 || rank(m["v"]) != 3 || rank(m["scores"]) != 2)
    return "not keys [B, S, D] against one query [B, 1, D] with scores [B, S]";
  if (dim(q, 1) != Dim(1)) return "the query is not one row (its length is not 1)";
  for (const char* a : {"axes_k", "axes_q", "axes_d"})
    if (!c.axes_are_last(q, m[a])) return "a sum is not over the feature axis";
  if (dim(m["v"], 1) != dim(k, 1)) return "the values are not one per key";
  if (m.has("beta") && (rank(m["beta"]) > 2 || (rank(m["beta"]) >= 1 && dim(m["beta"], -1) != Dim(1))))
    return "the sharpness is not one value per row";
  return "";
}

void cosine_rewrite(const Match& m, RewriteBuilder& b) {
  Value *q = m["q"], *k = m["k"];
  if (dim(k, 1) == Dim(1)) std::swap(q, k);
  std::vector<ir::Value*> in = {q, k, m["v"]};
  if (m.has("beta")) {
    Value* beta = m["beta"];
    if (rank(beta) == 2) beta = b.add("Unsqueeze", {beta, axes(b, {1})})->output(0);
    in.push_back(beta);
  }
  float eps = static_cast<float>(m["eps"]->constant().get_f64(0));
  replace_outputs(m, b, b.add("CosineAttention", in, {RewriteBuilder::attr("eps", eps)}, outputs_needed(m) ? 2 : 1, "onnxc"));
}

// ---- Nadaraya–Watson ----

Pattern kernel_pattern() {
  Pattern row = any().capture("q1");
  Pattern q = alt({op("Tile", {row, any()}), op("Expand", {row, any()}), row}).capture("q");
  Pattern d = op("Mul", {op("Sub", {q, any().capture("k")}), any().constant().scalar().capture("wk")});
  Pattern sq = op("Mul", {d, d});
  Pattern half = alt({op("Mul", {op("Neg", {sq}), const_value(0.5)}), op("Div", {op("Neg", {sq}), const_value(2.0)}),
                      op("Neg", {op("Mul", {sq, const_value(0.5)})})});
  return weighted_sum(softmax_last(half.capture("scores")).capture("w"));
}

std::string kernel_check(const Match& m, const FusionContext&) {
  Value *q1 = m["q1"], *k = m["k"];
  if (rank(k) != 2 || rank(q1) != 2 || rank(m["v"]) != 3) return "not queries [N, 1] against keys [N, M]";
  if (dim(q1, 1) != Dim(1) || dim(q1, 0) != dim(k, 0)) return "the queries are not one per row of keys";
  if (m["q"] != q1 && *shape(m["q"]) != *shape(k)) return "the tiled queries are not shaped like the keys";
  if (dim(m["v"], 1) != dim(k, 1)) return "the values are not one per key";
  return "";
}

void kernel_rewrite(const Match& m, RewriteBuilder& b) {
  Value* q3 = b.add("Unsqueeze", {m["q1"], axes(b, {2})})->output(0);
  Value* k3 = b.add("Unsqueeze", {m["k"], axes(b, {2})})->output(0);
  replace_outputs(m, b, b.add("KernelAttention", {q3, k3, m["v"], m["wk"]}, {}, outputs_needed(m) ? 2 : 1, "onnxc"));
}

// `near_miss`: how many op nodes a failed attempt must match to be reported. Every scaled
// dot-product attention matches MatMul <- Softmax <- Add/Mul (3-4 nodes) of these patterns; only
// an attempt that reaches the form's own ops (Tanh, the cosine's norms, the kernel's square) is a
// near miss worth naming.
FusionRule rule(std::string name, Pattern p, decltype(FusionRule::check) check, decltype(FusionRule::rewrite) rw,
                int near_miss) {
  FusionRule r{std::move(name), "attention", std::move(p), std::move(check), std::move(rw), 0};
  r.allow_shared_interior = true;  // the weights are often returned too; the fused op gives them
  r.near_miss_min_matched = near_miss;
  return r;
}

}  // namespace

std::vector<FusionRule> attention_form_rules() {
  return {rule("additive_attention", additive_pattern(), additive_check, additive_rewrite, 5),
          rule("cosine_attention", cosine_pattern(), cosine_check, cosine_rewrite, 6),
          rule("kernel_attention", kernel_pattern(), kernel_check, kernel_rewrite, 5)};
}

}  // namespace onnxc::passes
