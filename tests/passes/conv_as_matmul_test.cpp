// conv_as_matmul: which convolutions become one GEMM over their patches, and the form they take.
// The values are checked end to end against torch in tests/models/conv (the IR evaluator has no Conv).
#include <gtest/gtest.h>

#include "test_util.h"

namespace onnxc::testing {
namespace {

const std::vector<std::string> kPasses = {"conv_as_matmul", "infer_shapes", "dce"};

TEST(ConvAsMatMul, PatchEmbeddingWithBias) {
  // 2x2 windows, stride 2: the patches [batch, C·2·2, 2·3] are one GEMM's columns, W [M, C·2·2] its rows.
  EXPECT_EQ(run_passes(R"(
    graph main(%x: f32[batch,1,4,6]) {
      %w = const f32[2,1,2,2] {1, 2, 3, 4, 5, 6, 7, 8}
      %b = const f32[2] {1, -1}
      %y: f32[batch,2,2,3] = Conv(%x, %w, %b) {kernel_shape=[2, 2], strides=[2, 2]}
      return %y
    }
  )", kPasses), canonical(R"(
    graph main(%x: f32[batch,1,4,6]) {
      %y/patch_split = const i64[6] {0, 1, 2, 2, 3, 2}
      %y/patch_cols = const i64[3] {0, 4, 6}
      %w/rows = const f32[2,4] {1, 2, 3, 4, 5, 6, 7, 8}
      %b/column = const f32[2,1] {1, -1}
      %y/shape = const i64[4] {0, 2, 2, 3}
      %y/patch_tiles: f32[batch,1,2,2,3,2] = Reshape(%x, %y/patch_split)
      %y/patch_major: f32[batch,1,2,2,2,3] = Transpose(%y/patch_tiles) {perm=[0, 1, 3, 5, 2, 4]}
      %y/patches: f32[batch,4,6] = Reshape(%y/patch_major, %y/patch_cols)
      %y/product: f32[batch,2,6] = MatMul(%w/rows, %y/patches)
      %y/biased: f32[batch,2,6] = Add(%y/product, %b/column)
      %y: f32[batch,2,2,3] = Reshape(%y/biased, %y/shape)
      return %y: f32[batch,2,2,3]
    }
  )"));
}

TEST(ConvAsMatMul, OverlapsGapsAndGroupsStay) {
  // Must not fire: windows that overlap (stride < kernel), padding, dilation, groups, an input
  // the windows do not tile (5 is no multiple of 2), a weight computed at run time, float64, and a
  // pointwise conv (codegen's implicit GEMM runs it and fuses its epilogue).
  std::string before = R"(
    graph main(%x: f32[1,2,4,4], %odd: f32[1,2,5,4], %wr: f32[2,2,2,2], %d: f64[1,2,4,4]) {
      %w = const f32[2,2,2,2] {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8}
      %wg = const f32[2,1,2,2] {1, 2, 3, 4, 5, 6, 7, 8}
      %w1 = const f32[2,2,1,1] {1, 2, 3, 4}
      %wd = const f64[2,2,2,2] {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8}
      %a: f32[1,2,3,3] = Conv(%x, %w) {kernel_shape=[2, 2]}
      %b: f32[1,2,3,3] = Conv(%x, %w) {strides=[2, 2], pads=[1, 1, 1, 1]}
      %c: f32[1,2,1,1] = Conv(%x, %w) {strides=[2, 2], dilations=[2, 2]}
      %e: f32[1,2,2,2] = Conv(%x, %wg) {strides=[2, 2], group=2}
      %f: f32[1,2,2,2] = Conv(%odd, %w) {strides=[2, 2]}
      %g: f32[1,2,2,2] = Conv(%x, %wr) {strides=[2, 2]}
      %h: f64[1,2,2,2] = Conv(%d, %wd) {strides=[2, 2]}
      %p: f32[1,2,4,4] = Conv(%x, %w1) {kernel_shape=[1, 1]}
      return %a, %b, %c, %e, %f, %g, %h, %p
    }
  )";
  EXPECT_EQ(run_passes(before, kPasses), canonical(before));
}

}  // namespace
}  // namespace onnxc::testing
