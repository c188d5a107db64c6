// fold_batch_norm: which affine maps after a Conv fold into its weights and bias, and the folded
// values. The convolutions' values, folded against unfolded, are checked in
// tests/codegen/lower_conv_test.cpp (the IR evaluator has no Conv).
#include <gtest/gtest.h>

#include "test_util.h"

namespace onnxc::testing {
namespace {

const std::vector<std::string> kPasses = {"fold_batch_norm", "infer_shapes", "dce"};

TEST(FoldBatchNorm, BatchNormIntoConvWithoutBias) {
  // s = γ/√σ² = {2, 0.5}, t = β − μ·s = {-1, -1}: W' = W·s, B' = t.
  EXPECT_EQ(run_passes(R"(
    graph main(%x: f32[batch,1,3,3]) {
      %w = const f32[2,1,1,1] {1, 2}
      %g = const f32[2] {4, 2}
      %b = const f32[2] {1, 0}
      %m = const f32[2] {1, 2}
      %v = const f32[2] {4, 16}
      %c: f32[batch,2,3,3] = Conv(%x, %w) {kernel_shape=[1, 1]}
      %y: f32[batch,2,3,3] = BatchNormalization(%c, %g, %b, %m, %v) {epsilon=0}
      return %y
    }
  )", kPasses), canonical(R"(
    graph main(%x: f32[batch,1,3,3]) {
      %y/folded_w = const f32[2,1,1,1] {2, 1}
      %y/folded_b = const f32[2] {-1, -1}
      %y: f32[batch,2,3,3] = Conv(%x, %y/folded_w, %y/folded_b) {kernel_shape=[1, 1]}
      return %y: f32[batch,2,3,3]
    }
  )"));
}

TEST(FoldBatchNorm, MulThenAddChainWithBias) {
  // (conv + B)·{3, -1} + {0.5, 2}: W' = W·{3, -1}, B' = B·{3, -1} + {0.5, 2}.
  EXPECT_EQ(run_passes(R"(
    graph main(%x: f32[1,1,2,2]) {
      %w = const f32[2,1,1,1] {1, 2}
      %bias = const f32[2] {1, 1}
      %s = const f32[2,1,1] {3, -1}
      %t = const f32[1,2,1,1] {0.5, 2}
      %c: f32[1,2,2,2] = Conv(%x, %w, %bias) {kernel_shape=[1, 1]}
      %p: f32[1,2,2,2] = Mul(%s, %c)
      %y: f32[1,2,2,2] = Add(%p, %t)
      return %y
    }
  )", kPasses), canonical(R"(
    graph main(%x: f32[1,1,2,2]) {
      %y/folded_w = const f32[2,1,1,1] {3, -2}
      %y/folded_b = const f32[2] {3.5, 1}
      %y: f32[1,2,2,2] = Conv(%x, %y/folded_w, %y/folded_b) {kernel_shape=[1, 1]}
      return %y: f32[1,2,2,2]
    }
  )"));
}

TEST(FoldBatchNorm, NearMissesStay) {
  // Must not fold: a Conv output read twice (the other reader needs the unscaled value), a Mul
  // whose constant varies along the width (not per channel), an Add of a run-time tensor, and a
  // BatchNormalization in training mode (its statistics come from the batch).
  std::string before = R"(
    graph main(%x: f32[1,1,2,3], %r: f32[1,2,2,3]) {
      %w = const f32[2,1,1,1] {1, 2}
      %s = const f32[3] {1, 2, 3}
      %g = const f32[2] {1, 1}
      %gc = const f32[2,1,1] {2, 2}
      %z = const f32[2] {0, 0}
      %c1: f32[1,2,2,3] = Conv(%x, %w) {kernel_shape=[1, 1]}
      %y1: f32[1,2,2,3] = Mul(%c1, %gc)
      %c2: f32[1,2,2,3] = Conv(%x, %w) {kernel_shape=[1, 1]}
      %y2: f32[1,2,2,3] = Mul(%c2, %s)
      %c3: f32[1,2,2,3] = Conv(%x, %w) {kernel_shape=[1, 1]}
      %y3: f32[1,2,2,3] = Add(%c3, %r)
      %c4: f32[1,2,2,3] = Conv(%x, %w) {kernel_shape=[1, 1]}
      %y4: f32[1,2,2,3] = BatchNormalization(%c4, %g, %z, %z, %g) {training_mode=1}
      return %c1, %y1, %y2, %y3, %y4
    }
  )";
  EXPECT_EQ(run_passes(before, kPasses), canonical(before));
}

}  // namespace
}  // namespace onnxc::testing
