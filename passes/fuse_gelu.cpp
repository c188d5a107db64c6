// fuse_gelu: GELU written out -> Gelu (opset 20), exact (erf) or tanh-approximated, with the three
// factors x, (1 + ·) and 0.5 multiplied in any grouping and order.
//
//   erf:   x ─▶ Div(x, √2) | Mul(x, 1/√2) ─▶ Erf ─▶ Add(·, 1) ─┐
//   tanh:  x ─▶ Mul(√(2/π), x + 0.044715·x³) ─▶ Tanh ─▶ Add(·, 1) ─┤   (x³ = Pow(x,3) or x·x·x;
//                                                                   │    also x·√(2/π)·(1 + 0.044715·x·x),
//                                                                   │    the last product grouped either way)
//          x ───────────────────────────────────────────────────────┴─▶ x · (1 + ·) · 0.5
//
// x·sigmoid(1.702·x), SiLU x·sigmoid(x) and gated silu(g)·u are not rewritten: they are not Gelu,
// ONNX has no op for them, and codegen's partitioner already compiles each such elementwise chain
// into one kernel (or a GEMM epilogue), so an onnxc-domain op would buy nothing and would stop
// other runtimes from loading `onnxc optimize` output.
#include "passes/fuse_norms.h"

namespace onnxc::passes {
namespace {

using namespace pat;

constexpr double kTol = 1e-5;

// x · onep · 0.5 in any grouping (Mul's operand order is free already).
Pattern times_half(const Pattern& x, const Pattern& onep) {
  Pattern h = const_value(0.5, kTol);
  return alt({op("Mul", {op("Mul", {x, onep}), h}), op("Mul", {op("Mul", {x, h}), onep}),
              op("Mul", {x, op("Mul", {onep, h})})});
}

Pattern erf_form(const Pattern& x) {
  Pattern scaled = alt({op("Div", {x, const_value(1.4142135623730951, kTol)}), op("Mul", {x, const_value(0.7071067811865476, kTol)})});
  return times_half(x, op("Add", {op("Erf", {scaled}), const_value(1.0)}));
}

Pattern tanh_form(const Pattern& x) {
  Pattern c1 = const_value(0.7978845608028654, kTol), c2 = const_value(0.044715, 1e-7);
  Pattern xx = op("Mul", {x, x});
  Pattern cube = alt({op("Pow", {x, const_value(3.0)}), op("Mul", {xx, x})});
  // 0.044715·x·x grouped either way (BLOOM's bloom_gelu_forward writes (0.044715·x)·x).
  Pattern c2xx = alt({op("Mul", {c2, xx}), op("Mul", {op("Mul", {c2, x}), x})});
  Pattern inner = alt({op("Mul", {c1, op("Add", {x, op("Mul", {c2, cube})})}),
                       op("Mul", {op("Mul", {x, c1}), op("Add", {const_value(1.0), c2xx})})});
  return times_half(x, op("Add", {op("Tanh", {inner}), const_value(1.0)}));
}

// The output has x's type: no constant broadcast x to a higher rank.
std::string check(const Match& m, const FusionContext&) {
  const ir::Value* x = m["x"];
  if (!ir::dtype_is_float(x->dtype())) return "the input is not floating point";
  if (!x->shape() || !m.root()->shape() || *x->shape() != *m.root()->shape())
    return "a constant broadcasts the input to another shape";
  return "";
}

FusionRule gelu_rule(const std::string& name, const Pattern& p, const std::string& approximate) {
  return {name, "gelu", p, check,
          [approximate](const Match& m, RewriteBuilder& b) {
            b.replace({m.root()}, "Gelu", {m["x"]}, {RewriteBuilder::attr("approximate", approximate)});
          },
          20};
}

}  // namespace

std::vector<FusionRule> gelu_rules() {
  Pattern x = any().capture("x");
  return {gelu_rule("gelu_erf", erf_form(x), "none"), gelu_rule("gelu_tanh", tanh_form(x), "tanh")};
}

}  // namespace onnxc::passes
