// fuse_attention_forms: Bahdanau (additive), NTM (cosine) and Nadaraya–Watson graphs as exporters
// write them -> one onnxc op each, the weights taken from the fused op when the model returns them;
// near misses that must not fuse. The numeric fused-vs-unfused checks run on the real exports
// (tests/models/fusion, compiled fused and compared with torch) and in tests/codegen.
#include <gtest/gtest.h>

#include "fusion_util.h"

namespace onnxc::testing {
namespace {

const std::vector<std::string> kPasses = {"canonicalize", "fuse_attention_forms", "dce"};

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// One Bahdanau decoder step: vᵀ tanh(Wq + Uk) + c as exported by torch (Linear -> MatMul + Add,
// squeeze(2).unsqueeze(1)), masked_fill(mask == 0, -1e10), softmax, bmm with the values.
std::string additive(const std::string& softmax_axis) {  // axis of the Softmax
  return R"(
    model ir_version=8 opset=[ai.onnx:17]
    graph main(%q: f32[2,1,4], %k: f32[2,5,4], %v: f32[2,5,3], %mask: bool[2,1,5]) {
      %va = const f32[4,1] {0.5, -1, 0.25, 2}
      %c = const f32[1] {0.3}
      %fill = const f32[] {-1e+10}
      %ax2 = const i64[1] {2}
      %ax1 = const i64[1] {1}
      %sum: f32[2,5,4] = Add(%q, %k)
      %t: f32[2,5,4] = Tanh(%sum)
      %s0: f32[2,5,1] = MatMul(%t, %va)
      %s1: f32[2,5,1] = Add(%s0, %c)
      %s2: f32[2,5] = Squeeze(%s1, %ax2)
      %s3: f32[2,1,5] = Unsqueeze(%s2, %ax1)
      %nm: bool[2,1,5] = Not(%mask)
      %sm: f32[2,1,5] = Where(%nm, %fill, %s3)
      %w: f32[2,1,5] = Softmax(%sm) {axis=)" + softmax_axis + R"(}
      %y: f32[2,1,3] = MatMul(%w, %v)
      return %y, %w
    }
  )";
}

TEST(FuseAttentionForms, AdditiveBahdanauStep) {
  passes::FusionReport report;
  std::string out = fuse(additive("-1"), kPasses, &report);
  EXPECT_TRUE(has(out, "= onnxc.AdditiveAttention(%q, %k, %v, ")) << out;
  EXPECT_TRUE(has(out, "mask_fill=-1e+10")) << out;
  EXPECT_FALSE(has(out, "Tanh(")) << out;
  EXPECT_FALSE(has(out, "Softmax(")) << out;  // the returned weights come from the fused op
  EXPECT_EQ(report.counts().at("attention"), 1);
}

// The decoder-cell spelling (a GRUCell/LSTMCell decoder attending per step): the scores are
// squeezed to [B, S], masked and softmaxed there, and the weights unsqueezed to [B, 1, S] for the
// bmm. The [B, S] mask must get its query axis back in the fused op, so it broadcasts as before.
TEST(FuseAttentionForms, AdditiveSqueezedScores) {
  const std::string text = R"(
    model ir_version=8 opset=[ai.onnx:17]
    graph main(%q: f32[2,1,4], %k: f32[2,5,4], %v: f32[2,5,3], %mask: bool[2,5]) {
      %va = const f32[4,1] {0.5, -1, 0.25, 2}
      %fill = const f32[] {-inf}
      %ax2 = const i64[1] {2}
      %ax1 = const i64[1] {1}
      %sum: f32[2,5,4] = Add(%q, %k)
      %t: f32[2,5,4] = Tanh(%sum)
      %s0: f32[2,5,1] = MatMul(%t, %va)
      %s2: f32[2,5] = Squeeze(%s0, %ax2)
      %nm: bool[2,5] = Not(%mask)
      %sm: f32[2,5] = Where(%nm, %fill, %s2)
      %w: f32[2,5] = Softmax(%sm) {axis=1}
      %w3: f32[2,1,5] = Unsqueeze(%w, %ax1)
      %y3: f32[2,1,3] = MatMul(%w3, %v)
      %y: f32[2,3] = Squeeze(%y3, %ax1)
      return %y, %w
    }
  )";
  passes::FusionReport report;
  std::string out = fuse(text, kPasses, &report);
  EXPECT_TRUE(has(out, "= onnxc.AdditiveAttention(%q, %k, %v, ")) << out;
  EXPECT_TRUE(has(out, "Unsqueeze(%nm, ")) << out;
  EXPECT_FALSE(has(out, "Softmax(")) << out;
  EXPECT_EQ(report.counts().at("attention"), 1);
}

