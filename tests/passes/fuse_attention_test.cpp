// fuse_attention: each spelling of softmax(Q·Kᵀ·s + mask)·V -> Attention, near misses with their
// reasons, and every fused graph evaluated against the unfused one (ir/eval's reference Attention).
#include <gtest/gtest.h>

#include <algorithm>

#include "fusion_util.h"
#include "passes/fuse_attention.h"

namespace onnxc::testing {
namespace {

const std::vector<std::string> kPasses = {"canonicalize", "fuse_attention", "dce"};

// Builds a 4-D [1,2,5,8] self-attention graph around `scores_to_probs` lines. `%scores` is the
// scaled Q·Kᵀ the lines read; they must define `%p`.
std::string graph4(const std::string& lines, const std::string& extra_inputs = "") {
  return R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[1,2,5,8], %k: f32[1,2,5,8], %v: f32[1,2,5,8])" + extra_inputs + R"() {
    %sqrt_d = const f32[] {2.82842708}
    %kt: f32[1,2,8,5] = Transpose(%k) {perm=[0, 1, 3, 2]}
    %qk: f32[1,2,5,5] = MatMul(%q, %kt)
    %scores: f32[1,2,5,5] = Div(%qk, %sqrt_d)
)" + lines + R"(
    %y: f32[1,2,5,8] = MatMul(%p, %v)
    return %y
  }
)";
}

struct Fused {
  std::vector<std::string> ops;  // op types left, in order
  const ir::Node* attention = nullptr;
  passes::FusionReport report;
};

Fused run(const std::string& text) {
  Fused f;
  ir::Model m = parse_model(dedent(text));
  run_with_report(m, kPasses, &f.report);
  for (const ir::Node* n : m.graph->nodes()) {
    f.ops.push_back(n->op_type());
    if (n->op_type() == "Attention") f.attention = n;
  }
  static std::vector<ir::Model> keep;  // nodes stay valid for the test's assertions
  keep.push_back(std::move(m));
  return f;
}

std::vector<std::string> input_names(const ir::Node* n) {
  std::vector<std::string> r;
  for (const ir::Value* v : n->inputs()) r.push_back(v ? v->name() : "");
  return r;
}

using Ops = std::vector<std::string>;

TEST(FuseAttention, PlainDivScale) {
  std::string g = graph4("    %p: f32[1,2,5,5] = Softmax(%scores) {axis=-1}");
  Fused f = run(g);
  EXPECT_EQ(f.ops, Ops{"Attention"});
  ASSERT_TRUE(f.attention);
  EXPECT_EQ(input_names(f.attention), (std::vector<std::string>{"q", "k", "v"}));
  EXPECT_NEAR(f.attention->attr_float("scale", 0), 0.35355339, 1e-7);
  EXPECT_EQ(f.attention->attr_int("is_causal", 0), 0);
  EXPECT_EQ(f.report.counts().at("attention"), 1);
  expect_same_values(g, kPasses);
}

// torch.nn.MultiheadAttention splits 1/√d as √√d on Q and on the scores; others scale K.
TEST(FuseAttention, ScaleOnQAndKAndNoScale) {
  std::string g = R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[1,2,5,8], %k: f32[1,2,5,8], %v: f32[1,2,5,8]) {
    %c = const f32[] {0.594603558}
    %qs: f32[1,2,5,8] = Mul(%q, %c)
    %ks: f32[1,2,5,8] = Mul(%c, %k)
    %kt: f32[1,2,8,5] = Transpose(%ks) {perm=[0, 1, 3, 2]}
    %qk: f32[1,2,5,5] = MatMul(%qs, %kt)
    %p: f32[1,2,5,5] = Softmax(%qk) {axis=3}
    %y: f32[1,2,5,8] = MatMul(%p, %v)
    return %y
  }
)";
  Fused f = run(g);
  ASSERT_EQ(f.ops, Ops{"Attention"});
  EXPECT_NEAR(f.attention->attr_float("scale", 0), 0.35355339, 1e-6);
  expect_same_values(g, kPasses);
  // T5: no scale at all is scale 1, never the default 1/√d.
  std::string t5 = R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[1,2,5,8], %k: f32[1,2,5,8], %v: f32[1,2,5,8]) {
    %kt: f32[1,2,8,5] = Transpose(%k) {perm=[0, 1, 3, 2]}
    %qk: f32[1,2,5,5] = MatMul(%q, %kt)
    %p: f32[1,2,5,5] = Softmax(%qk) {axis=-1}
    %y: f32[1,2,5,8] = MatMul(%p, %v)
    return %y
  }
)";
  Fused t = run(t5);
  ASSERT_TRUE(t.attention);
  EXPECT_EQ(t.attention->attr_float("scale", 0), 1.0f);
  expect_same_values(t5, kPasses);
}

