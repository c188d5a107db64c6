// Dynamic int8 quantization of constant-weight products (see quantize_dynamic_int8.h).
#include "passes/quantize_dynamic_int8.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "passes/rewrite.h"
#include "passes/weight_product.h"

namespace onnxc::passes {
namespace {

constexpr int64_t kMinDim = 16;  // smaller products are not worth quantizing

// W [K, N] (or [N, K] when transposed) as per-column integers in -qmax..qmax (int8 for qmax 127,
// else int16) and scales; false if W is not finite.
bool quantize_weight(const ir::Tensor& w, bool transposed, int qmax, ir::Tensor& q, ir::Tensor& scale) {
  const int64_t k_ext = transposed ? w.dims()[1] : w.dims()[0];
  const int64_t n_ext = transposed ? w.dims()[0] : w.dims()[1];
  const auto* src = static_cast<const float*>(w.raw());
  auto at = [&](int64_t k, int64_t n) { return transposed ? src[n * k_ext + k] : src[k * n_ext + n]; };
  const bool narrow = qmax <= 127;
  q = ir::Tensor(narrow ? ir::DType::Int8 : ir::DType::Int16, {k_ext, n_ext});
  scale = ir::Tensor(ir::DType::Float32, {n_ext});
  auto* sv = scale.mutable_data<float>();
  const float top = static_cast<float>(qmax);
  for (int64_t n = 0; n < n_ext; ++n) {
    float amax = 0;
    for (int64_t k = 0; k < k_ext; ++k) {
      float x = at(k, n);
      if (!std::isfinite(x)) return false;
      amax = std::max(amax, std::fabs(x));
    }
    const float s = amax > 0 ? amax / top : 1.0f;
    sv[n] = s;
    for (int64_t k = 0; k < k_ext; ++k) {
      float r = std::max(-top, std::min(top, std::nearbyint(at(k, n) / s)));  // round half to even
      if (narrow) q.mutable_data<int8_t>()[k * n_ext + n] = static_cast<int8_t>(r);
      else q.mutable_data<int16_t>()[k * n_ext + n] = static_cast<int16_t>(r);
    }
  }
  return true;
}

// Whether `a` is an attention output (the heads' contexts side by side), seen through views: the
// fused Attention node, or the materialized softmax(..)·V product. Such rows get wide levels (see
// quantize_node).
bool is_attention_context(const ir::Value* a) {
  static const std::set<std::string> views = {"Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
  for (int depth = 0; depth < 8 && a && a->producer(); ++depth) {
    const ir::Node* p = a->producer();
    if (p->op_type() == "Attention" || p->op_type() == "MultiHeadAttention") return true;
    if (p->domain().empty() && p->op_type() == "MatMul") return produced_by_op(p->input(0), "Softmax");
    if (!p->domain().empty() || !views.count(p->op_type())) return false;
    a = p->input(0);
  }
  return false;
}

// The products that qualify, in the order quantize_in meets them, with each one's weight error and
// size (K·N: the multiply-adds per row of A, the same M for a model's products in the usual case).
struct Candidate {
  const ir::Node* node;
  double error;
  double size;
};

double column_error(const ir::Tensor& w, bool transposed) {
  const int64_t k_ext = transposed ? w.dims()[1] : w.dims()[0];
  const int64_t n_ext = transposed ? w.dims()[0] : w.dims()[1];
  const auto* src = static_cast<const float*>(w.raw());
  auto at = [&](int64_t k, int64_t n) { return transposed ? src[n * k_ext + k] : src[k * n_ext + n]; };
  double err = 0, norm = 0;
  for (int64_t n = 0; n < n_ext; ++n) {
    float amax = 0;
    for (int64_t k = 0; k < k_ext; ++k) amax = std::max(amax, std::fabs(at(k, n)));
    if (!(amax > 0)) continue;
    const float s = amax / 127.0f;
    for (int64_t k = 0; k < k_ext; ++k) {
      const float x = at(k, n);
      const double d = static_cast<double>(x) - static_cast<double>(s * std::nearbyint(x / s));
      err += d * d;
      norm += static_cast<double>(x) * x;
    }
  }
  return norm > 0 ? std::sqrt(err / norm) : 0;
}

// The weight product n computes, if it is one this pass rewrites (see the header).
std::optional<WeightProduct> quantizable(const ir::Node& n) {
  std::optional<WeightProduct> p = match_weight_product(n, kMinDim);
  const ir::Shape* as = p ? shape_of(p->a) : nullptr;
  if (!as || as->size() != 2 || n.output(0)->is_graph_output()) return std::nullopt;
  return p;
}

void collect(const ir::Graph& g, std::vector<Candidate>& out) {
  for (const ir::Node* n : g.nodes()) {
    for (const ir::Graph* sg : n->subgraphs()) collect(*sg, out);
    std::optional<WeightProduct> p = quantizable(*n);
    if (!p || is_attention_context(p->a)) continue;  // wide already
    const ir::Tensor& w = p->w->constant();
    const double size = static_cast<double>(w.dims()[0]) * static_cast<double>(w.dims()[1]);
    out.push_back({n, column_error(w, p->trans_b), size});
  }
}

// The products whose int8 weights lose the most, taken worst first while their sizes add up to at
// most opt.wide_budget of all the int8 products' (a product that would pass it is skipped and a
// smaller one after it may still fit); a weight that int8 holds exactly is never taken.
std::set<const ir::Node*> choose_wide(const ir::Graph& g, const Int8Options& opt) {
  std::vector<Candidate> all;
  collect(g, all);
  double total = 0;
  for (const Candidate& c : all) total += c.size;
  std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) { return a.error > b.error; });
  std::set<const ir::Node*> chosen;
  double used = 0;
  for (const Candidate& c : all) {
    if (!(c.error > 0) || used + c.size > opt.wide_budget * total) continue;
    used += c.size;
    chosen.insert(c.node);
  }
  return chosen;
}

bool quantize_node(ir::Graph& g, ir::Node* n, const Int8Options& opt, const std::set<const ir::Node*>& chosen) {
  std::optional<WeightProduct> p = quantizable(*n);
  if (!p) return false;
  ir::Value* y = n->output(0);
  const int64_t k_ext = p->k;
  // An attention output's row holds every head's context, each a weighted average of that head's
  // values: one 256-level range set by the widest head leaves the others few levels, and this
  // product's int8 weight alone moved BERT's error from 2.94% to 3.3%. Such a product keeps both
  // operands wide instead, in the int16 pairs the kernel sums exactly in int32 (half the rate of
  // four-byte dot products, twice float32's): weights in ±sqrt(2^31 / K) (±1672 for K = 768) and
  // rows in as many levels as keep K·levels·max|q_w| below 2^31 (quant_matmul.cpp).
  // With opt.int16_pairs (the target sums int16 pairs anyway) every product takes that form: the
  // same kernel and weight bytes, three to six more bits of row and weight (BERT 2.7% -> 0.4%).
  // Otherwise `chosen` (choose_wide) names the products whose int8 weights lose most.
  const bool wide = opt.int16_pairs || is_attention_context(p->a) || chosen.count(n) > 0;
  const int qmax = wide ? static_cast<int>(std::min(32767.0, std::floor(std::sqrt(2147483647.0 / static_cast<double>(k_ext))))) : 127;
  ir::Tensor q, scale;
  if (!quantize_weight(p->w->constant(), p->trans_b, qmax, q, scale)) return false;

  ir::Value* qw = g.add_initializer(g.unique_name(p->w->name() + (wide ? "/int16" : "/int8")), std::move(q));
  ir::Value* sw = g.add_initializer(g.unique_name(p->w->name() + "/int8_scale"), std::move(scale));
  ir::Value* bias = p->bias ? scaled_bias(g, *p, p->bias->constant().dims()) : nullptr;
  ir::Node* mm = g.insert_node_before(n, "DynamicQuantMatMul", {p->a, qw, sw}, {g.unique_name(y->name() + "/int8")}, "onnxc");
  if (wide) mm->set_attr_int("wide_rows", 1);
  ir::Value* out = mm->output(0);
  out->set_type(y->type());  // typed now, so a product that reads it is rewritten in this same run
  if (bias) {
    out = g.insert_node_before(n, "Add", {out, bias}, {g.unique_name(y->name() + "/bias")})->output(0);
    out->set_type(y->type());
  }
  g.replace_all_uses(y, out);
  g.remove_node(n);
  return true;
}

bool quantize_in(ir::Graph& g, const Int8Options& opt, const std::set<const ir::Node*>& chosen) {
  bool changed = false;
  for (ir::Node* n : g.nodes()) {
    for (ir::Graph* sg : n->subgraphs()) changed |= quantize_in(*sg, opt, chosen);
    changed |= quantize_node(g, n, opt, chosen);
  }
  return changed;
}

class QuantizeInt8Pass : public Pass {
 public:
  bool run(ir::Model& m) override { return quantize_dynamic_int8(m, Int8Options{}); }
  bool run(ir::Model& m, PassContext& ctx) override {
    Int8Options opt;
    opt.int16_pairs = ctx.options.count("quantize_dynamic_int8.int16_pairs") > 0;
    if (auto it = ctx.options.find("quantize_dynamic_int8.wide_budget"); it != ctx.options.end()) opt.wide_budget = std::stod(it->second);
    return quantize_dynamic_int8(m, opt);
  }
};

}  // namespace

bool quantize_dynamic_int8(ir::Model& model, const Int8Options& opt) {
  const std::set<const ir::Node*> chosen = opt.int16_pairs ? std::set<const ir::Node*>{} : choose_wide(*model.graph, opt);
  return quantize_in(*model.graph, opt, chosen);
}

std::unique_ptr<Pass> make_quantize_dynamic_int8_pass() { return std::make_unique<QuantizeInt8Pass>(); }

}  // namespace onnxc::passes
