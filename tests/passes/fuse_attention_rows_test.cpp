// Luong attention in the decoder-cell spelling (scores as a column K·q, softmax over [b, s], the
// weights unsqueezed into a row for the weighted sum): canonicalize turns it into the core Q·Kᵀ
// form with a length-1 query and fuse_attention fires; near misses stay as they are. Each fused
// graph is evaluated against the unfused one.
#include <gtest/gtest.h>

#include <algorithm>

#include "fusion_util.h"

namespace onnxc::testing {
namespace {

const std::vector<std::string> kPasses = {"canonicalize", "fuse_attention", "dce"};

// keys [2,5,8], values [2,5,6], query [2,8]; `query` lines define %qq from %q, `scores` lines
// define %sc [2,5] from %qq. The padding mask drops the last two keys of batch row 0.
std::string luong(const std::string& query, const std::string& scores, const std::string& softmax_axis = "1") {
  return R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[2,8], %keys: f32[2,5,8], %values: f32[2,5,6]) {
    %ax1 = const i64[1] {1}
    %ax2 = const i64[1] {2}
    %ninf = const f32[] {-inf}
    %mask = const bool[2,5] {1, 1, 1, 0, 0, 1, 1, 1, 1, 1}
)" + query + "\n" + scores + R"(
    %drop: bool[2,5] = Not(%mask)
    %masked: f32[2,5] = Where(%drop, %ninf, %sc)
    %w: f32[2,5] = Softmax(%masked) {axis=)" + softmax_axis + R"(}
    %wu: f32[2,1,5] = Unsqueeze(%w, %ax1)
    %c3: f32[2,1,6] = MatMul(%wu, %values)
    %ctx: f32[2,6] = Squeeze(%c3, %ax1)
    return %ctx, %w
  }
)";
}

// torch.bmm(keys, q.unsqueeze(2)).squeeze(2): the column of scores.
const char* kColumn = R"(
    %qu: f32[2,8,1] = Unsqueeze(%qq, %ax2)
    %sc3: f32[2,5,1] = MatMul(%keys, %qu)
    %sc: f32[2,5] = Squeeze(%sc3, %ax2))";
const char* kDot = "    %qq: f32[2,8] = Identity(%q)";

struct Result {
  std::vector<std::string> ops;
  passes::FusionReport report;
};

Result run(const std::string& text) {
  Result r;
  ir::Model m = parse_model(dedent(text));
  run_with_report(m, kPasses, &r.report);
  for (const ir::Node* n : m.graph->nodes()) r.ops.push_back(n->op_type());
  return r;
}

// The near misses, for failure messages.
std::string misses(const Result& r) {
  std::string s;
  for (const passes::NearMiss& nm : r.report.near_misses) s += nm.rule + " at " + nm.where + ": " + nm.reason + "\n";
  return s;
}

int attention_count(const Result& r) {
  auto c = r.report.counts();
  return c.count("attention") ? c.at("attention") : 0;
}

// `dot`: qᵀ·k. The weights are also returned (Luong's `align`): they come out of the Attention node.
TEST(FuseAttentionRows, LuongDotColumn) {
  std::string g = luong(kDot, kColumn);
  Result r = run(g);
  EXPECT_EQ(attention_count(r), 1) << misses(r);
  EXPECT_EQ(std::count(r.ops.begin(), r.ops.end(), "Softmax"), 0);
  EXPECT_EQ(std::count(r.ops.begin(), r.ops.end(), "MatMul"), 0);
  expect_same_values(g, kPasses);
}

// `general`: qᵀ·W·k with the Linear on the query (and a scale on the scores).
TEST(FuseAttentionRows, LuongGeneralLinearOnQuery) {
  std::string q = R"(
    %wq = const f32[8,8] {0.3, -0.1, 0.2, 0, 0.5, -0.4, 0.1, 0.2, 0.1, 0.3, -0.2, 0.4, 0, 0.1, -0.3, 0.2, -0.2, 0.1, 0.4, 0.3, -0.1, 0, 0.2, 0.1, 0.5, 0, -0.1, 0.2, 0.3, 0.1, 0, -0.4, 0.1, 0.2, 0.3, -0.3, 0.2, 0.4, -0.1, 0, 0, -0.2, 0.1, 0.1, -0.5, 0.3, 0.2, 0.1, 0.2, 0.1, 0, -0.1, 0.3, 0.2, 0.4, -0.2, -0.3, 0.2, 0.1, 0.4, 0, -0.1, 0.3, 0.5}
    %qq: f32[2,8] = MatMul(%q, %wq))";
  std::string scores = std::string(kColumn) + R"(
    %half = const f32[] {0.5}
    %scs: f32[2,5] = Mul(%sc, %half))";
  std::string g = luong(q, scores);
  // The scaled scores feed the mask.
  size_t at = g.find("Where(%drop, %ninf, %sc)");
  g.replace(at, std::string("Where(%drop, %ninf, %sc)").size(), "Where(%drop, %ninf, %scs)");
  Result r = run(g);
  EXPECT_EQ(attention_count(r), 1) << misses(r);
  expect_same_values(g, kPasses);
}

// bmm(q.unsqueeze(1), keys.transpose(1, 2)).squeeze(1): the scores already a row, squeezed.
TEST(FuseAttentionRows, SqueezedRow) {
  std::string row = R"(
    %qu: f32[2,1,8] = Unsqueeze(%qq, %ax1)
    %kt: f32[2,8,5] = Transpose(%keys) {perm=[0, 2, 1]}
    %sc3: f32[2,1,5] = MatMul(%qu, %kt)
    %sc: f32[2,5] = Squeeze(%sc3, %ax1))";
  std::string g = luong(kDot, row);
  Result r = run(g);
  EXPECT_EQ(attention_count(r), 1) << misses(r);
  expect_same_values(g, kPasses);
}

// Near misses, left as they are: a softmax over the batch axis, and scores against one weight
// vector shared by the batch (Bahdanau's vᵀ·tanh(...) shape), which is not Q·Kᵀ.
TEST(FuseAttentionRows, NearMissesStayUnfused) {
  Result axis0 = run(luong(kDot, kColumn, "0"));
  EXPECT_EQ(attention_count(axis0), 0);
  EXPECT_EQ(std::count(axis0.ops.begin(), axis0.ops.end(), "Transpose"), 0) << "rewritten although not attention";
  std::string shared = R"(
    %v8 = const f32[8,1] {0.1, 0.2, -0.3, 0.4, 0.5, -0.6, 0.7, 0.8}
    %sc3: f32[2,5,1] = MatMul(%keys, %v8)
    %sc: f32[2,5] = Squeeze(%sc3, %ax2))";
  Result vec = run(luong(kDot, shared));
  EXPECT_EQ(attention_count(vec), 0);
  EXPECT_EQ(std::count(vec.ops.begin(), vec.ops.end(), "Transpose"), 0) << "rewritten although not attention";
}

}  // namespace
}  // namespace onnxc::testing
