// fuse_rotary: Hugging Face's apply_rotary_pos_emb (rotate_half, cos/sin of Concat(freqs, freqs))
// -> RotaryEmbedding (opset 23), full and partial; near misses; fused against unfused values.
#include <gtest/gtest.h>

#include <algorithm>

#include "fusion_util.h"

namespace onnxc::testing {
namespace {

const std::vector<std::string> kPasses = {"canonicalize", "infer_shapes", "fuse_rotary", "dce"};

// x [2, 2, 3, 8] (batch, heads, seq, head_dim); freqs [1, 3, r/2] an input, the caches [1, 3, r]
// built from it as HF's rotary_emb does (cos/sin of the frequencies concatenated with themselves,
// times attention_scaling). `second` is the Concat's second input (%f: the same frequencies).
// `swapped`: the halves taken the wrong way round (Neg of the first half, then the second).
std::string rotary(int r, const std::string& second = "%f", bool swapped = false) {
  std::string rs = std::to_string(r), hs = std::to_string(r / 2);
  std::string lines = R"(
  model ir_version=8 opset=[ai.onnx:18]
  graph main(%x: f32[2,2,3,8], %f: f32[1,3,)" + hs + R"(], %g: f32[1,3,)" + hs + R"(]) {
    %one = const f32[] {1}
    %ax1 = const i64[1] {1}
    %last = const i64[1] {-1}
    %zero = const i64[1] {0}
    %half = const i64[1] {)" + hs + R"(}
    %r = const i64[1] {)" + rs + R"(}
    %big = const i64[1] {1000}
    %emb: f32[1,3,)" + rs + R"(] = Concat(%f, )" + second + R"() {axis=-1}
    %c0: f32[1,3,)" + rs + R"(] = Cos(%emb)
    %s0: f32[1,3,)" + rs + R"(] = Sin(%emb)
    %c: f32[1,3,)" + rs + R"(] = Mul(%c0, %one)
    %s: f32[1,3,)" + rs + R"(] = Mul(%s0, %one)
    %c4: f32[1,1,3,)" + rs + R"(] = Unsqueeze(%c, %ax1)
    %s4: f32[1,1,3,)" + rs + R"(] = Unsqueeze(%s, %ax1)
)";
  std::string xr = "%x";
  if (r != 8) {
    lines += "    %xr: f32[2,2,3," + rs + "] = Slice(%x, %zero, %r, %last)\n";
    lines += "    %xp: f32[2,2,3," + std::to_string(8 - r) + "] = Slice(%x, %r, %big, %last)\n";
    xr = "%xr";
  }
  std::string first = ", %zero, %half, %last)\n", second_half = ", %half, %big, %last)\n";
  if (swapped) std::swap(first, second_half);
  lines += "    %x1: f32[2,2,3," + hs + "] = Slice(" + xr + first;
  lines += "    %x2: f32[2,2,3," + hs + "] = Slice(" + xr + second_half;
  lines += "    %n2: f32[2,2,3," + hs + "] = Neg(%x2)\n";
  lines += "    %rot: f32[2,2,3," + rs + "] = Concat(%n2, %x1) {axis=-1}\n";
  lines += "    %a: f32[2,2,3," + rs + "] = Mul(" + xr + ", %c4)\n";
  lines += "    %b: f32[2,2,3," + rs + "] = Mul(%rot, %s4)\n";
  lines += "    %e: f32[2,2,3," + rs + "] = Add(%a, %b)\n";
  if (r != 8) lines += "    %y: f32[2,2,3,8] = Concat(%e, %xp) {axis=-1}\n";
  else lines += "    %y: f32[2,2,3,8] = Identity(%e)\n";
  return lines + "    return %y\n  }\n";
}

struct Fused {
  std::vector<std::string> ops;
  passes::FusionReport report;
  int64_t rotary_dim = -1;
};

Fused run(const std::string& text) {
  Fused f;
  ir::Model m = parse_model(dedent(text));
  run_with_report(m, kPasses, &f.report);
  for (const ir::Node* n : m.graph->nodes()) {
    f.ops.push_back(n->op_type());
    if (n->op_type() == "RotaryEmbedding") f.rotary_dim = n->attr_int("rotary_embedding_dim", 0);
  }
  return f;
}

int count(const Fused& f, const char* op) { return static_cast<int>(std::count(f.ops.begin(), f.ops.end(), op)); }

TEST(FuseRotary, FullRotateHalf) {
  Fused f = run(rotary(8));
  EXPECT_EQ(count(f, "RotaryEmbedding"), 1);
  EXPECT_EQ(f.rotary_dim, 0);
  EXPECT_EQ(count(f, "Neg"), 0);
  EXPECT_EQ(f.report.counts().at("rotary"), 1);
  expect_same_values(rotary(8), kPasses);
}

// GPT-NeoX (rotary_pct) and Phi: the first r features rotated, the rest passed through.
TEST(FuseRotary, PartialRotary) {
  Fused f = run(rotary(4));
  EXPECT_EQ(count(f, "RotaryEmbedding"), 1);
  EXPECT_EQ(f.rotary_dim, 4);
  expect_same_values(rotary(4), kPasses);
}

TEST(FuseRotary, NearMisses) {
  auto reason = [](const std::string& text) {
    Fused f = run(text);
    EXPECT_EQ(count(f, "RotaryEmbedding"), 0) << "fused a near miss";
    auto nm = f.report.ranked_near_misses();
    return nm.empty() ? std::string("(no near miss reported)") : nm[0].reason;
  };
  // Caches from two different frequency tensors: their halves differ, the kernel's would not.
  EXPECT_EQ(reason(rotary(8, "%g")), "the caches' two halves are not shown equal (cos/sin of Concat(freqs, freqs))");
  // The halves the wrong way round: not rotate_half.
  EXPECT_EQ(reason(rotary(8, "%f", true)), "rotate_half does not split the features at the middle");
}

// torch's opset-23 export: RotaryEmbedding with caches of batch 1 for a batch of 2. canonicalize
// expands them to x's batch (the same values per row), the form the kernel and ONNX Runtime read.
TEST(FuseRotary, ExporterCachesOfBatchOneAreExpanded) {
  std::string g = R"(
  model ir_version=8 opset=[ai.onnx:23]
  graph main(%x: f32[2,2,3,8], %c: f32[1,3,4], %s: f32[1,3,4]) {
    %y: f32[2,2,3,8] = RotaryEmbedding(%x, %c, %s)
    return %y
  }
)";
  ir::Model m = parse_model(dedent(g));
  passes::FusionReport report;
  run_with_report(m, {"canonicalize", "infer_shapes"}, &report);
  const ir::Node* rot = nullptr;
  for (const ir::Node* n : m.graph->nodes())
    if (n->op_type() == "RotaryEmbedding") rot = n;
  ASSERT_TRUE(rot);
  for (int i = 1; i <= 2; ++i) {
    ASSERT_TRUE(rot->input(i)->shape());
    EXPECT_EQ(ir::shape_str(*rot->input(i)->shape()), "[2,3,4]");
  }
  // The reference evaluator reads [b, s, r/2] caches: it runs the expanded graph.
  auto in = random_inputs(m);
  EXPECT_EQ(eval_graph(m, in).at("y").numel(), 2 * 2 * 3 * 8);
}

}  // namespace
}  // namespace onnxc::testing
