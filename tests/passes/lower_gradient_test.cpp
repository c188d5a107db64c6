// lower_gradient: Gradient nodes written out by reverse-mode differentiation. The derivatives are
// evaluated (ir/eval) and compared with the textbook formulas at the same inputs; ops it cannot
// differentiate leave the Gradient as it is.
#include <gtest/gtest.h>

#include <cmath>

#include "fusion_util.h"

namespace onnxc::testing {
namespace {

ir::Tensor vec(std::vector<float> v) { return ir::Tensor::from_vector(ir::DType::Float32, {3}, v); }

TEST(LowerGradient, ChainWithSharedValues) {
  // y = (a - b) * a / (b + a), so a is used three times and b twice; x is not used at all.
  ir::Model m = parse_model(dedent(R"(
    model ir_version=8 opset=[ai.onnx:17, ai.onnx.preview.training:1]
    graph main(%a: f32[3], %b: f32[3], %x: f32[3]) {
      %d: f32[3] = Sub(%a, %b)
      %p: f32[3] = Mul(%d, %a)
      %s: f32[3] = Add(%b, %a)
      %y: f32[3] = Div(%p, %s)
      %n: f32[3] = Neg(%y)
      %da: f32[3], %db: f32[3], %dx: f32[3] = ai.onnx.preview.training.Gradient(%a, %b, %x) {xs=["a", "b", "x"], y="n"}
      return %n, %da, %db, %dx
    }
  )"));
  run_with_report(m, {"lower_gradient", "infer_shapes", "dce"}, nullptr);
  for (const ir::Node* n : m.graph->nodes()) EXPECT_NE(n->op_type(), "Gradient");
  std::vector<float> a = {1.5f, -2.0f, 0.25f}, b = {0.5f, 3.0f, -4.0f};
  auto out = eval_graph(m, {{"a", vec(a)}, {"b", vec(b)}, {"x", vec({1, 2, 3})}});
  for (int i = 0; i < 3; ++i) {
    // n = -(a² - ab)/(a + b): dn/da = -((2a - b)(a + b) - (a² - ab)) / (a + b)², dn/db = -(-a(a + b) - (a² - ab)) / (a + b)².
    double A = a[i], B = b[i], s = A + B, num = A * A - A * B;
    double da = -((2 * A - B) * s - num) / (s * s), db = -(-A * s - num) / (s * s);
    EXPECT_NEAR(out.at("da").get_f64(i), da, 1e-5 * (1 + std::fabs(da))) << i;
    EXPECT_NEAR(out.at("db").get_f64(i), db, 1e-5 * (1 + std::fabs(db))) << i;
    EXPECT_EQ(out.at("dx").get_f64(i), 0.0) << i;
  }
}

TEST(LowerGradient, BroadcastingAndUnknownOpsStay) {
  // A broadcasting operand would need its adjoint summed back to its shape; Exp is not differentiated.
  std::string text = R"(
    model ir_version=8 opset=[ai.onnx:17, ai.onnx.preview.training:1]
    graph main(%a: f32[3], %b: f32[1], %c: f32[3]) {
      %y: f32[3] = Mul(%a, %b)
      %e: f32[3] = Exp(%c)
      %da: f32[3], %db: f32[1] = ai.onnx.preview.training.Gradient(%a, %b) {xs=["a", "b"], y="y"}
      %dc: f32[3] = ai.onnx.preview.training.Gradient(%c) {xs=["c"], y="e"}
      return %da, %db, %dc
    }
  )";
  EXPECT_EQ(run_passes(text, {"lower_gradient", "infer_shapes", "dce"}), run_passes(text, {"infer_shapes", "dce"}));
}

}  // namespace
}  // namespace onnxc::testing
