// fuse_attention on the spellings today's exporters write (torch 2.x TorchScript and dynamo,
// transformers 5): the NaN guard of scaled_dot_product_attention, Kᵀ through a 3-D view, Gemma 2's
// logit softcap, BLOOM's ALiBi scores viewed [b·h, t, s] -> [b, h, t, s] for the mask and back.
// Each fused graph is evaluated against the unfused one; near misses say why.
#include <gtest/gtest.h>

#include <algorithm>

#include "fusion_util.h"
#include "ir/onnxc_attrs.h"

namespace onnxc::testing {
namespace {

// As the pipeline: after canonicalize, shapes inferred again and shape reads of the old views folded.
const std::vector<std::string> kPasses = {"canonicalize", "infer_shapes", "simplify_shapes", "constant_folding",
                                          "dce", "fuse_attention", "dce"};

// [1,2,5,8] self-attention; `scores_to_y` reads %scores (scaled Q·Kᵀ) and %v and defines %y.
std::string block(const std::string& scores_to_y, const std::string& kt = "", const std::string& outs = "%y") {
  std::string k = kt.empty() ? "    %kt: f32[1,2,8,5] = Transpose(%k) {perm=[0, 1, 3, 2]}\n" : kt;
  return R"(
  model ir_version=8 opset=[ai.onnx:18]
  graph main(%q: f32[1,2,5,8], %k: f32[1,2,5,8], %v: f32[1,2,5,8]) {
    %s = const f32[] {0.353553385}
)" + k + R"(    %qk: f32[1,2,5,5] = MatMul(%q, %kt)
    %scores: f32[1,2,5,5] = Mul(%qk, %s)
)" + scores_to_y + R"(
    return )" + outs + R"(
  }
)";
}

// torch's scaled_dot_product_attention with a bool mask, as both exporters write it: the mask as
// Where(keep, 0, -inf) added, and the weights of a NaN row (all keys masked: row 2 here) zeroed.
std::string guarded(const char* fill = "0", const char* extra = "", const char* outs = "%y") {
  return block(std::string(R"(
    %keep = const bool[1,1,5,5] {1,1,0,0,0, 1,1,1,0,0, 0,0,0,0,0, 1,1,1,1,0, 1,1,1,1,1}
    %zero = const f32[] {0}
    %ninf = const f32[] {-inf}
    %fill = const f32[] {)") + fill + R"(}
    %bias: f32[1,1,5,5] = Where(%keep, %zero, %ninf)
    %masked: f32[1,2,5,5] = Add(%scores, %bias)
    %p: f32[1,2,5,5] = Softmax(%masked) {axis=-1}
    %nan: bool[1,2,5,5] = IsNaN(%p)
    %w: f32[1,2,5,5] = Where(%nan, %fill, %p)
    %y: f32[1,2,5,8] = MatMul(%w, %v))" + extra, "", outs);
}

struct Fused {
  std::vector<std::string> ops;
  ir::Model model;
  passes::FusionReport report;
  const ir::Node* attention() const {
    for (const ir::Node* n : model.graph->nodes())
      if (n->op_type() == "Attention") return n;
    return nullptr;
  }
};

Fused run(const std::string& text) {
  Fused f{{}, parse_model(dedent(text)), {}};
  run_with_report(f.model, kPasses, &f.report);
  for (const ir::Node* n : f.model.graph->nodes()) f.ops.push_back(n->op_type());
  return f;
}

std::string near_miss_reason(const std::string& text) {
  Fused f = run(text);
  EXPECT_EQ(std::count(f.ops.begin(), f.ops.end(), "Attention"), 0) << "fused a near miss";
  auto nm = f.report.ranked_near_misses();
  return nm.empty() ? "(no near miss reported)" : nm[0].reason;
}

using Ops = std::vector<std::string>;

// The guard's 0 for a fully masked row is what Attention itself gives (ONNX 1.23), so the node
// drops onnxc's keep-the-NaN attribute; the reference evaluator agrees on every row, row 2 too.
TEST(FuseAttentionExport, NanGuardedWeights) {
  Fused f = run(guarded());
  ASSERT_TRUE(f.attention()) << ir::to_string(*f.model.graph);
  EXPECT_EQ(f.attention()->attr_int(ir::kMaskedRowsNan, 0), 0);
  EXPECT_EQ(f.report.counts().at("attention"), 1);
  expect_same_values(guarded(), kPasses);
  // Unguarded, the same mask keeps the Softmax's NaN.
  Fused plain = run(block(R"(
    %keep = const bool[1,1,5,5] {1,1,0,0,0, 1,1,1,0,0, 0,0,0,0,0, 1,1,1,1,0, 1,1,1,1,1}
    %ninf = const f32[] {-inf}
    %masked: f32[1,2,5,5] = Where(%keep, %scores, %ninf)
    %p: f32[1,2,5,5] = Softmax(%masked) {axis=-1}
    %y: f32[1,2,5,8] = MatMul(%p, %v))"));
  ASSERT_TRUE(plain.attention());
  EXPECT_EQ(plain.attention()->attr_int(ir::kMaskedRowsNan, 0), 1);
}

TEST(FuseAttentionExport, NanGuardNearMisses) {
  EXPECT_EQ(near_miss_reason(guarded("1")), "the NaN guard fills the weights with something else than +0");
  EXPECT_EQ(near_miss_reason(guarded("0", "\n    %also: f32[1,2,5,5] = Mul(%p, %p)", "%y, %also")),
            "the NaN-guarded softmax weights are read outside the block");
}

// The dynamo exporter's Kᵀ: K viewed [b·h, s, d], transposed [0, 2, 1], viewed back [b, h, d, s].
TEST(FuseAttentionExport, KeyTransposedThroughA3DView) {
  std::string kt = R"(    %flat_shape = const i64[3] {-1, 5, 8}
    %back_shape = const i64[4] {1, 2, 8, 5}
    %kf: f32[2,5,8] = Reshape(%k, %flat_shape)
    %kft: f32[2,8,5] = Transpose(%kf) {perm=[0, 2, 1]}
    %kt: f32[1,2,8,5] = Reshape(%kft, %back_shape)
)";
  std::string g = block(R"(
    %p: f32[1,2,5,5] = Softmax(%scores) {axis=-1}
    %y: f32[1,2,5,8] = MatMul(%p, %v))", kt);
  Fused f = run(g);
  EXPECT_EQ(f.ops, Ops{"Attention"});
  expect_same_values(g, kPasses);
  // A view that does not keep [s, d] (here [2·5, 8]) is not a transpose of K's last two dims.
  std::string other = R"(    %flat_shape = const i64[3] {1, 10, 8}
    %back_shape = const i64[4] {1, 2, 8, 5}
    %kf: f32[1,10,8] = Reshape(%k, %flat_shape)
    %kft: f32[1,8,10] = Transpose(%kf) {perm=[0, 2, 1]}
    %kt: f32[1,2,8,5] = Reshape(%kft, %back_shape)
)";
  // Then K is taken as given pre-transposed: fused all the same, with the same values.
  expect_same_values(block(R"(
    %p: f32[1,2,5,5] = Softmax(%scores) {axis=-1}
    %y: f32[1,2,5,8] = MatMul(%p, %v))", other), kPasses);
}

// Gemma 2: scores / c -> Tanh -> · c before the mask; a power-of-two cap's division is canonical
// as a product with 1/c. Attention's softcap computes the same.
std::string capped(const char* by, const char* cap, const char* times) {
  return block(std::string(R"(
    %by = const f32[] {)") + by + R"(}
    %cap = const f32[] {)" + times + R"(}
    %d: f32[1,2,5,5] = )" + cap + R"((%scores, %by)
    %t: f32[1,2,5,5] = Tanh(%d)
    %c: f32[1,2,5,5] = Mul(%t, %cap)
    %p: f32[1,2,5,5] = Softmax(%c) {axis=-1}
    %y: f32[1,2,5,8] = MatMul(%p, %v))");
}

TEST(FuseAttentionExport, LogitSoftcap) {
  for (auto [by, op] : {std::pair{"0.5", "Div"}, std::pair{"2", "Mul"}}) {
    SCOPED_TRACE(std::string(op) + " " + by);
    std::string g = capped(by, op, "0.5");
    Fused f = run(g);
    ASSERT_TRUE(f.attention()) << ir::to_string(*f.model.graph);
    EXPECT_EQ(f.ops, Ops{"Attention"});
    EXPECT_FLOAT_EQ(f.attention()->attr_float("softcap", 0), 0.5f);
    expect_same_values(g, kPasses);
  }
  EXPECT_EQ(near_miss_reason(capped("0.5", "Div", "0.75")),
            "the scores are capped as c·tanh(s / d) with c and d not one positive softcap");
}

// BLOOM: baddbmm(alibi, q, kᵀ, alpha=1/√d) on [b·h, t, s], viewed [b, h, t, s] for the mask, the
// softmax in fp32 (Casts), viewed back for the bmm with V [b·h, s, d]. The views go (canonicalize)
// and the scores reach one Attention with the ALiBi bias and the mask summed as attn_mask.
std::string bloom(const char* back_dims = "4,5,5") {
  return std::string(R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[4,5,8], %k: f32[4,5,8], %v: f32[4,5,8], %alibi: f32[4,1,5], %mask: f32[2,1,5,5]) {
    %s = const f32[] {0.353553385}
    %split = const i64[4] {2, 2, 5, 5}
    %back = const i64[3] {)") + back_dims + R"(}
    %kt: f32[4,8,5] = Transpose(%k) {perm=[0, 2, 1]}
    %qk: f32[4,5,5] = MatMul(%q, %kt)
    %qks: f32[4,5,5] = Mul(%qk, %s)
    %scores: f32[4,5,5] = Add(%alibi, %qks)
    %view: f32[2,2,5,5] = Reshape(%scores, %split)
    %masked: f32[2,2,5,5] = Add(%view, %mask)
    %p: f32[2,2,5,5] = Softmax(%masked) {axis=-1}
    %p32: f32[2,2,5,5] = Cast(%p) {to=1}
    %w: f32[4,5,5] = Reshape(%p32, %back)
    %y: f32[4,5,8] = MatMul(%w, %v)
    return %y
  }
)";
}

TEST(FuseAttentionExport, AlibiScoresViewedForTheMask) {
  Fused f = run(bloom());
  ASSERT_TRUE(f.attention()) << ir::to_string(*f.model.graph);
  EXPECT_EQ(std::count(f.ops.begin(), f.ops.end(), "Softmax"), 0);
  expect_same_values(bloom(), kPasses);
}

}  // namespace
}  // namespace onnxc::testing
