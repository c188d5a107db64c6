// fuse_gelu: the erf and tanh spellings -> Gelu (opset 20), a near miss, numerics.
#include <gtest/gtest.h>

#include "fusion_util.h"

namespace onnxc::testing {
namespace {

const std::vector<std::string> kPasses = {"canonicalize", "fuse_gelu", "dce"};

// torch.nn.GELU() as torch.onnx.export writes it.
const char* kErf = R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%x: f32[2,5]) {
    %sqrt2 = const f32[] {1.4142135}
    %one = const f32[] {1}
    %half = const f32[] {0.5}
    %a: f32[2,5] = Div(%x, %sqrt2)
    %e: f32[2,5] = Erf(%a)
    %p: f32[2,5] = Add(%e, %one)
    %m: f32[2,5] = Mul(%x, %p)
    %y: f32[2,5] = Mul(%m, %half)
    return %y
  }
)";

TEST(FuseGelu, ErfForm) {
  passes::FusionReport report;
  EXPECT_EQ(fuse(kErf, kPasses, &report), canonical(R"(
    graph main(%x: f32[2,5]) {
      %y: f32[2,5] = Gelu(%x) {approximate="none"}
      return %y: f32[2,5]
    }
  )"));
  ASSERT_EQ(report.fused.size(), 1u);
  EXPECT_EQ(report.fused[0].rule, "gelu_erf");
  EXPECT_EQ(report.fused[0].nodes_replaced, 5);
  expect_same_values(kErf, kPasses);
}

// HF gelu_new: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), grouped (0.5*x)*(1+t).
const char* kTanh = R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%x: f32[2,5]) {
    %three = const f32[] {3}
    %c2 = const f32[] {0.044715}
    %c1 = const f32[] {0.7978846}
    %one = const f32[] {1}
    %half = const f32[] {0.5}
    %h: f32[2,5] = Mul(%half, %x)
    %cube: f32[2,5] = Pow(%x, %three)
    %k: f32[2,5] = Mul(%c2, %cube)
    %in: f32[2,5] = Add(%x, %k)
    %sc: f32[2,5] = Mul(%c1, %in)
    %t: f32[2,5] = Tanh(%sc)
    %p: f32[2,5] = Add(%one, %t)
    %y: f32[2,5] = Mul(%h, %p)
    return %y
  }
)";

TEST(FuseGelu, TanhForm) {
  EXPECT_EQ(fuse(kTanh, kPasses), canonical(R"(
    graph main(%x: f32[2,5]) {
      %y: f32[2,5] = Gelu(%x) {approximate="tanh"}
      return %y: f32[2,5]
    }
  )"));
  expect_same_values(kTanh, kPasses);
}

// gelu_fast: x*0.7978845608*(1 + 0.044715*x*x), the 0.5 grouped with (1 + t); and x * (1/sqrt2).
TEST(FuseGelu, FastTanhAndMulErf) {
  const char* fast = R"(
    graph main(%x: f32[3,4]) {
      %c2 = const f32[] {0.044715}
      %c1 = const f32[] {0.7978846}
      %one = const f32[] {1}
      %half = const f32[] {0.5}
      %xx: f32[3,4] = Mul(%x, %x)
      %k: f32[3,4] = Mul(%xx, %c2)
      %in: f32[3,4] = Add(%k, %one)
      %xc: f32[3,4] = Mul(%x, %c1)
      %sc: f32[3,4] = Mul(%xc, %in)
      %t: f32[3,4] = Tanh(%sc)
      %p: f32[3,4] = Add(%t, %one)
      %q: f32[3,4] = Mul(%p, %half)
      %y: f32[3,4] = Mul(%x, %q)
      return %y
    }
  )";
  expect_same_values(fast, kPasses);
  const char* mul_erf = R"(
    graph main(%x: f32[3,4]) {
      %r = const f32[] {0.70710677}
      %one = const f32[] {1}
      %half = const f32[] {0.5}
      %a: f32[3,4] = Mul(%x, %r)
      %e: f32[3,4] = Erf(%a)
      %p: f32[3,4] = Add(%one, %e)
      %h: f32[3,4] = Mul(%x, %half)
      %y: f32[3,4] = Mul(%p, %h)
      return %y
    }
  )";
  expect_same_values(mul_erf, kPasses);
}

// BLOOM's bloom_gelu_forward: x·0.5·(1 + tanh(0.79788456·x·(1 + 0.044715·x·x))), the products
// left to right as torch exports them: ((0.044715·x)·x) and ((0.79788456·x)·(1 + ·)).
TEST(FuseGelu, BloomGrouping) {
  std::string bloom = R"(
    model ir_version=8 opset=[ai.onnx:17]
    graph main(%x: f32[2,5]) {
      %c1 = const f32[] {0.79788456}
      %c2 = const f32[] {0.044715}
      %one = const f32[] {1}
      %half = const f32[] {0.5}
      %a: f32[2,5] = Mul(%x, %c1)
      %b: f32[2,5] = Mul(%c2, %x)
      %bx: f32[2,5] = Mul(%b, %x)
      %in: f32[2,5] = Add(%bx, %one)
      %sc: f32[2,5] = Mul(%a, %in)
      %t: f32[2,5] = Tanh(%sc)
      %p: f32[2,5] = Add(%t, %one)
      %h: f32[2,5] = Mul(%x, %half)
      %y: f32[2,5] = Mul(%h, %p)
      return %y
    }
  )";
  passes::FusionReport report;
  EXPECT_EQ(fuse(bloom, kPasses, &report), canonical(R"(
    graph main(%x: f32[2,5]) {
      %y: f32[2,5] = Gelu(%x) {approximate="tanh"}
      return %y: f32[2,5]
    }
  )"));
  expect_same_values(bloom, kPasses);
}

// Near miss: erf(x / 2) is not GELU (the constant must be sqrt(2)); expected == before.
TEST(FuseGelu, NearMissWrongConstant) {
  std::string before = R"(
    graph main(%x: f32[2,5]) {
      %two = const f32[] {1.5}
      %one = const f32[] {1}
      %half = const f32[] {0.5}
      %a: f32[2,5] = Div(%x, %two)
      %e: f32[2,5] = Erf(%a)
      %p: f32[2,5] = Add(%e, %one)
      %m: f32[2,5] = Mul(%x, %p)
      %y: f32[2,5] = Mul(%m, %half)
      return %y
    }
  )";
  passes::FusionReport report;
  EXPECT_EQ(fuse(before, {"fuse_gelu"}, &report), canonical(before));
  ASSERT_EQ(report.near_misses.size(), 1u);
  EXPECT_EQ(report.near_misses[0].rule, "gelu_erf");
  EXPECT_EQ(report.near_misses[0].reason, "Mul.in0.Mul.in1.Add.in0.Erf.in0.Div.in1: 'two' is not the constant 1.414214");
}

}  // namespace
}  // namespace onnxc::testing
