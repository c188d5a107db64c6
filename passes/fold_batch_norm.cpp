// fold_batch_norm: a per-channel scale and shift after a Conv become part of its weights and bias.
//
//   X ─▶ Conv(W, B) ─▶ BatchNormalization(γ, β, μ, σ²)   y·s + t, s = γ/√(σ²+ε), t = β − μ·s
//                   └▶ Mul(·, c)                          y·c      (c per channel [M,1..] or scalar)
//                   └▶ Add(·, c)                          y + c
//   ⇒ X ─▶ Conv(W·s, B·s + t)    (each link of a chain folds in turn)
//
// A convolution's output channel m is Σ W[m,..]·X + B[m], so s[m]·(that) + t[m] is the same sum
// over W[m,..]·s[m], plus B[m]·s[m] + t[m]: the affine costs nothing at run time.
#include "passes/fold_batch_norm.h"

#include <cmath>

#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

// A constant float32 operand as per-channel values for M channels of an output of rank `rank`:
// a scalar (every channel alike) or a tensor whose only non-1 dim is the channel axis (1).
bool per_channel(const ir::Value* v, int64_t m, size_t rank, std::vector<double>& out) {
  if (!v || !v->is_constant() || v->dtype() != ir::DType::Float32) return false;
  const ir::Tensor& t = v->constant();
  const auto& d = t.dims();
  if (d.size() > rank) return false;
  for (size_t i = 0; i < d.size(); ++i) {
    size_t axis = rank - d.size() + i;
    if (d[i] != 1 && !(axis == 1 && d[i] == m)) return false;
  }
  const float* p = t.data<float>();
  out.resize(m);
  for (int64_t c = 0; c < m; ++c) out[c] = t.numel() == 1 ? p[0] : p[c];
  return true;
}

// The scale s and shift t that `n` applies to the output of `conv` (M channels), if it is a
// per-channel affine map this pass folds.
bool affine_of(const ir::Node& n, const ir::Value* y, int64_t m, std::vector<double>& s, std::vector<double>& t) {
  if (!n.domain().empty() || n.num_outputs() < 1) return false;
  const size_t rank = shape_of(y)->size();
  const std::string& op = n.op_type();
  if (op == "Mul" || op == "Add") {
    if (n.num_inputs() != 2 || n.num_outputs() != 1) return false;
    const ir::Value* other = n.input(0) == y ? n.input(1) : n.input(0);
    std::vector<double> c;
    if (other == y || !per_channel(other, m, rank, c)) return false;
    s.assign(m, 1.0);
    t.assign(m, 0.0);
    (op == "Mul" ? s : t) = c;
    return true;
  }
  if (op != "BatchNormalization" || n.input(0) != y || n.attr_int("training_mode", 0) != 0) return false;
  for (size_t i = 1; i < n.num_outputs(); ++i)
    if (n.output(i) && is_used(*n.output(i))) return false;
  std::vector<double> gamma, beta, mean, var;
  if (n.num_inputs() != 5 || !per_channel(n.input(1), m, 2, gamma) || !per_channel(n.input(2), m, 2, beta) ||
      !per_channel(n.input(3), m, 2, mean) || !per_channel(n.input(4), m, 2, var))
    return false;
  const double eps = n.attr_float("epsilon", 1e-5f);
  s.resize(m);
  t.resize(m);
  for (int64_t c = 0; c < m; ++c) {
    s[c] = gamma[c] / std::sqrt(var[c] + eps);
    t[c] = beta[c] - mean[c] * s[c];
  }
  return true;
}

// The node that reads `conv`'s output, when it is the only reader and a foldable affine map.
ir::Node* foldable_use(const ir::Node& conv, int64_t m, std::vector<double>& s, std::vector<double>& t) {
  const ir::Value* y = conv.output(0);
  if (!shape_of(y) || y->is_graph_output() || y->uses().size() != 1) return nullptr;
  ir::Node* u = y->uses()[0].node;
  if (!only_use_is(*y, *u) || !shape_of(u->output(0)) || *shape_of(u->output(0)) != *shape_of(y)) return nullptr;
  return affine_of(*u, y, m, s, t) ? u : nullptr;
}

// Folds the chain after one Conv; true when anything folded.
bool fold(ir::Graph& g, ir::Node* conv) {
  if (!conv->domain().empty() || conv->op_type() != "Conv" || conv->num_outputs() != 1) return false;
  const ir::Value *w = conv->input(1), *b = conv->input(2);
  if (!w || !w->is_constant() || w->dtype() != ir::DType::Float32 || (b && !b->is_constant())) return false;
  if (b && b->dtype() != ir::DType::Float32) return false;
  const int64_t m = w->constant().dims().at(0);
  std::vector<double> s, t;
  bool changed = false;
  while (ir::Node* use = foldable_use(*conv, m, s, t)) {
    const ir::Tensor& wt = conv->input(1)->constant();
    const ir::Value* bv = conv->input(2);
    const int64_t per = wt.numel() / m;
    ir::Tensor nw(ir::DType::Float32, wt.dims()), nb(ir::DType::Float32, {m});
    const float* wp = wt.data<float>();
    float* nwp = nw.mutable_data<float>();
    float* nbp = nb.mutable_data<float>();
    for (int64_t c = 0; c < m; ++c) {
      for (int64_t i = 0; i < per; ++i) nwp[c * per + i] = static_cast<float>(wp[c * per + i] * s[c]);
      double bias = bv ? bv->constant().data<float>()[c] : 0.0;
      nbp[c] = static_cast<float>(bias * s[c] + t[c]);
    }
    const std::string base = use->output(0)->name();
    ir::Value* wn = g.add_initializer(g.unique_name(base + "/folded_w"), std::move(nw));
    ir::Value* bn = g.add_initializer(g.unique_name(base + "/folded_b"), std::move(nb));
    ir::Node* folded = replace_node(*use, "Conv", {conv->input(0), wn, bn});
    folded->mutable_attributes() = conv->attributes();
    folded->set_name(conv->name());
    conv = folded;
    changed = true;
  }
  return changed;
}

bool fold_in(ir::Graph& g) {
  bool changed = false;
  // The Convs are collected before any folds: a fold deletes the node it folds (a BatchNormalization,
  // Mul or Add, never a Conv), so a list of every node would hold freed ones.
  std::vector<ir::Node*> convs;
  for (ir::Node* n : g.nodes()) {
    for (ir::Graph* sg : n->subgraphs()) changed |= fold_in(*sg);
    if (n->op_type() == "Conv") convs.push_back(n);
  }
  for (ir::Node* conv : convs) changed |= fold(g, conv);
  return changed;
}

}  // namespace

bool fold_batch_norm(ir::Model& model) { return fold_in(*model.graph); }

}  // namespace onnxc::passes
