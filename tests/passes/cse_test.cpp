// cse: IR text before -> eliminate_common_subexpressions -> IR text expected.
#include <gtest/gtest.h>

#include "test_util.h"

namespace onnxc::testing {
namespace {

TEST(Cse, MergesRepeatedShapeChainsAndEqualConstants) {
  // Exporters emit Shape(x) and a Constant 0 per use; merging makes the consumers identical too.
  EXPECT_EQ(run_pass(R"(
    graph main(%x: f32[batch,seq]) {
      %zero = const i64[] {0}
      %zero_again = const i64[] {0}
      %s1: i64[2] = Shape(%x)
      %g1: i64[] = Gather(%s1, %zero) {axis=0}
      %s2: i64[2] = Shape(%x)
      %g2: i64[] = Gather(%s2, %zero_again) {axis=0}
      %m: i64[] = Mul(%g1, %g2)
      return %m: i64[]
    }
  )", "cse"), canonical(R"(
    graph main(%x: f32[batch,seq]) {
      %zero = const i64[] {0}
      %s1: i64[2] = Shape(%x)
      %g1: i64[] = Gather(%s1, %zero) {axis=0}
      %m: i64[] = Mul(%g1, %g1)
      return %m: i64[]
    }
  )"));
}

TEST(Cse, NearMissDifferentAttributesOrDtypes) {
  // Near miss: same op and inputs but different attributes; equal values with different dtypes.
  std::string before = R"(
    graph main(%x: f32[2,3]) {
      %a = const i64[] {1}
      %b = const i32[] {1}
      %t1: f32[3,2] = Transpose(%x) {perm=[1, 0]}
      %t2: f32[2,3] = Transpose(%x) {perm=[0, 1]}
      %o: f32[2,3] = Add(%t2, %x)
      return %t1: f32[3,2], %o: f32[2,3], %a: i64[], %b: i32[]
    }
  )";
  EXPECT_EQ(run_pass(before, "cse"), canonical(before));
}

TEST(Cse, NearMissGraphOutputsKeepTheirNames) {
  // Near miss: both values are graph outputs; merging would rename one of the model's outputs.
  std::string before = R"(
    graph main(%x: f32[2]) {
      %a: f32[2] = Neg(%x)
      %b: f32[2] = Neg(%x)
      return %a: f32[2], %b: f32[2]
    }
  )";
  EXPECT_EQ(run_pass(before, "cse"), canonical(before));
}

TEST(Cse, NearMissRandomOps) {
  // Near miss: two draws from RandomNormalLike are different values.
  std::string before = R"(
    graph main(%x: f32[2]) {
      %r1: f32[2] = RandomNormalLike(%x)
      %r2: f32[2] = RandomNormalLike(%x)
      %s: f32[2] = Add(%r1, %r2)
      return %s: f32[2]
    }
  )";
  EXPECT_EQ(run_pass(before, "cse"), canonical(before));
}

}  // namespace
}  // namespace onnxc::testing
