// constant_folding: IR text before -> fold_constants -> IR text expected.
#include <gtest/gtest.h>

#include "ir/eval/eval.h"
#include "passes/constant_folding.h"
#include "test_util.h"

namespace onnxc::testing {
namespace {

TEST(ConstantFolding, FoldsConstantNodesAndChainsKeepingNames) {
  EXPECT_EQ(run_pass(R"(
    graph main(%x: f32[12]) {
      %a: i64[] = Constant() {value=tensor i64[] {3}}
      %b: i64[1] = Constant() {value_ints=[4]}
      %c: i64[1] = Mul(%a, %b)
      %d: f32[] = Constant() {value_float=0.5}
      %y: f32[12] = Mul(%x, %d)
      %z: f32[12] = Reshape(%y, %c)
      return %z: f32[12]
    }
  )", "constant_folding"), canonical(R"(
    graph main(%x: f32[12]) {
      %a = const i64[] {3}
      %b = const i64[1] {4}
      %c = const i64[1] {12}
      %d = const f32[] {0.5}
      %y: f32[12] = Mul(%x, %d)
      %z: f32[12] = Reshape(%y, %c)
      return %z: f32[12]
    }
  )"));
}

TEST(ConstantFolding, FoldsShapeAndSizeOfStaticShapes) {
  EXPECT_EQ(run_pass(R"(
    graph main(%x: f32[2,3,4], %y: f32[batch,3,4]) {
      %zero = const i64[1] {0}
      %s: i64[3] = Shape(%x)
      %t: i64[2] = Shape(%y) {start=1}
      %n: i64[] = Size(%x)
      %n1: i64[1] = Unsqueeze(%n, %zero)
      %o: i64[6] = Concat(%s, %t, %n1) {axis=0}
      %r: f32[?r] = Reshape(%y, %o)
      return %r: f32[?r]
    }
  )", "constant_folding"), canonical(R"(
    graph main(%x: f32[2,3,4], %y: f32[batch,3,4]) {
      %zero = const i64[1] {0}
      %s = const i64[3] {2, 3, 4}
      %t = const i64[2] {3, 4}
      %n = const i64[] {24}
      %n1 = const i64[1] {24}
      %o = const i64[6] {2, 3, 4, 3, 4, 24}
      %r: f32[?r] = Reshape(%y, %o)
      return %r: f32[?r]
    }
  )"));
}

TEST(ConstantFolding, NearMissSymbolicShapeAndGraphOutput) {
  // Near miss: Shape of a symbolic value is not constant; a constant-input node that produces a
  // graph output stays a node so the output keeps being computed under its name.
  std::string before = R"(
    graph main(%y: f32[batch,3]) {
      %a = const i64[] {3}
      %s: i64[2] = Shape(%y)
      %o: i64[] = Neg(%a)
      return %s: i64[2], %o: i64[]
    }
  )";
  EXPECT_EQ(run_pass(before, "constant_folding"), canonical(before));
}

TEST(ConstantFolding, NearMissGrowthLimit) {
  // Near miss: Expand would turn 3 elements into 3*4096; that is a broadcast, not a constant.
  std::string before = R"(
    graph main(%x: f32[4096,3]) {
      %v = const f32[3] {1, 2, 3}
      %s = const i64[2] {4096, 3}
      %e: f32[4096,3] = Expand(%v, %s)
      %o: f32[4096,3] = Add(%x, %e)
      return %o: f32[4096,3]
    }
  )";
  EXPECT_EQ(run_pass(before, "constant_folding"), canonical(before));
}

TEST(ConstantFolding, NumericMatchesEvaluatorOnFoldedChain) {
  // The folded constant equals evaluating the original nodes one by one.
  ir::Model m = parse_model(dedent(R"(
    graph main(%x: f32[2,3]) {
      %w = const f32[2,3] {1, 2, 3, 4, 5, 6}
      %t: f32[3,2] = Transpose(%w) {perm=[1, 0]}
      %s: f32[3,2] = Sqrt(%t)
      %o: f32[3,2] = Add(%s, %s)
      %y: f32[3,2] = Mul(%o, %o)
      %z: f32[2,3] = Transpose(%y) {perm=[1, 0]}
      %r: f32[2,3] = Add(%x, %z)
      return %r: f32[2,3]
    }
  )"));
  ASSERT_TRUE(passes::fold_constants(m));
  const ir::Value* z = m.graph->find_value("z");
  ASSERT_TRUE(z && z->is_constant());
  const float w[] = {1, 2, 3, 4, 5, 6};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(static_cast<float>(z->constant().get_f64(i)), 4 * w[i]);
}

}  // namespace
}  // namespace onnxc::testing
