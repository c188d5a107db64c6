// fuse_layer_norm: LayerNorm written out in elementary ops -> LayerNormalization (opset 17).
//
//   x ─▶ [Cast f32] ─┬──────────────┐
//                    └▶ ReduceMean ─▶ Sub ─▶ d ─┬─▶ Mul(d, d) ─▶ ReduceMean ─▶ Add(·, eps) ─▶ Sqrt ─▶ s
//                                             └──────────────────────▶ Div(d, s) | Mul(d, Div(1, s))
//                                  ─▶ [Cast back] ─▶ [Mul(·, scale)] ─▶ [Add(·, bias)]
//
// x may be Cast to fp32 first and the result cast back (half-precision exports).
// Pow(d, 2) and Reciprocal(s) arrive here as Mul(d, d) and Div(1, s) (canonicalize). The axes of
// both means must be the same last axes of x; eps a scalar constant; scale and bias over the
// normalized dims. The fused op's rounding replaces that of Div vs Mul-by-reciprocal.
#include "passes/fuse_norms.h"
#include "passes/norm_patterns.h"

namespace onnxc::passes {
namespace {

using namespace pat;

Pattern layer_norm_core() {
  Pattern x = norm_input();
  Pattern mean = op("ReduceMean", {x, any().constant().capture("axes")}).capture("mean");
  Pattern d = op("Sub", {x, mean}).capture("d");
  Pattern var = op("ReduceMean", {op("Mul", {d, d}), any().constant().capture("axes2")}).attr("keepdims", 1, 1);
  Pattern s = op("Sqrt", {op("Add", {var, any().constant().scalar().capture("eps")})});
  return cast_back(alt({op("Div", {d, s}), op("Mul", {d, op("Div", {const_value(1.0), s})})}));
}

std::string check(const Match& m, const FusionContext& c) {
  const ir::Value* x = m["x"];
  if (!c.axes_are_last(x, m["axes"])) return "the mean is not over the last axes of the input";
  if (c.ints(m["axes"]) != c.ints(m["axes2"])) return "the variance is over other axes than the mean";
  if (m.node("mean")->attr_int("keepdims", 1) != 1) return "the mean drops its axes (keepdims=0)";
  std::string why = check_casts(m);
  if (!why.empty()) return why;
  return check_norm_affine(m, c, x, static_cast<int64_t>(c.ints(m["axes"])->size()));
}

void rewrite(const Match& m, RewriteBuilder& b) {
  int64_t k = static_cast<int64_t>(b.context().ints(m["axes"])->size());
  std::vector<ir::Value*> in = norm_affine_inputs(m, b, m["x"], k, /*with_bias=*/true);
  b.replace({m.root()}, "LayerNormalization", in,
            {RewriteBuilder::attr("axis", -k), RewriteBuilder::attr("epsilon", eps_of(m)),
             RewriteBuilder::attr("stash_type", int64_t{1})});
}

}  // namespace

std::vector<FusionRule> layer_norm_rules() {
  Pattern core = layer_norm_core();
  return {
      {"layer_norm", "layer_norm", with_affine(core, /*bias=*/true), check, rewrite, 17},
  };
}

}  // namespace onnxc::passes
