// fold_matmul_batch: IR text before -> pass (+ infer_shapes, dce) -> IR text expected.
#include <gtest/gtest.h>

#include "test_util.h"

namespace onnxc::testing {
namespace {

TEST(FoldMatMulBatch, SeqFirstProjectionWithBiasAndResidual) {
  // nn.MultiheadAttention's seq-first projection: [seq, batch, K] x W is one 2-D product; the bias
  // and the residual stay behind it (the GEMM's epilogue) and one Reshape restores the shape.
  EXPECT_EQ(run_passes(R"(
    graph main(%x: f32[seq,batch,4], %r: f32[seq,batch,2]) {
      %w = const f32[4,2] {1, 2, 3, 4, 5, 6, 7, 8}
      %bias = const f32[1,1,2] {1, 2}
      %y: f32[seq,batch,2] = MatMul(%x, %w)
      %z: f32[seq,batch,2] = Add(%bias, %y)
      %o: f32[seq,batch,2] = Add(%z, %r)
      %s: f32[seq,batch,2] = Relu(%o)
      return %s
    }
  )", {"fold_matmul_batch", "infer_shapes", "dce"}), canonical(R"(
    graph main(%x: f32[seq,batch,4], %r: f32[seq,batch,2]) {
      %w = const f32[4,2] {1, 2, 3, 4, 5, 6, 7, 8}
      %x/rows_shape = const i64[2] {-1, 4}
      %bias/row = const f32[2] {1, 2}
      %r/rows_shape = const i64[2] {-1, 2}
      %x/rows: f32[batch*seq,4] = Reshape(%x, %x/rows_shape)
      %y: f32[batch*seq,2] = MatMul(%x/rows, %w)
      %z: f32[batch*seq,2] = Add(%bias/row, %y)
      %r/rows: f32[batch*seq,2] = Reshape(%r, %r/rows_shape)
      %o: f32[batch*seq,2] = Add(%z, %r/rows)
      %o/shape: i64[3] = onnxc.SymbolicShape(%x) {dims=["seq", "batch", "2"]}
      %o/unfolded: f32[seq,batch,2] = Reshape(%o, %o/shape)
      %s: f32[seq,batch,2] = Relu(%o/unfolded)
      return %s: f32[seq,batch,2]
    }
  )"));
}

TEST(FoldMatMulBatch, NearMisses) {
  // Must not fire: B has batch dims of its own (attention's Q x K^T); A is already 2-D; K is symbolic.
  std::string before = R"(
    graph main(%q: f32[b,4,s,8], %k: f32[b,4,8,s], %a: f32[s,8], %u: f32[b,s,n], %v: f32[n,3]) {
      %w = const f32[8,2] {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8}
      %sc: f32[b,4,s,s] = MatMul(%q, %k)
      %p: f32[s,2] = MatMul(%a, %w)
      %t: f32[b,s,3] = MatMul(%u, %v)
      return %sc, %p, %t
    }
  )";
  EXPECT_EQ(run_passes(before, {"fold_matmul_batch", "infer_shapes", "dce"}), canonical(before));
}

}  // namespace
}  // namespace onnxc::testing
