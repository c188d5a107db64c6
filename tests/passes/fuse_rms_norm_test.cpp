// fuse_rms_norm: LLaMA/T5/Mistral spellings -> RMSNormalization (opset 23), a near miss, numerics.
#include <gtest/gtest.h>

#include "fusion_util.h"

namespace onnxc::testing {
namespace {

const std::vector<std::string> kPasses = {"canonicalize", "fuse_rms_norm", "dce"};

// LLaMA's RMSNorm in fp32 at opset 17: x * rsqrt(mean(x^2) + eps) * w, rsqrt as Reciprocal(Sqrt).
const char* kLlama = R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%x: f32[2,3,4]) {
    %two = const f32[] {2}
    %eps = const f32[] {1e-06}
    %w = const f32[4] {1, 2, 3, 4}
    %sq: f32[2,3,4] = Pow(%x, %two)
    %ms: f32[2,3,1] = ReduceMean(%sq) {axes=[-1]}
    %ve: f32[2,3,1] = Add(%ms, %eps)
    %s: f32[2,3,1] = Sqrt(%ve)
    %r: f32[2,3,1] = Reciprocal(%s)
    %n: f32[2,3,4] = Mul(%x, %r)
    %y: f32[2,3,4] = Mul(%w, %n)
    return %y
  }
)";

TEST(FuseRmsNorm, Llama) {
  passes::FusionReport report;
  EXPECT_EQ(fuse(kLlama, kPasses, &report), canonical(R"(
    graph main(%x: f32[2,3,4]) {
      %w = const f32[4] {1, 2, 3, 4}
      %y: f32[2,3,4] = RMSNormalization(%x, %w) {axis=-1, epsilon=1e-06, stash_type=1}
      return %y: f32[2,3,4]
    }
  )"));
  EXPECT_EQ(report.counts().at("rms_norm"), 1);
  expect_same_values(kLlama, kPasses);
}

// T5 without a scale, x / sqrt(...), and the Pow(·, -0.5) spelling of rsqrt.
TEST(FuseRmsNorm, DivAndPowForms) {
  const char* div_form = R"(
    model ir_version=8 opset=[ai.onnx:18]
    graph main(%x: f32[2,3]) {
      %axes = const i64[1] {-1}
      %eps = const f32[] {1e-06}
      %sq: f32[2,3] = Mul(%x, %x)
      %ms: f32[2,1] = ReduceMean(%sq, %axes)
      %ve: f32[2,1] = Add(%ms, %eps)
      %s: f32[2,1] = Sqrt(%ve)
      %y: f32[2,3] = Div(%x, %s)
      return %y
    }
  )";
  EXPECT_EQ(fuse(div_form, kPasses), canonical(R"(
    graph main(%x: f32[2,3]) {
      %x_norm_scale = const f32[3] {1, 1, 1}
      %y: f32[2,3] = RMSNormalization(%x, %x_norm_scale) {axis=-1, epsilon=1e-06, stash_type=1}
      return %y: f32[2,3]
    }
  )"));
  expect_same_values(div_form, kPasses);
  const char* pow_form = R"(
    model ir_version=8 opset=[ai.onnx:18]
    graph main(%x: f32[2,3]) {
      %axes = const i64[1] {-1}
      %eps = const f32[] {1e-06}
      %half = const f32[] {-0.5}
      %w = const f32[3] {1, 2, 3}
      %sq: f32[2,3] = Mul(%x, %x)
      %ms: f32[2,1] = ReduceMean(%sq, %axes)
      %ve: f32[2,1] = Add(%ms, %eps)
      %r: f32[2,1] = Pow(%ve, %half)
      %n: f32[2,3] = Mul(%x, %r)
      %y: f32[2,3] = Mul(%n, %w)
      return %y
    }
  )";
  expect_same_values(pow_form, kPasses);
}

// LLaMA in fp16: statistics in fp32 between Casts, the scale applied in fp16.
TEST(FuseRmsNorm, HalfWithCasts) {
  EXPECT_EQ(fuse(R"(
    model ir_version=8 opset=[ai.onnx:17]
    graph main(%x: f16[2,4], %w: f16[4]) {
      %two = const f32[] {2}
      %eps = const f32[] {1e-05}
      %xf: f32[2,4] = Cast(%x) {to=1}
      %sq: f32[2,4] = Pow(%xf, %two)
      %ms: f32[2,1] = ReduceMean(%sq) {axes=[-1]}
      %ve: f32[2,1] = Add(%ms, %eps)
      %s: f32[2,1] = Sqrt(%ve)
      %r: f32[2,1] = Reciprocal(%s)
      %n: f32[2,4] = Mul(%xf, %r)
      %nh: f16[2,4] = Cast(%n) {to=10}
      %y: f16[2,4] = Mul(%w, %nh)
      return %y
    }
  )", kPasses), canonical(R"(
    graph main(%x: f16[2,4], %w: f16[4]) {
      %y: f16[2,4] = RMSNormalization(%x, %w) {axis=-1, epsilon=1e-05, stash_type=1}
      return %y: f16[2,4]
    }
  )"));
}

// Near miss: the eps is a graph input, not a constant (expected == before, at opset 23 already).
TEST(FuseRmsNorm, NearMissNonConstantEps) {
  std::string before = R"(
    model ir_version=8 opset=[ai.onnx:23]
    graph main(%x: f32[2,3], %eps: f32[]) {
      %axes = const i64[1] {-1}
      %sq: f32[2,3] = Mul(%x, %x)
      %ms: f32[2,1] = ReduceMean(%sq, %axes)
      %ve: f32[2,1] = Add(%ms, %eps)
      %s: f32[2,1] = Sqrt(%ve)
      %y: f32[2,3] = Div(%x, %s)
      return %y
    }
  )";
  passes::FusionReport report;
  EXPECT_EQ(fuse(before, kPasses, &report), canonical(before));
  ASSERT_EQ(report.near_misses.size(), 1u);
  EXPECT_EQ(report.near_misses[0].rule, "rms_norm");
  EXPECT_EQ(report.near_misses[0].reason, "Div.in1.Sqrt.in0.Add.in1: 'eps' is not a constant");
}

}  // namespace
}  // namespace onnxc::testing
