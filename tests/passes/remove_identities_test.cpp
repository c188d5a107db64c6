// remove_identities: IR text before -> pass (+ dce) -> IR text expected.
#include <gtest/gtest.h>

#include "test_util.h"

namespace onnxc::testing {
namespace {

TEST(RemoveIdentities, ExporterNoise) {
  // What torch.onnx.export leaves around attention scores and masks.
  EXPECT_EQ(run_passes(R"(
    graph main(%s: f32[batch,seq,seq], %m: bool[batch,1,seq], %shape: i64[3]) {
      %one = const f32[] {1}
      %ones = const f32[2] {1, 1}
      %zero = const f32[] {0}
      %a: f32[batch,seq,seq] = Mul(%one, %s)
      %b: f32[batch,seq,seq] = Div(%a, %one)
      %c: f32[batch,seq,seq] = Sub(%b, %zero)
      %d: f32[batch,seq,seq] = Identity(%c)
      %e: f32[batch,seq,seq] = Reshape(%d, %shape)
      %f: f32[batch,seq,seq] = Transpose(%e) {perm=[0, 1, 2]}
      %mb: bool[batch,1,seq] = Cast(%m) {to=9}
      %g: f32[batch,seq,seq] = Expand(%f, %shape)
      %o: f32[batch,seq,seq] = Where(%mb, %zero, %g)
      return %o
    }
  )", {"remove_identities", "dce"}), canonical(R"(
    graph main(%s: f32[batch,seq,seq], %m: bool[batch,1,seq], %shape: i64[3]) {
      %zero = const f32[] {0}
      %o: f32[batch,seq,seq] = Where(%m, %zero, %s)
      return %o: f32[batch,seq,seq]
    }
  )"));
}

TEST(RemoveIdentities, NearMisses) {
  // Near misses: x + 0 is not exact for x = -0; Mul by 1 that broadcasts x to a larger shape;
  // Mul by a constant that is not all ones; a Cast that changes the dtype; a real Transpose; a
  // graph output (its name is the interface).
  std::string before = R"(
    graph main(%x: f32[4], %y: f32[2,4]) {
      %zero = const f32[] {0}
      %one = const f32[2,4] {1, 1, 1, 1, 1, 1, 1, 1}
      %almost = const f32[2] {1, 2}
      %a: f32[4] = Add(%x, %zero)
      %b: f32[2,4] = Mul(%a, %one)
      %c: f32[2,4] = Mul(%b, %y)
      %d: f32[4,2] = Transpose(%c) {perm=[1, 0]}
      %e: f32[4,2] = Mul(%d, %almost)
      %f: f16[4,2] = Cast(%e) {to=10}
      %g: f16[4,2] = Identity(%f)
      return %g: f16[4,2]
    }
  )";
  EXPECT_EQ(run_passes(before, {"remove_identities", "dce"}), canonical(before));
}

// transformers 5's DynamicCache exports torch.cat of a lone tensor before the key cache's Concat: a
// one-input Concat is its input (so the cache's Concat reads the graph input); two inputs stay.
TEST(RemoveIdentities, OneInputConcat) {
  EXPECT_EQ(run_passes(R"(
    graph main(%past: f32[1,2,p,16], %k: f32[1,2,1,16]) {
      %lone: f32[1,2,p,16] = Concat(%past) {axis=-2}
      %present: f32[1,2,p+1,16] = Concat(%lone, %k) {axis=-2}
      return %present: f32[1,2,p+1,16]
    }
  )", {"remove_identities", "dce"}), canonical(R"(
    graph main(%past: f32[1,2,p,16], %k: f32[1,2,1,16]) {
      %present: f32[1,2,p+1,16] = Concat(%past, %k) {axis=-2}
      return %present: f32[1,2,p+1,16]
    }
  )"));
}

// Dropout passes its input through in inference mode and, in training mode, with a constant ratio of
// 0 (torchvision's Swin); with a ratio known only at run time, or its mask read, it stays.
TEST(RemoveIdentities, DropoutThatPassesThrough) {
  std::string before = R"(
    graph main(%x: f32[4], %r: f32[]) {
      %zero = const f32[] {0}
      %yes = const bool[] {1}
      %a: f32[4] = Dropout(%x, %zero, %yes)
      %b: f32[4] = Dropout(%a)
      %c: f32[4] = Dropout(%b, %r, %yes)
      %d: f32[4], %mask: bool[4] = Dropout(%c, %zero)
      %e: f32[4] = Neg(%d)
      return %e: f32[4], %mask: bool[4]
    }
  )";
  std::string after = R"(
    graph main(%x: f32[4], %r: f32[]) {
      %zero = const f32[] {0}
      %yes = const bool[] {1}
      %c: f32[4] = Dropout(%x, %r, %yes)
      %d: f32[4], %mask: bool[4] = Dropout(%c, %zero)
      %e: f32[4] = Neg(%d)
      return %e: f32[4], %mask: bool[4]
    }
  )";
  EXPECT_EQ(run_passes(before, {"remove_identities", "dce"}), canonical(after));
}

}  // namespace
}  // namespace onnxc::testing