// Kᵀ given pre-transposed (weights or a cache laid out [b, h, d, s]): a Transpose is added for K.
TEST(FuseAttention, PreTransposedKey) {
  std::string g = R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[1,2,5,8], %kt: f32[1,2,8,6], %v: f32[1,2,6,8]) {
    %s = const f32[] {0.125}
    %qk: f32[1,2,5,6] = MatMul(%q, %kt)
    %scores: f32[1,2,5,6] = Mul(%qk, %s)
    %p: f32[1,2,5,6] = Softmax(%scores) {axis=-1}
    %y: f32[1,2,5,8] = MatMul(%p, %v)
    return %y
  }
)";
  Fused f = run(g);
  EXPECT_EQ(f.ops, (Ops{"Transpose", "Attention"}));
  expect_same_values(g, kPasses);
}

// Einsum spellings (canonicalize makes them MatMul + Transpose first).
TEST(FuseAttention, EinsumScoresAndWeightedSum) {
  std::string g = R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[1,2,5,8], %k: f32[1,2,5,8], %v: f32[1,2,5,8]) {
    %s = const f32[] {0.353553385}
    %qk: f32[1,2,5,5] = Einsum(%q, %k) {equation="bhqd,bhkd->bhqk"}
    %scores: f32[1,2,5,5] = Mul(%qk, %s)
    %p: f32[1,2,5,5] = Softmax(%scores) {axis=-1}
    %y: f32[1,2,5,8] = Einsum(%p, %v) {equation="bhqk,bhkd->bhqd"}
    return %y
  }
)";
  Fused f = run(g);
  EXPECT_EQ(f.ops, Ops{"Attention"});
  // The reference evaluator has no Einsum: compare with the canonicalized (MatMul) graph instead.
  ir::Model before = parse_model(dedent(g)), after = parse_model(dedent(g));
  passes::FusionReport report;
  run_with_report(before, {"canonicalize"}, &report);
  run_with_report(after, kPasses, &report);
  auto in = random_inputs(before);
  auto want = eval_graph(before, in).at("y"), got = eval_graph(after, in).at("y");
  for (int64_t i = 0; i < want.numel(); ++i) ASSERT_NEAR(got.get_f64(i), want.get_f64(i), 1e-5) << i;
}

// torch's bmm on [b·h, s, d] with K transposed from [s, b·h, d] by perm [1, 2, 0], cross-attention.
TEST(FuseAttention, ThreeDBmmCrossAttention) {
  std::string g = R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[4,5,8], %kraw: f32[7,4,8], %v: f32[4,7,8], %mask: f32[4,1,7]) {
    %s = const f32[] {0.353553385}
    %qs: f32[4,5,8] = Mul(%q, %s)
    %kt: f32[4,8,7] = Transpose(%kraw) {perm=[1, 2, 0]}
    %qk: f32[4,5,7] = MatMul(%qs, %kt)
    %m: f32[4,5,7] = Add(%qk, %mask)
    %p: f32[4,5,7] = Softmax(%m) {axis=-1}
    %y: f32[4,5,8] = MatMul(%p, %v)
    return %y
  }
)";
  Fused f = run(g);
  EXPECT_EQ(f.ops, (Ops{"Transpose", "Unsqueeze", "Unsqueeze", "Unsqueeze", "Unsqueeze", "Attention", "Squeeze"}));
  expect_same_values(g, kPasses);
}

// HF BERT: (1 - m) * finfo.min added as [b, 1, 1, s]; also a decomposed, max-subtracted softmax.
TEST(FuseAttention, AdditiveMaskAndDecomposedSoftmax) {
  std::string g = graph4(R"(
    %axes = const i64[1] {-1}
    %masked: f32[1,2,5,5] = Add(%scores, %mask)
    %mx: f32[1,2,5,1] = ReduceMax(%masked) {axes=[-1]}
    %d: f32[1,2,5,5] = Sub(%masked, %mx)
    %e: f32[1,2,5,5] = Exp(%d)
    %sum: f32[1,2,5,1] = ReduceSum(%e, %axes)
    %p: f32[1,2,5,5] = Div(%e, %sum))",
                         ", %mask: f32[1,1,1,5]");
  Fused f = run(g);
  ASSERT_EQ(f.ops, Ops{"Attention"});
  EXPECT_EQ(input_names(f.attention), (std::vector<std::string>{"q", "k", "v", "mask"}));
  expect_same_values(g, kPasses);
}

