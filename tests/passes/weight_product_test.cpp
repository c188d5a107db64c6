// match_weight_product and scaled_bias (passes/weight_product.h), which both quantizing passes use:
// which products they take, the extents they read, and Gemm's C scaled by beta.
#include <gtest/gtest.h>

#include "passes/weight_product.h"
#include "test_util.h"

namespace onnxc::testing {
namespace {

std::string matrix(const std::string& name, int rows, int cols) {
  std::string v;
  for (int i = 0; i < rows * cols; ++i) v += (i ? ", " : "") + std::to_string(i % 5);
  return "      %" + name + " = const f32[" + std::to_string(rows) + "," + std::to_string(cols) + "] {" + v + "}\n";
}

const ir::Node* producer(const ir::Graph& g, const std::string& name) {
  for (const ir::Node* n : g.nodes())
    if (n->num_outputs() && n->output(0) && n->output(0)->name() == name) return n;
  return nullptr;
}

const char* kProducts =
    "      %c = const f32[1,24] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}\n"
    "      %mm: f32[m,24] = MatMul(%x, %w)\n"
    "      %gt: f32[m,24] = Gemm(%x, %wt, %c) {transB=1, beta=0.5}\n"
    "      %ta: f32[m,24] = Gemm(%xt, %w) {transA=1}\n"
    "      %al: f32[m,24] = Gemm(%x, %w) {alpha=2}\n"
    "      %rt: f32[m,24] = MatMul(%x, %v)\n"
    "      %sm: f32[m,8] = MatMul(%x, %small)\n"
    "      %i: i32[m,24] = MatMul(%xi, %wi)\n";

ir::Model products() {
  std::string text = "    graph main(%x: f32[m,16], %xt: f32[16,m], %v: f32[16,24], %xi: i32[m,16]) {\n" +
                     matrix("w", 16, 24) + matrix("wt", 24, 16) + matrix("small", 16, 8) +
                     "      %wi = const i32[16,2] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 1, 2, 3, 4, 5, 6, "
                     "7, 8, 9, 10, 11, 12, 13, 14, 15, 16}\n" +
                     kProducts + "      return %mm, %gt, %ta, %al, %rt, %sm, %i\n    }\n";
  return parse_model(dedent(text));
}

TEST(WeightProduct, MatMulAndGemmWithAConstantWeight) {
  ir::Model m = products();
  auto mm = passes::match_weight_product(*producer(*m.graph, "mm"), 16);
  ASSERT_TRUE(mm.has_value());
  EXPECT_EQ("x", mm->a->name());
  EXPECT_EQ("w", mm->w->name());
  EXPECT_FALSE(mm->trans_b);
  EXPECT_EQ(16, mm->k);
  EXPECT_EQ(24, mm->n);
  EXPECT_EQ(nullptr, mm->bias);

  auto gt = passes::match_weight_product(*producer(*m.graph, "gt"), 16);
  ASSERT_TRUE(gt.has_value());
  EXPECT_TRUE(gt->trans_b);
  EXPECT_EQ(16, gt->k);  // W^T is [N, K]
  EXPECT_EQ(24, gt->n);
  ASSERT_NE(nullptr, gt->bias);
  EXPECT_EQ(0.5f, gt->beta);
}

TEST(WeightProduct, NearMissesAreNotMatched) {
  // transA, alpha != 1, a run-time weight, N below the minimum, an integer product.
  ir::Model m = products();
  for (const char* name : {"ta", "al", "rt", "sm", "i"}) {
    SCOPED_TRACE(name);
    EXPECT_FALSE(passes::match_weight_product(*producer(*m.graph, name), 16).has_value());
  }
  EXPECT_TRUE(passes::match_weight_product(*producer(*m.graph, "sm"), 8).has_value());  // a lower minimum
}

TEST(WeightProduct, ScaledBiasFoldsBetaAndReshapes) {
  ir::Model m = products();
  auto gt = passes::match_weight_product(*producer(*m.graph, "gt"), 16);
  ASSERT_TRUE(gt.has_value());
  ir::Value* row = passes::scaled_bias(*m.graph, *gt, {24});
  ASSERT_NE(gt->bias, row);
  ASSERT_TRUE(row->is_constant());
  EXPECT_EQ(std::vector<int64_t>{24}, row->constant().dims());
  for (int i = 0; i < 24; ++i) EXPECT_EQ(0.5f * static_cast<float>(i + 1), row->constant().data<float>()[i]);
  EXPECT_EQ(1.0f, gt->bias->constant().data<float>()[0]);  // C itself is left as it was

  gt->beta = 1.0f;  // beta 1 and C's own shape: C itself, no copy
  EXPECT_EQ(gt->bias, passes::scaled_bias(*m.graph, *gt, {1, 24}));
  EXPECT_NE(gt->bias, passes::scaled_bias(*m.graph, *gt, {24}));
}

}  // namespace
}  // namespace onnxc::testing
