// fuse_rms_norm: RMSNorm written out -> RMSNormalization (opset 23), as LLaMA, T5 and Mistral
// exports spell it (optionally in fp32 between Casts).
//
//    x ─▶ [Cast f32] ─▶ xf ─┬─▶ Mul(xf, xf) ─▶ ReduceMean ─▶ Add(·, eps) ─▶ Sqrt ─▶ s
//                           └──────────▶ Div(xf, s) | Mul(xf, Div(1, s)) | Mul(xf, Pow(·+eps, -0.5))
//                                          ─▶ [Cast back] ─▶ [Mul(·, scale)]
//
// The mean must be over the last axes; eps a scalar constant; the scale over the normalized dims.
// With Casts, RMSNormalization runs on x's dtype with fp32 statistics (stash_type=1).
#include "passes/fuse_norms.h"
#include "passes/norm_patterns.h"

namespace onnxc::passes {
namespace {

using namespace pat;

Pattern rms_core() {
  Pattern xf = norm_input();
  Pattern ms = op("ReduceMean", {op("Mul", {xf, xf}), any().constant().capture("axes")}).attr("keepdims", 1, 1);
  Pattern plus_eps = op("Add", {ms, any().constant().scalar().capture("eps")});
  Pattern s = op("Sqrt", {plus_eps});
  Pattern normed = alt({op("Div", {xf, s}), op("Mul", {xf, op("Div", {const_value(1.0), s})}),
                        op("Mul", {xf, op("Pow", {plus_eps, const_value(-0.5)})})});
  return cast_back(normed);
}

std::string check(const Match& m, const FusionContext& c) {
  const ir::Value* x = m["x"];
  if (!c.axes_are_last(x, m["axes"])) return "the mean square is not over the last axes of the input";
  std::string why = check_casts(m);
  if (!why.empty()) return why;
  return check_norm_affine(m, c, x, static_cast<int64_t>(c.ints(m["axes"])->size()));
}

void rewrite(const Match& m, RewriteBuilder& b) {
  int64_t k = static_cast<int64_t>(b.context().ints(m["axes"])->size());
  std::vector<ir::Value*> in = norm_affine_inputs(m, b, m["x"], k, /*with_bias=*/false);
  b.replace({m.root()}, "RMSNormalization", in,
            {RewriteBuilder::attr("axis", -k), RewriteBuilder::attr("epsilon", eps_of(m)),
             RewriteBuilder::attr("stash_type", int64_t{1})});
}

}  // namespace

std::vector<FusionRule> rms_norm_rules() {
  return {{"rms_norm", "rms_norm", with_affine(rms_core(), /*bias=*/false), check, rewrite, 23}};
}

}  // namespace onnxc::passes