// Where(keep, scores, -inf) is a bool attn_mask; masked_fill's Where(drop, -inf, scores) negates it;
// a finfo.min fill becomes the float mask Where(keep, 0, min) (same values, fully masked rows too).
TEST(FuseAttention, WhereMasks) {
  const char* keep = "%keep = const bool[1,1,1,5] {1, 1, 0, 1, 0}\n";
  std::string g = graph4(std::string("    ") + keep + R"(
    %ninf = const f32[] {-inf}
    %masked: f32[1,2,5,5] = Where(%keep, %scores, %ninf)
    %p: f32[1,2,5,5] = Softmax(%masked) {axis=-1})");
  Fused f = run(g);
  ASSERT_EQ(f.ops, Ops{"Attention"});
  EXPECT_EQ(input_names(f.attention).back(), "keep");
  expect_same_values(g, kPasses);

  std::string fill = graph4(std::string("    ") + keep + R"(
    %ninf = const f32[] {-inf}
    %masked: f32[1,2,5,5] = Where(%keep, %ninf, %scores)
    %p: f32[1,2,5,5] = Softmax(%masked) {axis=-1})");
  EXPECT_EQ(run(fill).ops, (Ops{"Not", "Attention"}));
  expect_same_values(fill, kPasses);

  std::string fmin = graph4(std::string("    ") + keep + R"(
    %min = const f32[] {-3.40282347e+38}
    %masked: f32[1,2,5,5] = Where(%keep, %scores, %min)
    %p: f32[1,2,5,5] = Softmax(%masked) {axis=-1})");
  EXPECT_EQ(run(fmin).ops, (Ops{"Where", "Attention"}));
  expect_same_values(fmin, kPasses);
}

// GPT-2: Where(causal_slice, scores, finfo.min) first, then the padding mask added; here the
// slice is not square-causal (a window), so both stay as one summed float mask.
TEST(FuseAttention, WhereThenAdditiveMaskSumToOneMask) {
  std::string g = graph4(R"(
    %band = const bool[1,1,5,5] {1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1}
    %min = const f32[] {-3.40282347e+38}
    %w: f32[1,2,5,5] = Where(%band, %scores, %min)
    %masked: f32[1,2,5,5] = Add(%w, %pad)
    %p: f32[1,2,5,5] = Softmax(%masked) {axis=-1})",
                         ", %pad: f32[1,1,1,5]");
  Fused f = run(g);
  EXPECT_EQ(f.ops, (Ops{"Where", "Add", "Attention"}));
  expect_same_values(g, kPasses);
}

// A causal mask, constant or torch.triu(full(-inf), 1), becomes is_causal=1 and is not kept.
TEST(FuseAttention, CausalMasksBecomeIsCausal) {
  std::string c = graph4(R"(
    %causal = const f32[5,5] {0, -inf, -inf, -inf, -inf, 0, 0, -inf, -inf, -inf, 0, 0, 0, -inf, -inf, 0, 0, 0, 0, -inf, 0, 0, 0, 0, 0}
    %masked: f32[1,2,5,5] = Add(%scores, %causal)
    %p: f32[1,2,5,5] = Softmax(%masked) {axis=-1})");
  Fused f = run(c);
  ASSERT_EQ(f.ops, Ops{"Attention"});
  EXPECT_EQ(f.attention->attr_int("is_causal", 0), 1);
  EXPECT_EQ(f.attention->num_inputs(), 3u);
  expect_same_values(c, kPasses);

  std::string tri = graph4(R"(
    %shape = const i64[2] {5, 5}
    %ninf = const f32[] {-inf}
    %one = const i64[] {1}
    %full: f32[5,5] = Expand(%ninf, %shape)
    %causal: f32[5,5] = Trilu(%full, %one) {upper=1}
    %masked1: f32[1,2,5,5] = Add(%scores, %causal)
    %masked: f32[1,2,5,5] = Add(%masked1, %pad)
    %p: f32[1,2,5,5] = Softmax(%masked) {axis=-1})",
                           ", %pad: f32[1,1,1,5]");
  Fused t = run(tri);
  ASSERT_EQ(t.ops, Ops{"Attention"});
  EXPECT_EQ(t.attention->attr_int("is_causal", 0), 1);
  EXPECT_EQ(input_names(t.attention).back(), "pad");  // the padding mask stays, causal goes
  expect_same_values(tri, kPasses);
}

