// fuse_attention where the block has more outputs than Y: softmax weights also read outside it
// (Luong's `align`) -> qk_matmul_output mode 3, and GPT-2's cache -> past_key/past_value with the
// causal mask proven from symbolic slice bounds. Each fused graph is evaluated against the unfused.
#include <gtest/gtest.h>

#include <algorithm>

#include "fusion_util.h"
#include "passes/pipeline.h"

#ifdef ONNXC_HAVE_FRONTEND
#include "frontend/onnx_import.h"
#endif

namespace onnxc::testing {
namespace {

const std::vector<std::string> kPasses = {"canonicalize", "fuse_attention", "dce"};

std::vector<std::string> op_types(const ir::Model& m) {
  std::vector<std::string> r;
  for (const ir::Node* n : m.graph->nodes()) r.push_back(n->op_type());
  return r;
}

const ir::Node* find_op(const ir::Model& m, const std::string& op) {
  for (const ir::Node* n : m.graph->nodes())
    if (n->op_type() == op) return n;
  return nullptr;
}

using Ops = std::vector<std::string>;

// The weights are a graph output and are read by a node placed before the block's last MatMul.
TEST(FuseAttentionWeights, WeightsReadOutsideBecomeQkOutput) {
  std::string g = R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[1,2,5,8], %k: f32[1,2,5,8], %v: f32[1,2,5,8]) {
    %sqrt_d = const f32[] {2.82842708}
    %two = const f32[] {2}
    %kt: f32[1,2,8,5] = Transpose(%k) {perm=[0, 1, 3, 2]}
    %qk: f32[1,2,5,5] = MatMul(%q, %kt)
    %scores: f32[1,2,5,5] = Div(%qk, %sqrt_d)
    %p: f32[1,2,5,5] = Softmax(%scores) {axis=-1}
    %p2: f32[1,2,5,5] = Mul(%p, %two)
    %y: f32[1,2,5,8] = MatMul(%p, %v)
    return %y, %p, %p2
  }
)";
  ir::Model m = parse_model(dedent(g));
  passes::FusionReport report;
  run_with_report(m, kPasses, &report);
  EXPECT_EQ(op_types(m), (Ops{"Attention", "Mul"}));
  const ir::Node* a = find_op(m, "Attention");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->attr_int("qk_matmul_output_mode", 0), 3);
  ASSERT_EQ(a->num_outputs(), 4u);
  EXPECT_FALSE(a->output(1) || a->output(2));
  EXPECT_EQ(a->output(3)->name(), "p");
  EXPECT_EQ(report.counts().at("attention"), 1);
  expect_same_values(g, kPasses);
}

// Luong's bmm form on [b, t, d] with a masked_fill mask: Attention on [b, 1, ...], both outputs
// squeezed back.
TEST(FuseAttentionWeights, ThreeDLuongWithMaskedFill) {
  std::string g = R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%src: f32[2,3,8], %mem: f32[2,4,8]) {
    %pad = const bool[2,1,4] {0, 0, 1, 1, 0, 0, 0, 1}
    %ninf = const f32[] {-inf}
    %memt: f32[2,8,4] = Transpose(%mem) {perm=[0, 2, 1]}
    %s: f32[2,3,4] = MatMul(%src, %memt)
    %masked: f32[2,3,4] = Where(%pad, %ninf, %s)
    %align: f32[2,3,4] = Softmax(%masked) {axis=-1}
    %c: f32[2,3,8] = MatMul(%align, %mem)
    return %c, %align
  }
)";
  ir::Model m = parse_model(dedent(g));
  passes::FusionReport report;
  run_with_report(m, kPasses, &report);
  Ops ops = op_types(m);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Attention"), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Squeeze"), 2);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Softmax"), 0);
  expect_same_values(g, kPasses);
}

// Only the weights may escape: an inner value of a decomposed softmax read outside stays unfused.
TEST(FuseAttentionWeights, NearMissInnerValueEscapes) {
  std::string g = R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[1,2,5,8], %k: f32[1,2,5,8], %v: f32[1,2,5,8]) {
    %axes = const i64[1] {-1}
    %kt: f32[1,2,8,5] = Transpose(%k) {perm=[0, 1, 3, 2]}
    %qk: f32[1,2,5,5] = MatMul(%q, %kt)
    %mx: f32[1,2,5,1] = ReduceMax(%qk, %axes) {keepdims=1}
    %d: f32[1,2,5,5] = Sub(%qk, %mx)
    %e: f32[1,2,5,5] = Exp(%d)
    %sum: f32[1,2,5,1] = ReduceSum(%e, %axes) {keepdims=1}
    %p: f32[1,2,5,5] = Div(%e, %sum)
    %y: f32[1,2,5,8] = MatMul(%p, %v)
    return %y, %e
  }
)";
  ir::Model m = parse_model(dedent(g));
  passes::FusionReport report;
  run_with_report(m, kPasses, &report);
  EXPECT_FALSE(find_op(m, "Attention"));
  auto nm = report.ranked_near_misses();
  ASSERT_FALSE(nm.empty());
  EXPECT_EQ(nm[0].reason, "'e' (inside the match) is a graph output");
}

