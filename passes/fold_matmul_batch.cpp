// MatMul batch folding (see fold_matmul_batch.h):
//
//   A [s,b,K]   W [K,N]                 A [s,b,K] -> Reshape [-1,K]   W [K,N]
//        \     /                                          \          /
//        MatMul        bias [N]    ==>                    MatMul [s*b,N]    bias [N]
//            \        /                                        \          /
//               Add   -> [s,b,N]                                  Add -> Reshape [s,b,N]
#include "passes/fold_matmul_batch.h"

#include <set>

#include "ir/eval/symbolic_shape.h"
#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

bool is_op(const ir::Node* n, const char* op) { return n && n->domain().empty() && n->op_type() == op; }

// A constant `c` that broadcasts against y only along y's last dim (rank <= y's, leading dims 1).
bool is_row_constant(const ir::Value* c, const ir::Shape& y) {
  if (!c || !c->is_constant()) return false;
  const auto& d = c->constant().dims();
  if (d.size() > y.size()) return false;
  for (size_t i = 0; i + 1 < d.size(); ++i)
    if (d[i] != 1) return false;
  return d.empty() || d.back() == 1 || (y.back().as_const() && d.back() == *y.back().as_const());
}

const std::set<std::string>& unary_epilogues() {
  static const std::set<std::string> ops = {"Relu", "Gelu", "Tanh", "Sigmoid", "Erf", "Neg", "Abs", "Exp"};
  return ops;
}
const std::set<std::string>& binary_epilogues() {
  static const std::set<std::string> ops = {"Add", "Sub", "Mul", "Div"};
  return ops;
}

// The next node that can move inside the fold: y's only consumer, elementwise, same shape as y, its
// other operand (if any) a row constant or a tensor of y's shape. `other` gets that operand's index.
ir::Node* next_epilogue(ir::Value* y, int& other) {
  if (!only_use_is(*y, *y->uses().at(0).node)) return nullptr;
  ir::Node* e = y->uses()[0].node;
  const ir::Shape* ys = shape_of(y);
  const ir::Shape* es = shape_of(e->output(0));
  if (!e->domain().empty() || e->num_outputs() != 1 || e->output(0)->is_graph_output() || !es || *es != *ys || e->output(0)->dtype() != y->dtype())
    return nullptr;
  if (unary_epilogues().count(e->op_type()) && e->num_inputs() == 1) {
    other = -1;
    return e;
  }
  if (!binary_epilogues().count(e->op_type()) || e->num_inputs() != 2) return nullptr;
  other = e->input(0) == y ? 1 : 0;
  const ir::Value* o = e->input(static_cast<size_t>(other));
  if (o == y) return nullptr;
  if (is_row_constant(o, *ys) || (shape_of(o) && *shape_of(o) == *ys && o->dtype() == y->dtype())) return e;
  return nullptr;
}

// Reshape(v, [-1, n]) inserted before `pos`.
ir::Value* flatten_rows(ir::Graph& g, ir::Node* pos, ir::Value* v, int64_t n) {
  ir::Value* target = g.add_initializer(g.unique_name(v->name() + "/rows_shape"), i64_tensor({-1, n}));
  return g.insert_node_before(pos, "Reshape", {v, target}, {g.unique_name(v->name() + "/rows")})->output(0);
}

// A row constant as a 1-D (or scalar) tensor, so it broadcasts against the 2-D product.
ir::Value* row_constant(ir::Graph& g, ir::Value* c) {
  const auto& d = c->constant().dims();
  if (d.size() <= 1) return c;
  return g.add_initializer(g.unique_name(c->name() + "/row"), c->constant().reshaped({d.back()}));
}

bool fold(ir::Graph& g, ir::Node* mm) {
  ir::Value *a = mm->input(0), *b = mm->input(1), *y = mm->output(0);
  const ir::Shape *as = shape_of(a), *bs = shape_of(b), *y_shape = shape_of(y);
  if (!as || !bs || !y_shape || as->size() < 3 || bs->size() != 2 || y->is_graph_output() || y->uses().empty())
    return false;
  const ir::Shape y_dims = *y_shape;  // y's type is rewritten below
  const ir::Shape* ys = &y_dims;
  auto k = as->back().as_const();
  auto n = ys->back().as_const();
  if (!k || !n) return false;

  // The end of the epilogue chain: the value whose shape the final Reshape restores.
  std::vector<std::pair<ir::Node*, int>> chain;
  for (ir::Value* v = y; v->uses().size() == 1;) {
    int other = -1;
    ir::Node* e = next_epilogue(v, other);
    if (!e) break;
    chain.push_back({e, other});
    v = e->output(0);
  }
  ir::Value* last = chain.empty() ? y : chain.back().first->output(0);
  ir::Node* after = chain.empty() ? mm : chain.back().first;
  ir::Node* before_next = nullptr;  // the node just after `after`, to insert the final Reshape before
  for (ir::Node* x : g.nodes()) {
    if (before_next == after) {
      before_next = x;
      break;
    }
    if (x == after) before_next = after;
  }
  if (before_next == after) before_next = nullptr;

  // The restoring Reshape's target: a constant when static, else an onnxc.SymbolicShape.
  ir::Value* target = nullptr;
  if (ir::shape_is_static(*ys)) {
    std::vector<int64_t> dims;
    for (const ir::Dim& d : *ys) dims.push_back(*d.as_const());
    target = g.add_initializer(g.unique_name(last->name() + "/shape"), i64_tensor(dims));
  } else {
    ir::Node* s = ir::insert_symbolic_shape(g, before_next, *ys, false, last->name() + "/shape");
    if (!s) return false;
    target = s->output(0);
  }

  mm->set_input(0, flatten_rows(g, mm, a, *k));
  y->mutable_type() = ir::Type::tensor(y->dtype());  // re-inferred as 2-D
  for (auto& [e, other] : chain) {
    if (other >= 0) {
      ir::Value* o = e->input(static_cast<size_t>(other));
      e->set_input(static_cast<size_t>(other), o->is_constant() && is_row_constant(o, *ys) ? row_constant(g, o)
                                                                                          : flatten_rows(g, e, o, *n));
    }
    e->output(0)->mutable_type() = ir::Type::tensor(e->output(0)->dtype());
  }
  ir::Node* restore = before_next ? g.insert_node_before(before_next, "Reshape", {last, target},
                                                         {g.unique_name(last->name() + "/unfolded")})
                                  : g.add_node("Reshape", {last, target}, {g.unique_name(last->name() + "/unfolded")});
  ir::Value* out = restore->output(0);
  out->set_type(ir::Type::tensor(last->dtype(), *ys));
  // Every reader of `last` but the restoring Reshape reads the restored value.
  std::vector<ir::Use> uses = last->uses();
  for (const ir::Use& u : uses)
    if (u.node != restore) u.node->set_input(static_cast<size_t>(u.input_index), out);
  return true;
}

bool fold_in(ir::Graph& g) {
  bool changed = false;
  for (ir::Node* n : g.nodes()) {
    for (ir::Graph* sg : n->subgraphs()) changed |= fold_in(*sg);
    if (is_op(n, "MatMul")) changed |= fold(g, n);
  }
  return changed;
}

}  // namespace

bool fold_matmul_batch(ir::Model& model) { return fold_in(*model.graph); }

}  // namespace onnxc::passes