// masked_fill with a bool causal mask (Where(triu, -inf, scores)) is causal too.
TEST(FuseAttention, MaskedFillCausalBecomesIsCausal) {
  std::string g = graph4(R"(
    %upper = const bool[5,5] {0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0}
    %ninf = const f32[] {-inf}
    %masked: f32[1,2,5,5] = Where(%upper, %ninf, %scores)
    %p: f32[1,2,5,5] = Softmax(%masked) {axis=-1})");
  Fused f = run(g);
  ASSERT_EQ(f.ops, Ops{"Attention"});
  EXPECT_EQ(f.attention->attr_int("is_causal", 0), 1);
  expect_same_values(g, kPasses);
}

// A causal buffer sliced to rows [1, 6) of 6 keys is causal shifted by one row; without a past of
// that length concatenated to K/V, ONNX's is_causal cannot say it: the mask is kept, and the report
// says why (a near miss of rule is_causal, named by the mask).
TEST(FuseAttention, ShiftedCausalMaskIsKeptWithANote) {
  std::string g = R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[1,2,5,8], %k: f32[1,2,6,8], %v: f32[1,2,6,8]) {
    %buf = const f32[6,6] {0, -inf, -inf, -inf, -inf, -inf, 0, 0, -inf, -inf, -inf, -inf, 0, 0, 0, -inf, -inf, -inf, 0, 0, 0, 0, -inf, -inf, 0, 0, 0, 0, 0, -inf, 0, 0, 0, 0, 0, 0}
    %st = const i64[1] {1}
    %en = const i64[1] {6}
    %ax = const i64[1] {0}
    %causal: f32[5,6] = Slice(%buf, %st, %en, %ax)
    %kt: f32[1,2,8,6] = Transpose(%k) {perm=[0, 1, 3, 2]}
    %qk: f32[1,2,5,6] = MatMul(%q, %kt)
    %masked: f32[1,2,5,6] = Add(%qk, %causal)
    %p: f32[1,2,5,6] = Softmax(%masked) {axis=-1}
    %y: f32[1,2,5,8] = MatMul(%p, %v)
    return %y
  }
)";
  Fused f = run(g);
  ASSERT_TRUE(f.attention);
  EXPECT_EQ(f.attention->attr_int("is_causal", 0), 0);
  EXPECT_EQ(input_names(f.attention).back(), "causal");
  ASSERT_EQ(f.report.near_misses.size(), 1u);
  EXPECT_EQ(f.report.near_misses[0].rule, "is_causal");
  EXPECT_EQ(f.report.near_misses[0].where, "causal");
  EXPECT_EQ(f.report.near_misses[0].reason,
            "the causal mask is shifted by 1 row(s) and K/V are not a past concatenated with new keys (is_causal "
            "shifts by the past only): kept as attn_mask");
  expect_same_values(g, kPasses);
}

// LLaMA's repeat_kv: one key/value head expanded to two; Attention does the repeat (GQA/MQA).
TEST(FuseAttention, RepeatKvBecomesFewerKvHeads) {
  std::string g = R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[1,2,5,8], %k: f32[1,1,5,8], %v: f32[1,1,5,8]) {
    %ax = const i64[1] {2}
    %s5 = const i64[5] {1, 1, 2, 5, 8}
    %s4 = const i64[4] {1, 2, 5, 8}
    %s = const f32[] {0.353553385}
    %ku: f32[1,1,1,5,8] = Unsqueeze(%k, %ax)
    %ke: f32[1,1,2,5,8] = Expand(%ku, %s5)
    %kr: f32[1,2,5,8] = Reshape(%ke, %s4)
    %vu: f32[1,1,1,5,8] = Unsqueeze(%v, %ax)
    %ve: f32[1,1,2,5,8] = Expand(%vu, %s5)
    %vr: f32[1,2,5,8] = Reshape(%ve, %s4)
    %kt: f32[1,2,8,5] = Transpose(%kr) {perm=[0, 1, 3, 2]}
    %qk: f32[1,2,5,5] = MatMul(%q, %kt)
    %scores: f32[1,2,5,5] = Mul(%qk, %s)
    %p: f32[1,2,5,5] = Softmax(%scores) {axis=-1}
    %y: f32[1,2,5,8] = MatMul(%p, %vr)
    return %y
  }
)";
  Fused f = run(g);
  ASSERT_EQ(f.ops, Ops{"Attention"});
  EXPECT_EQ(input_names(f.attention), (std::vector<std::string>{"q", "k", "v"}));
  expect_same_values(g, kPasses);
}