// GPT-2 with a cache: K = concat(past, new) on the sequence axis and the causal mask sliced from a
// constant tril buffer as bias[:, :, kv-q:kv, :kv], every length symbolic. Run through the
// pipeline's shape passes (the bounds are shape values), as the compiler does.
std::string gpt2_cached(const std::string& row_start, const std::string& row_end = "%klen") {
  std::string tril;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) tril += std::string(tril.empty() ? "" : ", ") + (j <= i ? "1" : "0");
  return R"(
  model ir_version=8 opset=[ai.onnx:17]
  graph main(%q: f32[1,2,seq,8], %knew: f32[1,2,seq,8], %vnew: f32[1,2,seq,8], %pk: f32[1,2,past,8], %pv: f32[1,2,past,8]) {
    %bias = const bool[1,1,16,16] {)" + tril + R"(}
    %i2 = const i64[1] {2}
    %ax2 = const i64[1] {2}
    %ax3 = const i64[1] {3}
    %zero = const i64[1] {0}
    %sqrt_d = const f32[] {2.82842708}
    %min = const f32[] {-3.4028235e38}
    %k = Concat(%pk, %knew) {axis=2}
    %v = Concat(%pv, %vnew) {axis=2}
    %kshape = Shape(%k)
    %qshape = Shape(%q)
    %klen = Gather(%kshape, %i2) {axis=0}
    %qlen = Gather(%qshape, %i2) {axis=0}
    %start = )" + row_start + R"(
    %rows = Slice(%bias, %start, )" + row_end + R"(, %ax2)
    %causal = Slice(%rows, %zero, %klen, %ax3)
    %kt = Transpose(%k) {perm=[0, 1, 3, 2]}
    %qk = MatMul(%q, %kt)
    %scores = Div(%qk, %sqrt_d)
    %masked = Where(%causal, %scores, %min)
    %p = Softmax(%masked) {axis=-1}
    %y = MatMul(%p, %v)
    return %y, %k, %v
  }
)";
}

const std::vector<std::string> kPipeline = {
    "infer_shapes", "fixpoint(constant_folding, simplify_shapes, remove_identities, canonicalize, cse, dce)",
    "fuse_attention", "dce"};

ir::Model run_pipeline_on(const std::string& text, passes::FusionReport& report) {
  ir::Model m = parse_model(dedent(text));
  passes::PipelineOptions opt;
  opt.fusion_report = &report;
  passes::run_pipeline(m, kPipeline, opt);
  return m;
}

// Inputs for seq=3 new tokens after past=5 cached ones.
std::map<std::string, ir::Tensor> cached_inputs(int64_t seq, int64_t past) {
  std::map<std::string, ir::Tensor> in;
  unsigned seed = 3;
  for (auto [name, len] : {std::pair{"q", seq}, {"knew", seq}, {"vnew", seq}, {"pk", past}, {"pv", past}}) {
    ir::Tensor t(ir::DType::Float32, {1, 2, len, 8});
    for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = std::sin(0.37f * float(i) + float(seed));
    ++seed;
    in[name] = t;
  }
  return in;
}

void expect_same_cached(const std::string& text, const ir::Model& fused) {
  ir::Model before = parse_model(dedent(text));
  for (auto [seq, past] : {std::pair{int64_t{3}, int64_t{5}}, {1, 7}, {4, 0}}) {
    auto in = cached_inputs(seq, past);
    auto want = eval_graph(before, in), got = eval_graph(fused, in);
    for (const auto& [name, w] : want)
      for (int64_t i = 0; i < w.numel(); ++i)
        ASSERT_NEAR(got.at(name).get_f64(i), w.get_f64(i), 1e-5) << name << "[" << i << "] seq " << seq << " past " << past;
  }
}

TEST(FuseAttentionPast, Gpt2CachedCausalSliceBecomesIsCausalWithPast) {
  std::string g = gpt2_cached("Sub(%klen, %qlen)");
  passes::FusionReport report;
  ir::Model m = run_pipeline_on(g, report);
  const ir::Node* a = find_op(m, "Attention");
  ASSERT_TRUE(a) << ir::to_string(*m.graph);
  EXPECT_EQ(a->attr_int("is_causal", 0), 1);
  ASSERT_EQ(a->num_inputs(), 6u);
  EXPECT_FALSE(a->input(3)) << "the causal mask was kept";
  EXPECT_EQ(a->input(1)->name(), "knew");
  EXPECT_EQ(a->input(4)->name(), "pk");
  EXPECT_EQ(a->input(5)->name(), "pv");
  // The present outputs replace the Concats (graph outputs k and v keep their names).
  EXPECT_EQ(a->output(1)->name(), "k");
  EXPECT_EQ(a->output(2)->name(), "v");
  for (const char* gone : {"Concat", "Slice", "Where", "Softmax"}) EXPECT_FALSE(find_op(m, gone)) << gone;
  expect_same_cached(g, m);
}

