// ConstantOfShape simplification (see simplify_constant_of_shape.h).
//
//   f = ConstantOfShape(s) {value=0}                   y = Where(c, -inf, const 0)
//   y = Where(c: bool[b,1,t], -inf, f: f32[b,1,t])  ==>   (c alone gives y its shape [b,1,t])
//
//   m = ConstantOfShape(s) {value=-inf}                m = Expand(const -inf, s)
//   u = Trilu(m, 1)                                    u = Trilu(m, 1)
#include "passes/simplify_constant_of_shape.h"

#include <set>

#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

// Ops that broadcast all their inputs numpy-style, so a constant input can shrink to a scalar as
// long as the output shape does not change.
const std::set<std::string>& broadcasting_ops() {
  static const std::set<std::string> ops = {
      "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Where", "Equal", "Less", "Greater", "LessOrEqual",
      "GreaterOrEqual", "And", "Or", "Xor", "Max", "Min", "Sum", "Mean", "BitwiseAnd", "BitwiseOr", "BitwiseXor"};
  return ops;
}

// Numpy broadcasting of symbolic shapes; nullopt when a rank is unknown or two dims are neither
// equal nor 1.
std::optional<ir::Shape> broadcast(const std::vector<const ir::Value*>& values) {
  size_t rank = 0;
  for (const ir::Value* v : values) {
    if (!v || !v->shape()) return std::nullopt;
    rank = std::max(rank, v->shape()->size());
  }
  ir::Shape out(rank, ir::Dim(1));
  for (const ir::Value* v : values) {
    const ir::Shape& s = *v->shape();
    for (size_t i = 0; i < s.size(); ++i) {
      ir::Dim& o = out[rank - s.size() + i];
      if (s[i] == ir::Dim(1) || s[i] == o) continue;
      if (o != ir::Dim(1)) return std::nullopt;
      o = s[i];
    }
  }
  return out;
}

// Whether input `slot` of `c` can be any scalar without changing c's output shape.
bool broadcast_absorbs(const ir::Node& c, size_t slot) {
  if (!c.domain().empty() || !broadcasting_ops().count(c.op_type()) || c.num_inputs() < 2) return false;
  const ir::Value* out = c.output(0);
  if (!out || !out->shape()) return false;
  std::vector<const ir::Value*> others;
  for (size_t i = 0; i < c.num_inputs(); ++i)
    if (i != slot) others.push_back(c.input(i));
  auto b = broadcast(others);
  return b && *b == *out->shape();
}

bool simplify_graph(ir::Graph& g) {
  bool changed = false;
  for (ir::Node* n : g.nodes()) {
    for (ir::Graph* sg : n->subgraphs()) changed |= simplify_graph(*sg);
    ir::Value* out = n->output(0);
    if (n->op_type() != "ConstantOfShape" || !n->domain().empty() || !out || out->is_graph_output()) continue;
    const ir::Attribute* a = n->attr("value");
    ir::Tensor fill = a && a->kind == ir::Attribute::Kind::Tensor ? a->t.reshaped({})
                                                                  : ir::Tensor::scalar<float>(ir::DType::Float32, 0.f);
    ir::Value* scalar = nullptr;
    auto get_scalar = [&] {
      if (!scalar) scalar = g.add_initializer(g.unique_name(out->name() + "_value"), fill);
      return scalar;
    };
    std::vector<ir::Use> uses = out->uses();
    for (const ir::Use& u : uses) {
      if (u.node->graph() != &g || !broadcast_absorbs(*u.node, static_cast<size_t>(u.input_index))) continue;
      u.node->set_input(static_cast<size_t>(u.input_index), get_scalar());
      changed = true;
    }
    if (!is_used(*out)) {
      g.remove_node(n);
    } else {
      replace_node(*n, "Expand", {get_scalar(), n->input(0)});
    }
    changed = true;
  }
  return changed;
}

}  // namespace

bool simplify_constant_of_shape(ir::Model& model) { return simplify_graph(*model.graph); }

}  // namespace onnxc::passes