// Written for ONNX Runtime (optimize), a mask broadcast over the query axis gets that axis
// expanded; one that already has it is left alone.
TEST(FuseAttention, ExportExpandsMasksOverQueries) {
  std::string g = graph4(R"(
    %masked: f32[1,2,5,5] = Add(%scores, %mask)
    %p: f32[1,2,5,5] = Softmax(%masked) {axis=-1})",
                         ", %mask: f32[1,1,1,5]");
  ir::Model m = parse_model(dedent(g));
  passes::FusionReport report;
  run_with_report(m, kPasses, &report);
  EXPECT_TRUE(passes::expand_attention_masks_for_export(m));
  Ops ops;
  for (const ir::Node* n : m.graph->nodes()) ops.push_back(n->op_type());
  EXPECT_EQ(ops, (Ops{"Shape", "Concat", "Expand", "Attention"}));
  EXPECT_EQ(ir::shape_str(*m.graph->nodes().back()->input(3)->shape()), "[1,1,5,5]");
  EXPECT_FALSE(passes::expand_attention_masks_for_export(m));
}

std::string near_miss_reason(const std::string& text) {
  Fused f = run(text);
  EXPECT_EQ(std::count(f.ops.begin(), f.ops.end(), "Attention"), 0) << "fused a near miss";
  auto nm = f.report.ranked_near_misses();
  return nm.empty() ? "(no near miss reported)" : nm[0].reason;
}

// MaxViT's scores are 5-D, [batch, partitions, heads, n, n], with a relative position bias [heads,
// n, n]: Attention runs on the leading two dims merged into one batch dim (Reshape views around the
// node). A 5-D mask joins when its leading dims are all 1 (dropped) or the scores' own (merged); one
// that varies over the batch but not over the partitions cannot be merged, and says so.
std::string graph5(const std::string& mask_dims) {
  return R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[2,3,2,4,8], %k: f32[2,3,2,4,8], %v: f32[2,3,2,4,8], %mask: f32[)" + mask_dims + R"(]) {
    %s = const f32[] {0.353553385}
    %bias = const f32[2,4,4] {0.1, -0.2, 0.3, 0, 0.5, 0.1, -0.4, 0.2, 0, 0.3, -0.1, 0.6, 0.2, 0.2, -0.3, 0.1, -0.5, 0.4, 0, 0.1, 0.3, -0.2, 0.2, 0, 0.1, 0.1, 0.4, -0.6, 0, 0.2, -0.1, 0.3}
    %kt: f32[2,3,2,8,4] = Transpose(%k) {perm=[0, 1, 2, 4, 3]}
    %qk: f32[2,3,2,4,4] = MatMul(%q, %kt)
    %scores: f32[2,3,2,4,4] = Mul(%qk, %s)
    %biased: f32[2,3,2,4,4] = Add(%scores, %bias)
    %masked: f32[2,3,2,4,4] = Add(%biased, %mask)
    %p: f32[2,3,2,4,4] = Softmax(%masked) {axis=-1}
    %y: f32[2,3,2,4,8] = MatMul(%p, %v)
    return %y
  }
)";
}

TEST(FuseAttention, FiveDScoresMergeTheLeadingDims) {
  for (std::string dims : {"2,3,1,1,4", "1,1,2,4,4", "4"}) {
    SCOPED_TRACE(dims);
    std::string g = graph5(dims);
    Fused f = run(g);
    ASSERT_TRUE(f.attention);
    EXPECT_EQ(f.report.counts().at("attention"), 1);
    EXPECT_EQ(std::count(f.ops.begin(), f.ops.end(), "MatMul"), 0);
    expect_same_values(g, kPasses);
  }
  EXPECT_EQ(near_miss_reason(graph5("2,1,1,1,4")),
            "the mask varies over some of the batch dims the scores merge into one (mask [2,1,1,1,4], scores "
            "[2,3,2,4,4])");
}

