// Removal of identity ops (see remove_identities.h): each rule is a pattern capturing `x` and the
// result `y`; the shared check is that y has x's dtype and shape, the rewrite sends y's uses to x.
//
//   y = Mul(x, const 1.0)     y = Cast(x: bool) {to=bool}     y = Reshape(x: [b,s,64], {0,0,64})
//   y = Dropout(x, ratio = 0, training_mode = true) (mask unused)      y = Concat(x)
//   z = Softmax(y)      ==>   z = Softmax(x)
#include "passes/remove_identities.h"

#include <algorithm>
#include <cmath>

#include "passes/pattern.h"
#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

using namespace pat;

// A constant whose every element is exactly v (any numeric dtype, any shape). The sign of zero
// counts: x - (-0) is x + 0, which turns -0 into +0, so it is no identity.
Pattern all_equal(double v) {
  return any().constant().where(
      [v](const ir::Value& c) {
        const ir::Tensor& t = c.constant();
        if (t.dtype() == ir::DType::String || (t.empty_data() && t.numel() > 0)) return false;
        for (int64_t i = 0; i < t.numel(); ++i)
          if (t.get_f64(i) != v || std::signbit(t.get_f64(i)) != std::signbit(v)) return false;
        return true;
      },
      "is not all " + std::to_string(v));
}

bool is_identity_perm(const ir::Node& n) {
  std::vector<int64_t> perm = n.attr_ints("perm");
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return !perm.empty();
}

// Dropout whose output is its input: inference mode (training_mode omitted or constant false), or a
// constant ratio of 0 in training mode (torchvision's Swin exports F.dropout(p=0.0, training=True));
// and its mask, if any, unused.
std::string dropout_passes_through(const ir::Node& n) {
  const ir::Value* mask = n.output(1);
  if (mask && (!mask->uses().empty() || mask->is_graph_output())) return "its mask is used";
  auto all_zero = [](const ir::Value* v) {
    if (!v || !v->is_constant()) return false;
    const ir::Tensor& t = v->constant();
    for (int64_t i = 0; i < t.numel(); ++i)
      if (t.get_f64(i) != 0) return false;
    return t.numel() > 0;
  };
  const ir::Value *ratio = n.input(1), *training = n.input(2);
  if (!training || all_zero(training) || all_zero(ratio)) return "";
  return "runs in training mode with a ratio that is not constant 0";
}

const std::vector<Pattern>& rules() {
  static const std::vector<Pattern> r = [] {
    Pattern x = any().capture("x");
    auto same_dtype = [](const ir::Node& n) {
      return n.input(0) && n.attr_int("to", -1) == static_cast<int64_t>(n.input(0)->dtype())
                 ? std::string()
                 : std::string("casts to another dtype");
    };
    auto identity_perm = [](const ir::Node& n) {
      return is_identity_perm(n) ? std::string() : std::string("permutes");
    };
    return std::vector<Pattern>{
        op("Identity", {x}),
        op("Cast", {x}).where_node(same_dtype),
        op("Mul", {x, all_equal(1)}),  // commutative: also Mul(1, x)
        op("Div", {x, all_equal(1)}),
        op("Sub", {x, all_equal(0)}),
        op("Reshape", {x, any()}),
        op("Expand", {x, any()}),
        op("Transpose", {x}).where_node(identity_perm),
        op("Concat", {x}),  // one input (transformers' DynamicCache exports torch.cat of a lone tensor)
        op("Dropout", {x}).variadic(optional(any())).where_node(dropout_passes_through),
    };
  }();
  return r;
}

// y may stand for x: same dtype, and a known shape equal to x's.
bool same_type(const ir::Value& x, const ir::Value& y) {
  return x.dtype() == y.dtype() && x.shape() && y.shape() && *x.shape() == *y.shape() &&
         x.shape()->end() == std::find_if(x.shape()->begin(), x.shape()->end(), [](const ir::Dim& d) {
           return d.str().find('?') != std::string::npos;
         });
}

bool remove_in(ir::Graph& g) {
  bool changed = false;
  for (ir::Node* n : g.nodes()) {
    for (ir::Graph* sg : n->subgraphs()) changed |= remove_in(*sg);
    ir::Value* y = n->output(0);
    if (!n->domain().empty() || !y || y->is_graph_output() || y->uses().empty()) continue;
    for (const Pattern& rule : rules()) {
      MatchResult m = match(rule, y);
      if (!m || !same_type(*m->value("x"), *y)) continue;
      replace_all_uses_everywhere(y, m->value("x"));
      changed = true;
      break;
    }
  }
  return changed;
}

}  // namespace

bool remove_identities(ir::Model& model) { return remove_in(*model.graph); }

}  // namespace onnxc::passes
