// fuse_layer_norm: each exporter spelling -> LayerNormalization, near misses with their reasons, and
// the fused graph evaluated against the unfused one.
#include <gtest/gtest.h>

#include "fusion_util.h"

namespace onnxc::testing {
namespace {

const std::vector<std::string> kPasses = {"canonicalize", "fuse_layer_norm", "dce"};

// torch.nn.LayerNorm at opset 13-17: Pow(d, 2), Div, scale and bias, axes as an attribute.
const char* kTorch = R"(
  model ir_version=8 opset=[ai.onnx:13]
  graph main(%x: f32[2,3,4]) {
    %two = const f32[] {2}
    %eps = const f32[] {1e-05}
    %w = const f32[4] {1, 2, 3, 4}
    %b = const f32[4] {0.5, 0.5, -1, 0}
    %mean: f32[2,3,1] = ReduceMean(%x) {axes=[-1]}
    %d: f32[2,3,4] = Sub(%x, %mean)
    %sq: f32[2,3,4] = Pow(%d, %two)
    %var: f32[2,3,1] = ReduceMean(%sq) {axes=[-1]}
    %ve: f32[2,3,1] = Add(%var, %eps)
    %s: f32[2,3,1] = Sqrt(%ve)
    %n: f32[2,3,4] = Div(%d, %s)
    %sc: f32[2,3,4] = Mul(%n, %w)
    %y: f32[2,3,4] = Add(%sc, %b)
    return %y
  }
)";

TEST(FuseLayerNorm, TorchExport) {
  passes::FusionReport report;
  EXPECT_EQ(fuse(kTorch, kPasses, &report), canonical(R"(
    graph main(%x: f32[2,3,4]) {
      %w = const f32[4] {1, 2, 3, 4}
      %b = const f32[4] {0.5, 0.5, -1, 0}
      %y: f32[2,3,4] = LayerNormalization(%x, %w, %b) {axis=-1, epsilon=1e-05, stash_type=1}
      return %y: f32[2,3,4]
    }
  )"));
  ASSERT_EQ(report.fused.size(), 1u);
  EXPECT_EQ(report.fused[0].rule, "layer_norm");
  EXPECT_EQ(report.fused[0].nodes_replaced, 9);
  EXPECT_EQ(report.counts().at("layer_norm"), 1);
}

TEST(FuseLayerNorm, TorchExportNumerics) { expect_same_values(kTorch, kPasses); }

// Reciprocal(Sqrt) times d, d*d instead of Pow, no scale or bias, over the last two axes, opset 18
// with axes as inputs: the scale becomes a constant of ones.
const char* kRsqrtTwoAxes = R"(
  model ir_version=8 opset=[ai.onnx:18]
  graph main(%x: f32[2,2,3]) {
    %axes = const i64[2] {-2, -1}
    %eps = const f32[] {1e-06}
    %mean: f32[2,1,1] = ReduceMean(%x, %axes)
    %d: f32[2,2,3] = Sub(%x, %mean)
    %sq: f32[2,2,3] = Mul(%d, %d)
    %var: f32[2,1,1] = ReduceMean(%sq, %axes)
    %ve: f32[2,1,1] = Add(%eps, %var)
    %s: f32[2,1,1] = Sqrt(%ve)
    %r: f32[2,1,1] = Reciprocal(%s)
    %y: f32[2,2,3] = Mul(%r, %d)
    return %y
  }
)";

TEST(FuseLayerNorm, ReciprocalNoAffineTwoAxes) {
  EXPECT_EQ(fuse(kRsqrtTwoAxes, kPasses), canonical(R"(
    graph main(%x: f32[2,2,3]) {
      %x_norm_scale = const f32[2,3] {1, 1, 1, 1, 1, 1}
      %y: f32[2,2,3] = LayerNormalization(%x, %x_norm_scale) {axis=-2, epsilon=1e-06, stash_type=1}
      return %y: f32[2,2,3]
    }
  )"));
  expect_same_values(kRsqrtTwoAxes, kPasses);
}

// A scale with leading 1s (a [1,1,4] constant) and no bias; symbolic batch dims.
TEST(FuseLayerNorm, ScaleOnlySymbolicBatch) {
  EXPECT_EQ(fuse(R"(
    graph main(%x: f32[batch,seq,4]) {
      %axes = const i64[1] {-1}
      %eps = const f32[] {1e-05}
      %w = const f32[1,1,4] {1, 2, 3, 4}
      %mean: f32[batch,seq,1] = ReduceMean(%x, %axes)
      %d: f32[batch,seq,4] = Sub(%x, %mean)
      %sq: f32[batch,seq,4] = Mul(%d, %d)
      %var: f32[batch,seq,1] = ReduceMean(%sq, %axes)
      %ve: f32[batch,seq,1] = Add(%var, %eps)
      %s: f32[batch,seq,1] = Sqrt(%ve)
      %n: f32[batch,seq,4] = Div(%d, %s)
      %y: f32[batch,seq,4] = Mul(%w, %n)
      return %y
    }
  )", kPasses), canonical(R"(
    graph main(%x: f32[batch,seq,4]) {
      %w_1 = const f32[4] {1, 2, 3, 4}
      %y: f32[batch,seq,4] = LayerNormalization(%x, %w_1) {axis=-1, epsilon=1e-05, stash_type=1}
      return %y: f32[batch,seq,4]
    }
  )"));
}

// A half-precision export: the statistics in fp32 between Casts, scale and bias in fp16.
TEST(FuseLayerNorm, HalfWithCasts) {
  EXPECT_EQ(fuse(R"(
    model ir_version=8 opset=[ai.onnx:17]
    graph main(%x: f16[2,4], %w: f16[4], %b: f16[4]) {
      %two = const f32[] {2}
      %eps = const f32[] {1e-05}
      %xf: f32[2,4] = Cast(%x) {to=1}
      %mean: f32[2,1] = ReduceMean(%xf) {axes=[-1]}
      %d: f32[2,4] = Sub(%xf, %mean)
      %sq: f32[2,4] = Pow(%d, %two)
      %var: f32[2,1] = ReduceMean(%sq) {axes=[-1]}
      %ve: f32[2,1] = Add(%var, %eps)
      %s: f32[2,1] = Sqrt(%ve)
      %n: f32[2,4] = Div(%d, %s)
      %nh: f16[2,4] = Cast(%n) {to=10}
      %sc: f16[2,4] = Mul(%nh, %w)
      %y: f16[2,4] = Add(%sc, %b)
      return %y
    }
  )", kPasses), canonical(R"(
    graph main(%x: f16[2,4], %w: f16[4], %b: f16[4]) {
      %y: f16[2,4] = LayerNormalization(%x, %w, %b) {axis=-1, epsilon=1e-05, stash_type=1}
      return %y: f16[2,4]
    }
  )"));
}

// Near misses (expected == before): the mean over the first axis; the centred value also used
// outside (a graph output), which fusing would have to recompute.
TEST(FuseLayerNorm, NearMisses) {
  std::string wrong_axis = R"(
    model ir_version=8 opset=[ai.onnx:23]
    graph main(%x: f32[2,4]) {
      %axes = const i64[1] {0}
      %eps = const f32[] {1e-05}
      %mean: f32[1,4] = ReduceMean(%x, %axes)
      %d: f32[2,4] = Sub(%x, %mean)
      %sq: f32[2,4] = Mul(%d, %d)
      %var: f32[1,4] = ReduceMean(%sq, %axes)
      %ve: f32[1,4] = Add(%var, %eps)
      %s: f32[1,4] = Sqrt(%ve)
      %y: f32[2,4] = Div(%d, %s)
      return %y
    }
  )";
  passes::FusionReport report;
  EXPECT_EQ(fuse(wrong_axis, kPasses, &report), canonical(wrong_axis));
  ASSERT_EQ(report.near_misses.size(), 1u);
  EXPECT_EQ(report.near_misses[0].reason, "the mean is not over the last axes of the input");
  EXPECT_EQ(report.near_misses[0].matched, 7);
  EXPECT_EQ(report.near_misses[0].where, "y");

  std::string shared = R"(
    model ir_version=8 opset=[ai.onnx:23]
    graph main(%x: f32[2,4]) {
      %axes = const i64[1] {-1}
      %eps = const f32[] {1e-05}
      %mean: f32[2,1] = ReduceMean(%x, %axes)
      %d: f32[2,4] = Sub(%x, %mean)
      %sq: f32[2,4] = Mul(%d, %d)
      %var: f32[2,1] = ReduceMean(%sq, %axes)
      %ve: f32[2,1] = Add(%var, %eps)
      %s: f32[2,1] = Sqrt(%ve)
      %y: f32[2,4] = Div(%d, %s)
      return %y, %d
    }
  )";
  report = {};
  EXPECT_EQ(fuse(shared, kPasses, &report), canonical(shared));
  ASSERT_EQ(report.near_misses.size(), 1u);
  EXPECT_EQ(report.near_misses[0].reason, "'d' (inside the match) is a graph output");
}

}  // namespace
}  // namespace onnxc::testing
