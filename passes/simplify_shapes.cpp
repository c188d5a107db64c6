// Shape-chain simplification (see simplify_shapes.h). Three sweeps over each graph, in this order so
// each sees what the previous one left: constants, Reshape targets, then onnxc.SymbolicShape.
//
//   x: f32[batch,seq,64]                          x: f32[batch,seq,64]
//   s = Shape(x)                                  r = Reshape(x, const {0, 0, 4, 16})
//   b = Unsqueeze(Gather(s, 0), 0)
//   t = Unsqueeze(Gather(s, 1), 0)         ==>    m = ConstantOfShape(onnxc.SymbolicShape(x)
//   r = Reshape(x, Concat(b, t, [4], [16]))                             {dims=["seq", "seq"]})
//   m = ConstantOfShape(Concat(t, t))
#include "passes/simplify_shapes.h"

#include <map>

#include "ir/eval/symbolic_shape.h"
#include "ir/infer/infer.h"
#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

using ir::Dim;

// Shape values at the start of the pass. Lookups check the value's name as well as its address: the
// pass frees values and creates others, which may reuse a freed address.
class ShapeTable {
 public:
  ShapeTable(const ir::InferenceResult& r, const ir::Graph& g) { add(r, g); }
  std::optional<std::vector<Dim>> get(const ir::Value* v) const {
    if (!v || v->is_constant()) return std::nullopt;
    auto it = table_.find(v);
    if (it == table_.end() || it->second.first != v->name()) return std::nullopt;
    return it->second.second;
  }

 private:
  void add(const ir::InferenceResult& r, const ir::Graph& g) {
    for (const ir::Value* v : g.values())
      if (!v->is_constant())
        if (auto sv = ir::shape_value(r, v)) table_[v] = {v->name(), *sv};
    for (const ir::Node* n : g.nodes())
      for (const ir::Graph* sg : n->subgraphs()) add(r, *sg);
  }
  std::map<const ir::Value*, std::pair<std::string, std::vector<Dim>>> table_;
};

bool all_const(const std::vector<Dim>& dims) {
  for (const Dim& d : dims)
    if (!d.is_const()) return false;
  return true;
}

bool fully_known(const ir::Shape& s) {
  for (const Dim& d : s)
    if (d.str().find('?') != std::string::npos) return false;
  return true;
}

// (a) A single-output node whose int64/int32 output has all-constant contents becomes a constant.
bool constants_from_values(ir::Graph& g, const ShapeTable& t) {
  bool changed = false;
  for (ir::Node* n : g.nodes()) {
    for (ir::Graph* sg : n->subgraphs()) changed |= constants_from_values(*sg, t);
    ir::Value* o = n->num_outputs() == 1 ? n->output(0) : nullptr;
    if (!o || o->is_graph_output() || !o->type().has_rank() || o->type().rank() > 1) continue;
    if (o->dtype() != ir::DType::Int64 && o->dtype() != ir::DType::Int32) continue;
    auto sv = t.get(o);
    if (!sv || !all_const(*sv) || (o->type().rank() == 0 && sv->size() != 1)) continue;
    std::vector<int64_t> dims;
    if (o->type().rank() == 1) dims.push_back(static_cast<int64_t>(sv->size()));
    ir::Tensor c(o->dtype(), dims);
    for (size_t i = 0; i < sv->size(); ++i) {
      if (o->dtype() == ir::DType::Int64) c.mutable_data<int64_t>()[i] = (*sv)[i].value();
      else c.mutable_data<int32_t>()[i] = static_cast<int32_t>((*sv)[i].value());
    }
    replace_with_constant(o, std::move(c));  // removes n
    changed = true;
  }
  return changed;
}

