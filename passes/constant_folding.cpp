// Constant folding: one forward walk per graph. A folded node's outputs become initializers right
// away, so its consumers fold in the same walk.
//
//   c1 = const {2}      c2 = const {3}           c1 = const {2}   c2 = const {3}
//   x = Mul(c1, c2)                       ==>    x = const {6}
//   s = Shape(v: f32[4,8])                       s = const {4, 8}
#include "passes/constant_folding.h"

#include <algorithm>

#include "ir/eval/eval.h"
#include "ir/op_registry.h"
#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

// Shape/Size of a value whose needed dims are static, from its type alone.
std::optional<ir::Tensor> fold_from_type(const ir::Node& n) {
  const ir::Value* x = n.input(0);
  if (!x || x->is_constant() || !x->type().has_rank()) return std::nullopt;
  const ir::Shape& s = *x->shape();
  int64_t r = static_cast<int64_t>(s.size());
  if (n.op_type() == "Size") {
    auto dims = ir::shape_as_ints(s);
    if (!dims) return std::nullopt;
    int64_t total = 1;
    for (int64_t d : *dims) total *= d;
    return i64_scalar(total);
  }
  auto clamp = [r](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + r : i, 0, r); };
  int64_t start = clamp(n.attr_int("start", 0)), end = std::max(start, clamp(n.attr_int("end", r)));
  auto dims = ir::shape_as_ints(ir::Shape(s.begin() + start, s.begin() + end));
  if (!dims) return std::nullopt;
  return i64_tensor(*dims);
}

std::optional<std::vector<ir::Tensor>> compute(const ir::Node& n, const FoldOptions& opt, const ir::OpsetMap& opsets) {
  bool is_default_domain = n.domain().empty() || n.domain() == "ai.onnx";
  if (!is_default_domain || !n.subgraphs().empty()) return std::nullopt;
  const ir::OpInfo* info = ir::find_op(n.domain(), n.op_type(), ir::OpInfo::kLatest);
  if (info && info->has(ir::kRandom)) return std::nullopt;
  if ((n.op_type() == "Shape" || n.op_type() == "Size") && n.input(0) && !n.input(0)->is_constant()) {
    auto t = fold_from_type(n);
    if (!t) return std::nullopt;
    return std::vector<ir::Tensor>{*t};
  }
  if (!ir::can_evaluate(n.domain(), n.op_type())) return std::nullopt;
  std::vector<const ir::Tensor*> in;
  int64_t in_elements = 0;
  for (const ir::Value* v : n.inputs()) {
    if (v && !v->is_constant()) return std::nullopt;
    in.push_back(v ? &v->constant() : nullptr);
    in_elements += v ? v->constant().numel() : 0;
  }
  auto out = ir::evaluate(n, in, ir::EvalOptions{opt.max_elements, ir::opset_of(opsets, n.domain())});
  if (!out) return std::nullopt;
  for (const ir::Tensor& t : *out)
    if (t.numel() > opt.max_growth_elements && t.numel() > in_elements) return std::nullopt;
  return out;
}

bool fold_graph(ir::Graph& g, const FoldOptions& opt, const ir::OpsetMap& opsets) {
  bool changed = false;
  for (ir::Node* n : g.nodes()) {
    for (ir::Graph* sg : n->subgraphs()) changed |= fold_graph(*sg, opt, opsets);
    bool keeps_interface = false;
    for (const ir::Value* o : n->outputs())
      if (o && o->is_graph_output()) keeps_interface = true;
    if (keeps_interface || n->num_outputs() == 0) continue;
    auto out = compute(*n, opt, opsets);
    if (!out || out->size() != n->num_outputs()) continue;
    bool dtypes_agree = true;
    for (size_t i = 0; i < out->size(); ++i) {
      const ir::Value* o = n->output(i);
      ir::DType declared = o ? o->dtype() : ir::DType::Undefined;
      if (declared != ir::DType::Undefined && declared != (*out)[i].dtype()) dtypes_agree = false;
    }
    if (!dtypes_agree) continue;
    replace_outputs_with_constants(*n, std::move(*out));
    changed = true;
  }
  return changed;
}

}  // namespace

bool fold_constants(ir::Model& model, const FoldOptions& opt) {
  return fold_graph(*model.graph, opt, ir::opset_map(model));
}

}  // namespace onnxc::passes
