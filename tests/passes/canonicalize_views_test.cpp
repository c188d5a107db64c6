// Swin's shifted-window mask and BART's padding mask: the scores are viewed with a dim split out of
// the batch (windows; heads), the mask is added there, and the sum is viewed back. canonicalize adds the mask to the scores
// directly (expanded over the split dims only), so fuse_attention sees an ordinary additive mask;
// the values are the same sums. Near misses (the view does not come back to the scores' shape, or
// is read elsewhere) stay as they are.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "fusion_util.h"

namespace onnxc::testing {
namespace {

// As the default pipeline orders them: the split view, read only by the Shape that sizes the mask,
// folds away before fusion.
const std::vector<std::string> kPasses = {"canonicalize", "constant_folding", "simplify_shapes", "dce", "fuse_attention", "dce"};

// q, k, v: [windows·batch = 4, heads 2, tokens 3, 4]; the mask [1, windows 2, 1, 3, 3] holds -100
// where tokens of different regions meet, as torchvision writes it. `back` is the final view.
std::string swin(const std::string& back = "4, 2, 3, 3", const std::string& extra_use = "") {
  return R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[4,2,3,4], %k: f32[4,2,3,4], %v: f32[4,2,3,4]) {
    %split = const i64[5] {2, 2, 2, 3, 3}
    %back = const i64[4] {)" + back + R"(}
    %mask = const f32[1,2,1,3,3] {0, 0, -100, 0, 0, -100, -100, -100, 0,  0, -100, 0, -100, 0, -100, 0, -100, 0}
    %kt: f32[4,2,4,3] = Transpose(%k) {perm=[0, 1, 3, 2]}
    %s: f32[4,2,3,3] = MatMul(%q, %kt)
    %s5: f32[2,2,2,3,3] = Reshape(%s, %split)
    %m5: f32[2,2,2,3,3] = Add(%s5, %mask)
    %s4: f32[4,2,3,3] = Reshape(%m5, %back)
    %w: f32[4,2,3,3] = Softmax(%s4) {axis=-1}
    %y: f32[4,2,3,4] = MatMul(%w, %v)
)" + extra_use + R"(
    return %y
  }
)";
}

std::vector<std::string> ops_after(const std::string& text, passes::FusionReport* report) {
  ir::Model m = parse_model(dedent(text));
  run_with_report(m, kPasses, report);
  std::vector<std::string> ops;
  for (const ir::Node* n : m.graph->nodes()) ops.push_back(n->op_type());
  return ops;
}

TEST(CanonicalizeViews, ShiftedWindowMaskFuses) {
  passes::FusionReport report;
  std::vector<std::string> ops = ops_after(swin(), &report);
  std::string misses;
  for (const passes::NearMiss& nm : report.near_misses) misses += nm.rule + " at " + nm.where + ": " + nm.reason + "\n";
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Attention"), 1) << misses;
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Softmax"), 0);
  expect_same_values(swin(), kPasses);
}

// A view back to another shape is no identity of the scores: nothing to merge.
TEST(CanonicalizeViews, OtherShapesStay) {
  passes::FusionReport report;
  std::string g = swin("2, 4, 3, 3");
  g.replace(g.find("%s4: f32[4,2,3,3]"), 17, "%s4: f32[2,4,3,3]");
  g.replace(g.find("%w: f32[4,2,3,3]"), 16, "%w: f32[2,4,3,3]");
  g.replace(g.find("%y: f32[4,2,3,4] = MatMul(%w, %v)"), 33, "%y: f32[2,4,3,3] = Identity(%w)");
  g.replace(g.find("return %y"), 9, "return %y");
  std::vector<std::string> ops = ops_after(g, &report);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Reshape"), 2);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Attention"), 0);
}

// The split view also read elsewhere: it must stay, so nothing is rewritten.
TEST(CanonicalizeViews, SharedViewStays) {
  passes::FusionReport report;
  std::string g = swin("4, 2, 3, 3", "    %extra: f32[2,2,2,3,3] = Neg(%s5)");
  g.replace(g.find("return %y"), 9, "return %y, %extra");
  std::vector<std::string> ops = ops_after(g, &report);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Attention"), 0);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Reshape"), 2);
}

// BART: [batch·heads, t, s] scores (3-D bmm), the [b, 1, t, s] mask added through a [b, h, t, s]
// view; t and s are known only at run time, so the merged mask's shape is read from the mask.
std::string bart() {
  return R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[2*b,t,4], %k: f32[2*b,s,4], %v: f32[2*b,s,4], %mask: f32[b,1,t,s]) {
    %to4: i64[4] = onnxc.SymbolicShape(%mask) {dims=["b", "2", "t", "s"]}
    %to3: i64[3] = onnxc.SymbolicShape(%mask) {dims=["2*b", "t", "s"]}
    %kt: f32[2*b,4,s] = Transpose(%k) {perm=[0, 2, 1]}
    %s: f32[2*b,t,s] = MatMul(%q, %kt)
    %s4: f32[b,2,t,s] = Reshape(%s, %to4)
    %m4: f32[b,2,t,s] = Add(%s4, %mask)
    %s3: f32[2*b,t,s] = Reshape(%m4, %to3)
    %w: f32[2*b,t,s] = Softmax(%s3) {axis=-1}
    %y: f32[2*b,t,4] = MatMul(%w, %v)
    return %y
  }
)";
}

TEST(CanonicalizeViews, BartMaskThroughAHeadViewFuses) {
  passes::FusionReport report;
  std::vector<std::string> ops = ops_after(bart(), &report);
  std::string misses;
  for (const passes::NearMiss& nm : report.near_misses) misses += nm.rule + " at " + nm.where + ": " + nm.reason + "\n";
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Attention"), 1) << misses;
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Softmax"), 0);
  // Values at b = 3, t = 5, s = 7: the fused graph against the graph as written, with the mask
  // holding finfo.min in places (HF's padding), through the reference evaluator.
  ir::Model before = parse_model(dedent(bart())), after = parse_model(dedent(bart()));
  run_with_report(after, kPasses, &report);
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::map<std::string, ir::Tensor> in;
  for (auto [name, dims] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"q", {6, 5, 4}}, {"k", {6, 7, 4}}, {"v", {6, 7, 4}}, {"mask", {3, 1, 5, 7}}}) {
    ir::Tensor t(ir::DType::Float32, dims);
    for (int64_t i = 0; i < t.numel(); ++i)
      t.mutable_data<float>()[i] = name == "mask" ? (i % 7 >= 5 ? -3.4028234663852886e38f : 0.0f) : dist(rng);
    in[name] = t;
  }
  ir::Tensor want = eval_graph(before, in).at("y"), got = eval_graph(after, in).at("y");
  ASSERT_EQ(got.numel(), want.numel());
  for (int64_t i = 0; i < want.numel(); ++i) ASSERT_NEAR(got.get_f64(i), want.get_f64(i), 1e-5) << i;
}

}  // namespace
}  // namespace onnxc::testing