TEST(FuseAttentionForms, NearMissSigmoidScores) {
  // sigmoid instead of tanh inside the score: another function, reported as a near miss.
  std::string text = additive("-1");
  text.replace(text.find("Tanh(%sum)"), 10, "Sigmoid(%sum)");
  passes::FusionReport report;
  std::string out = fuse(text, kPasses, &report);
  EXPECT_FALSE(has(out, "AdditiveAttention")) << out;
  EXPECT_EQ(report.counts().at("attention"), 0);
  std::string reasons;
  for (const auto& nm : report.near_misses)
    if (nm.rule == "additive_attention") reasons += nm.reason + "\n";
  EXPECT_TRUE(has(reasons, "Tanh")) << reasons;
}

// NTM content addressing as torch exports F.cosine_similarity, sharpened by β, read by bmm.
const char* kCosine = R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%mem: f32[2,6,5], %key: f32[2,1,5], %beta: f32[2,1]) {
    %axl = const i64[1] {-1}
    %eps = const f32[] {1e-08}
    %ax1 = const i64[1] {1}
    %kq: f32[2,6,5] = Mul(%mem, %key)
    %dot: f32[2,6] = ReduceSum(%kq, %axl) {keepdims=0}
    %kk0: f32[2,6,5] = Mul(%mem, %mem)
    %kk: f32[2,6] = ReduceSum(%kk0, %axl) {keepdims=0}
    %qq0: f32[2,1,5] = Mul(%key, %key)
    %qq: f32[2,1] = ReduceSum(%qq0, %axl) {keepdims=0}
    %nn: f32[2,6] = Mul(%kk, %qq)
    %sq: f32[2,6] = Sqrt(%nn)
    %den: f32[2,6] = Max(%sq, %eps)
    %cos: f32[2,6] = Div(%dot, %den)
    %sc: f32[2,6] = Mul(%beta, %cos)
    %w: f32[2,6] = Softmax(%sc) {axis=1}
    %w3: f32[2,1,6] = Unsqueeze(%w, %ax1)
    %r: f32[2,1,5] = MatMul(%w3, %mem)
    return %r, %w
  }
)";

TEST(FuseAttentionForms, CosineNtmRead) {
  passes::FusionReport report;
  std::string out = fuse(kCosine, kPasses, &report);
  EXPECT_TRUE(has(out, "= onnxc.CosineAttention(%key, %mem, %mem, ")) << out;
  EXPECT_TRUE(has(out, "eps=9.99999994e-09")) << out;  // 1e-8 as a float
  EXPECT_FALSE(has(out, "ReduceSum(")) << out;
  EXPECT_EQ(report.counts().at("attention"), 1);
}

TEST(FuseAttentionForms, NearMissCosineWithoutNorms) {
  // A dot product divided by something that is not the product of the norms: not a cosine.
  std::string text = kCosine;
  text.replace(text.find("Mul(%kk, %qq)"), 13, "Mul(%kk, %kk)");
  passes::FusionReport report;
  std::string out = fuse(text, kPasses, &report);
  EXPECT_FALSE(has(out, "CosineAttention")) << out;
  EXPECT_EQ(report.counts().at("attention"), 0);
}

// d2l's Nadaraya–Watson regression: queries tiled along the keys, softmax(-((q - k)·w)²/2), bmm.
const char* kKernel = R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[4,1], %k: f32[4,7], %v: f32[4,7,1]) {
    %w = const f32[1] {1.7}
    %two = const f32[] {2}
    %reps = const i64[2] {1, 7}
    %ax1 = const i64[1] {1}
    %qt: f32[4,7] = Tile(%q, %reps)
    %d: f32[4,7] = Sub(%qt, %k)
    %dw: f32[4,7] = Mul(%d, %w)
    %p: f32[4,7] = Pow(%dw, %two)
    %n: f32[4,7] = Neg(%p)
    %h: f32[4,7] = Div(%n, %two)
    %sm: f32[4,7] = Softmax(%h) {axis=1}
    %w3: f32[4,1,7] = Unsqueeze(%sm, %ax1)
    %y: f32[4,1,1] = MatMul(%w3, %v)
    return %y
  }
)";

TEST(FuseAttentionForms, NadarayaWatson) {
  passes::FusionReport report;
  std::string out = fuse(kKernel, kPasses, &report);
  EXPECT_TRUE(has(out, "onnxc.KernelAttention(")) << out;
  EXPECT_FALSE(has(out, "Softmax(")) << out;
  EXPECT_EQ(report.counts().at("attention"), 1);
}

TEST(FuseAttentionForms, NearMissKernelWithQueriesPerKey) {
  // The "queries" vary along the keys ([4,7], not one per row): not kernel pooling of one query.
  std::string text = kKernel;
  text.replace(text.find("%q: f32[4,1]"), 12, "%q: f32[4,7]");
  text.replace(text.find("%qt: f32[4,7] = Tile(%q, %reps)"), 31, "%qt: f32[4,7] = Neg(%q)");
  passes::FusionReport report;
  std::string out = fuse(text, kPasses, &report);
  EXPECT_FALSE(has(out, "KernelAttention")) << out;
}

}  // namespace
}  // namespace onnxc::testing