TEST(FuseAttention, NearMisses) {
  // Softmax over the query axis is not attention over keys.
  EXPECT_EQ(near_miss_reason(graph4("    %p: f32[1,2,5,5] = Softmax(%scores) {axis=2}")),
            "Softmax axis is not the key axis");
  // A mask with a batch of 2 would broadcast the scores to a larger shape.
  EXPECT_EQ(near_miss_reason(R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[1,2,5,8], %k: f32[1,2,5,8], %v: f32[1,2,5,8], %mask: f32[2,1,1,5]) {
    %kt: f32[1,2,8,5] = Transpose(%k) {perm=[0, 1, 3, 2]}
    %qk: f32[1,2,5,5] = MatMul(%q, %kt)
    %masked: f32[2,2,5,5] = Add(%qk, %mask)
    %p: f32[2,2,5,5] = Softmax(%masked) {axis=-1}
    %y: f32[2,2,5,8] = MatMul(%p, %v)
    return %y
  }
)"),
            "mask is not broadcastable to the scores (mask [2,1,1,5], scores [1,2,5,5])");
  // Where(mask, scores, -10000): a fully masked row is uniform here, not what a fused mask gives.
  EXPECT_EQ(near_miss_reason(graph4(R"(
    %keep = const bool[1,1,1,5] {1, 1, 0, 1, 0}
    %fill = const f32[] {-10000}
    %masked: f32[1,2,5,5] = Where(%keep, %scores, %fill)
    %p: f32[1,2,5,5] = Softmax(%masked) {axis=-1})")),
            "Where fills masked scores with a finite value that a fused mask would not reproduce");
}

// A scale computed at run time (NTM's key strength, a temperature from the input), one value per
// query row, multiplies or divides the scores: it folds into Q. One that varies over the keys does not.
std::string row_scaled(const std::string& op, const std::string& factor_dims) {
  return R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[1,2,5,8], %k: f32[1,2,5,8], %v: f32[1,2,5,8], %f: f32[)" + factor_dims + R"(]) {
    %kt: f32[1,2,8,5] = Transpose(%k) {perm=[0, 1, 3, 2]}
    %qk: f32[1,2,5,5] = MatMul(%q, %kt)
    %scores: f32[1,2,5,5] = )" + op + R"((%qk, %f)
    %p: f32[1,2,5,5] = Softmax(%scores) {axis=-1}
    %y: f32[1,2,5,8] = MatMul(%p, %v)
    return %y
  }
)";
}

TEST(FuseAttention, RunTimeScalePerQueryRowFoldsIntoQ) {
  for (const char* op : {"Mul", "Div"}) {
    for (const char* dims : {"1,2,5,1", "5,1"}) {
      SCOPED_TRACE(std::string(op) + " [" + dims + "]");
      Fused f = run(row_scaled(op, dims));
      ASSERT_TRUE(f.attention);
      EXPECT_EQ(f.ops, (Ops{op, "Attention"}));
      expect_same_values(row_scaled(op, dims), kPasses);
    }
  }
  EXPECT_EQ(near_miss_reason(row_scaled("Mul", "1,1,1,5")),
            "the run-time scale of the scores varies over the keys (it is not one value per query row)");
}

// Softmax weights of a product, times a value: whatever lies between the products, the block is
// either fused or reported, never passed over in silence (here after only two matched nodes, below
// the usual near-miss depth).
TEST(FuseAttention, EverySoftmaxOfAProductIsExplained) {
  EXPECT_EQ(near_miss_reason(graph4(R"(
    %a: f32[1,2,5,5] = Abs(%scores)
    %p: f32[1,2,5,5] = Softmax(%a) {axis=-1})")),
            "MatMul.in0.Softmax.in0: expected Cast, found Abs node producing 'a'");
  // A softmax of an input (no product behind it) weighing a value is no attention: nothing to say.
  Fused f = run(R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%logits: f32[1,2,5,5], %v: f32[1,2,5,8]) {
    %p: f32[1,2,5,5] = Softmax(%logits) {axis=-1}
    %y: f32[1,2,5,8] = MatMul(%p, %v)
    return %y
  }
)");
  EXPECT_TRUE(f.report.near_misses.empty());
}

}  // namespace
}  // namespace onnxc::testing