// Rows [0, q) (a top-left causal mask): plain is_causal without a past. The bottom-right
// slice over keys that are not a cache concatenation (kv - q is no past length): ONNX's is_causal
// cannot say it, so the mask is kept.
TEST(FuseAttentionPast, OtherCausalSlicesKeepTheirMeaning) {
  std::string top_left = gpt2_cached("Sub(%klen, %klen)", "%qlen");
  passes::FusionReport report;
  ir::Model m = run_pipeline_on(top_left, report);
  const ir::Node* a = find_op(m, "Attention");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->attr_int("is_causal", 0), 1);
  EXPECT_LE(a->num_inputs(), 3u);
  expect_same_cached(top_left, m);

  std::string cross = gpt2_cached("Sub(%klen, %qlen)");
  for (const char* v : {"k", "v"}) {
    std::string concat = std::string("    %") + v + " = Concat(%p" + v + ", %" + v + "new) {axis=2}\n";
    cross.replace(cross.find(concat), concat.size(), "");
    std::string in = std::string("%p") + v + ": f32[1,2,past,8]";
    cross.replace(cross.find(in), in.size(), std::string("%") + v + ": f32[1,2,past,8]");
  }
  passes::FusionReport r2;
  ir::Model c = run_pipeline_on(cross, r2);
  const ir::Node* b = find_op(c, "Attention");
  ASSERT_TRUE(b) << ir::to_string(*c.graph);
  EXPECT_EQ(b->attr_int("is_causal", 0), 0);
  ASSERT_GE(b->num_inputs(), 4u);
  EXPECT_TRUE(b->input(3)) << "the causal slice must stay a mask";
  // Keys k/v of length `past` (>= seq here), queries of length seq.
  ir::Model before = parse_model(dedent(cross));
  std::map<std::string, ir::Tensor> in = cached_inputs(3, 6);
  in["k"] = in["pk"], in["v"] = in["pv"];
  in.erase("pk"), in.erase("pv");
  auto want = eval_graph(before, in), got = eval_graph(c, in);
  for (int64_t i = 0; i < want.at("y").numel(); ++i) ASSERT_NEAR(got.at("y").get_f64(i), want.at("y").get_f64(i), 1e-5) << i;
}

#ifdef ONNXC_HAVE_FRONTEND
// The committed GPT-2 export with a cache (symbolic batch, seq and past): each block's causal
// slice becomes is_causal with the past taken in; only the padding mask stays. (fusion_test.sh
// runs the same model compiled and in ONNX Runtime against torch.)
TEST(FuseAttentionPast, Gpt2PastExport) {
  ir::Model m = frontend::load_model(std::string(ONNXC_SOURCE_DIR) + "/tests/models/fusion/gpt2_past_op17/model.onnx");
  passes::FusionReport report;
  passes::PipelineOptions opt;
  opt.fusion_report = &report;
  // The fusion's own result: the pipeline before use_kv_cache moves the past out of the node.
  std::vector<std::string> names = passes::default_pipeline();
  ir::Model full = frontend::load_model(std::string(ONNXC_SOURCE_DIR) + "/tests/models/fusion/gpt2_past_op17/model.onnx");
  names.erase(std::find(names.begin(), names.end(), "use_kv_cache"));
  passes::run_pipeline(m, names, opt);
  int blocks = 0;
  for (const ir::Node* n : m.graph->nodes()) {
    EXPECT_NE(n->op_type(), "Where") << n->describe() << ": a causal mask was materialized";
    if (n->op_type() != "Attention") continue;
    ++blocks;
    EXPECT_EQ(n->attr_int("is_causal", 0), 1) << n->describe();
    ASSERT_EQ(n->num_inputs(), 6u) << n->describe();
    EXPECT_EQ(n->input(4)->name().rfind("past_key_", 0), 0u) << n->describe();
    EXPECT_EQ(n->output(1)->name().rfind("present_key_", 0), 0u) << n->describe();
  }
  EXPECT_EQ(blocks, 2);
  // The whole pipeline: each block's past and present are a KV cache the runtime appends in place,
  // and the Attention reads the cache with its queries aligned to the last keys.
  passes::run_pipeline(full, passes::default_pipeline(), opt);
  int appends = 0, attentions = 0;
  for (const ir::Node* n : full.graph->nodes()) {
    if (n->domain() == "onnxc" && n->op_type() == "CacheAppend") {
      ++appends;
      EXPECT_EQ(n->input(0)->name().rfind("past_", 0), 0u) << n->describe();
      EXPECT_TRUE(n->output(0)->is_graph_output()) << n->describe();
    }
    if (n->op_type() != "Attention") continue;
    ++attentions;
    EXPECT_EQ(n->attr_int("__onnxc_causal_from_end", 0), 1) << n->describe();
    EXPECT_EQ(n->input(1)->producer()->op_type(), "CacheAppend") << n->describe();
  }
  EXPECT_EQ(appends, 4);
  EXPECT_EQ(attentions, 2);
}
#endif

}  // namespace
}  // namespace onnxc::testing