// (b) The target of a Reshape from `in` to `out` written with 0 (copy the input dim at the same
// position) and -1 (the one dim inferred from the element count); nullopt if more than one dim is
// neither a constant nor a copy.
std::optional<std::vector<int64_t>> copy_infer_target(const ir::Shape& in, const ir::Shape& out, bool allowzero) {
  std::vector<int64_t> r;
  bool used_infer = false;
  for (size_t i = 0; i < out.size(); ++i) {
    bool copy = !allowzero && i < in.size() && in[i] == out[i];
    if (out[i].is_const() && (out[i].value() != 0 || allowzero || copy)) {
      r.push_back(out[i].value());
    } else if (copy) {
      r.push_back(0);
    } else {
      if (used_infer) return std::nullopt;
      used_infer = true;
      r.push_back(-1);
    }
  }
  return r;
}

bool encode_reshapes(ir::Graph& g, const ShapeTable& t) {
  bool changed = false;
  for (ir::Node* n : g.nodes()) {
    for (ir::Graph* sg : n->subgraphs()) changed |= encode_reshapes(*sg, t);
    if (n->op_type() != "Reshape" || !n->domain().empty() || n->num_inputs() < 2) continue;
    ir::Value *x = n->input(0), *s = n->input(1), *o = n->output(0);
    if (!x || !s || s->is_constant() || !x->shape() || !o || !o->shape() || !fully_known(*o->shape())) continue;
    // Only where inference derived the output from the target's contents: each element is the
    // output dim, or a 0/-1 that the output shape resolves.
    auto sv = t.get(s);
    if (!sv || sv->size() != o->shape()->size()) continue;
    bool consistent = true;
    for (size_t i = 0; i < sv->size(); ++i)
      if ((*sv)[i] != (*o->shape())[i] && (*sv)[i] != Dim(0) && (*sv)[i] != Dim(-1)) consistent = false;
    auto target = copy_infer_target(*x->shape(), *o->shape(), n->attr_int("allowzero", 0) != 0);
    if (!consistent || !target) continue;
    if (only_use_is(*s, *n)) {
      replace_with_constant(s, i64_tensor(*target));
    } else {
      n->set_input(1, g.add_initializer(g.unique_name(s->name()), i64_tensor(*target)));
    }
    changed = true;
  }
  return changed;
}

// (c) Symbolic shape values where they leave shape arithmetic become onnxc.SymbolicShape nodes.
bool materialize_shapes(ir::Graph& g, const ShapeTable& t,
                        std::map<std::pair<ir::Value*, ir::Graph*>, ir::Value*>& made) {
  bool changed = false;
  for (ir::Node* n : g.nodes()) {
    for (ir::Graph* sg : n->subgraphs()) changed |= materialize_shapes(*sg, t, made);
    if (ir::is_symbolic_shape(*n)) continue;
    bool interior = false;  // n itself computes a shape value: its consumers decide
    for (const ir::Value* o : n->outputs())
      if (t.get(o)) interior = true;
    if (interior) continue;
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      ir::Value* v = n->input(i);
      if (!v || v->is_constant() || !v->producer() || ir::is_symbolic_shape(*v->producer())) continue;
      if (v->dtype() != ir::DType::Int64 || !v->type().has_rank() || v->type().rank() > 1) continue;
      auto sv = t.get(v);
      if (!sv) continue;
      ir::Value*& sym = made[{v, &g}];
      if (!sym) {
        ir::Node* sn = ir::insert_symbolic_shape(g, n, *sv, v->type().rank() == 0, v->name());
        if (!sn) continue;
        sym = sn->output(0);
      }
      n->set_input(i, sym);
      changed = true;
    }
  }
  return changed;
}

}  // namespace

bool simplify_shapes(ir::Model& model) {
  ir::InferenceResult r = ir::infer_shapes(model);
  ShapeTable table(r, *model.graph);
  bool changed = constants_from_values(*model.graph, table);
  changed |= encode_reshapes(*model.graph, table);
  std::map<std::pair<ir::Value*, ir::Graph*>, ir::Value*> made;
  changed |= materialize_shapes(*model.graph, table, made);
  return changed;
}

}  // namespace onnxc::passes
