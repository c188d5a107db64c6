// simplify_constant_of_shape: IR text before -> pass (+ dce) -> IR text expected.
#include <gtest/gtest.h>

#include "test_util.h"

namespace onnxc::testing {
namespace {

TEST(SimplifyConstantOfShape, BroadcastAbsorbsTheFill) {
  // The encoder's padding mask: Where(mask, -inf, zeros shaped like the mask) needs no zeros tensor.
  EXPECT_EQ(run_passes(R"(
    graph main(%mask: bool[4*batch,1,seq], %s: i64[3]) {
      %ninf = const f32[] {-inf}
      %zeros: f32[4*batch,1,seq] = ConstantOfShape(%s) {value=tensor f32[1] {0}}
      %m: f32[4*batch,1,seq] = Where(%mask, %ninf, %zeros)
      return %m
    }
  )", {"simplify_constant_of_shape", "dce"}), canonical(R"(
    graph main(%mask: bool[4*batch,1,seq], %s: i64[3]) {
      %ninf = const f32[] {-inf}
      %zeros_value = const f32[] {0}
      %m: f32[4*batch,1,seq] = Where(%mask, %ninf, %zeros_value)
      return %m: f32[4*batch,1,seq]
    }
  )"));
}

TEST(SimplifyConstantOfShape, OtherUsesBecomeExpand) {
  // The decoder's causal mask: Trilu needs the full matrix, so the fill becomes a broadcast.
  EXPECT_EQ(run_passes(R"(
    graph main(%x: f32[batch,seq,64], %s: i64[2]) {
      %one = const i64[] {1}
      %full: f32[seq,seq] = ConstantOfShape(%s) {value=tensor f32[1] {-inf}}
      %causal: f32[seq,seq] = Trilu(%full, %one) {upper=1}
      return %causal
    }
  )", {"simplify_constant_of_shape", "dce"}), canonical(R"(
    graph main(%x: f32[batch,seq,64], %s: i64[2]) {
      %one = const i64[] {1}
      %full_value = const f32[] {-inf}
      %full: f32[seq,seq] = Expand(%full_value, %s)
      %causal: f32[seq,seq] = Trilu(%full, %one) {upper=1}
      return %causal: f32[seq,seq]
    }
  )"));
}

TEST(SimplifyConstantOfShape, NearMissFillSetsTheOutputShape) {
  // Near miss for the scalar rewrite: %y is [seq], so the fill's shape [seq,seq] makes the output
  // [seq,seq]; a scalar would shrink it. It becomes an Expand instead (same tensor).
  EXPECT_EQ(run_passes(R"(
    graph main(%y: f32[seq], %s: i64[2]) {
      %full: f32[seq,seq] = ConstantOfShape(%s) {value=tensor f32[1] {1}}
      %o: f32[seq,seq] = Add(%y, %full)
      return %o
    }
  )", {"simplify_constant_of_shape", "dce"}), canonical(R"(
    graph main(%y: f32[seq], %s: i64[2]) {
      %full_value = const f32[] {1}
      %full: f32[seq,seq] = Expand(%full_value, %s)
      %o: f32[seq,seq] = Add(%y, %full)
      return %o: f32[seq,seq]
    }
  )"));
}

}  // namespace
}  // namespace onnxc::testing
