// use_kv_cache: IR text before -> pass -> IR text expected. Past/present pairs (a graph input appended
// to and returned as a graph output) become onnxc.CacheAppend / onnxc.CacheScatter; anything else stays.
#include <gtest/gtest.h>

#include "passes/use_kv_cache.h"
#include "test_util.h"

namespace onnxc::testing {
namespace {

TEST(UseKvCache, ConcatOfPastInputIntoPresentOutput) {
  EXPECT_EQ(run_passes(R"(
    graph main(%past: f32[1,2,p,4], %k: f32[1,2,s,4]) {
      %present: f32[1,2,p+s,4] = Concat(%past, %k) {axis=-2}
      return %present
    }
  )", {"use_kv_cache"}), canonical(R"(
    graph main(%past: f32[1,2,p,4], %k: f32[1,2,s,4]) {
      %present: f32[1,2,p+s,4] = onnxc.CacheAppend(%past, %k) {axis=2}
      return %present: f32[1,2,p+s,4]
    }
  )"));
}

TEST(UseKvCache, NearMissesStay) {
  // Not a cache pair: the first operand is no graph input (a past computed in the graph, or new rows
  // prepended to a past); the result is no graph output.
  std::string before = R"(
    graph main(%past: f32[1,2,p,4], %k: f32[1,2,s,4]) {
      %neg: f32[1,2,p,4] = Neg(%past)
      %a: f32[1,2,p+s,4] = Concat(%neg, %k) {axis=2}
      %b: f32[1,2,p+s,4] = Concat(%past, %k) {axis=2}
      %c: f32[1,2,p+s,4] = Add(%a, %b)
      %kn: f32[1,2,s,4] = Neg(%k)
      %d: f32[1,2,s+p,4] = Concat(%kn, %past) {axis=2}
      return %c, %d
    }
  )";
  EXPECT_EQ(run_passes(before, {"use_kv_cache"}), canonical(before));
}

TEST(UseKvCache, AttentionPastMovesIntoTheCache) {
  // GroupQueryAttention's form: 3-D Q, K, V with head counts, a 4-D past; the Attention then reads the
  // cache with its queries aligned to the last keys.
  EXPECT_EQ(run_passes(R"(
    graph main(%q: f32[1,s,64], %k: f32[1,s,32], %v: f32[1,s,32], %pk: f32[1,2,p,16], %pv: f32[1,2,p,16]) {
      %y: f32[1,s,64], %ok: f32[1,2,p+s,16], %ov: f32[1,2,p+s,16] = Attention(%q, %k, %v, %"", %pk, %pv) {is_causal=1, kv_num_heads=2, q_num_heads=4}
      return %y, %ok, %ov
    }
  )", {"use_kv_cache"}), canonical(R"(
    graph main(%q: f32[1,s,64], %k: f32[1,s,32], %v: f32[1,s,32], %pk: f32[1,2,p,16], %pv: f32[1,2,p,16]) {
      %ok: f32[1,2,p+s,16] = onnxc.CacheAppend(%pk, %k) {axis=2, heads=2}
      %ov: f32[1,2,p+s,16] = onnxc.CacheAppend(%pv, %v) {axis=2, heads=2}
      %y: f32[1,s,64] = Attention(%q, %ok, %ov) {is_causal=1, kv_num_heads=2, q_num_heads=4, __onnxc_causal_from_end=1}
      return %y: f32[1,s,64], %ok: f32[1,2,p+s,16], %ov: f32[1,2,p+s,16]
    }
  )"));
}

TEST(UseKvCache, TensorScatterKeepsTheModelsLength) {
  EXPECT_EQ(run_passes(R"(
    graph main(%cache: f32[2,8,4], %u: f32[2,1,4], %at: i64[2]) {
      %present: f32[2,8,4] = TensorScatter(%cache, %u, %at) {mode="circular"}
      return %present
    }
  )", {"use_kv_cache"}), canonical(R"(
    graph main(%cache: f32[2,8,4], %u: f32[2,1,4], %at: i64[2]) {
      %present: f32[2,8,4] = onnxc.CacheScatter(%cache, %u, %at) {axis=1, circular=1}
      return %present: f32[2,8,4]
    }
  )"));
}

// Caches stacked into one tensor (passes/stacked_kv_cache.h).
void run_pass_on(ir::Model& m, const std::string& name) { passes::find_pass(name)->make()->run(m); }

// The ops of a graph, in order.
std::vector<std::string> ops(const ir::Graph& g) {
  std::vector<std::string> r;
  for (const ir::Node* n : g.nodes()) r.push_back((n->domain().empty() ? "" : n->domain() + ".") + n->op_type());
  return r;
}

ir::Model stacked_kv_model(bool layers_read_each_other, bool present_is_output, bool sliced = false) {
  // Two elements of %past along axis 0 (Gather), each appended to along the sequence axis and stacked
  // back. Layer 1's new rows are %n, or computed from layer 0's appended cache.
  std::string n1 = layers_read_each_other ? "%r0" : "%n";
  return parse_model(dedent(R"(
    graph main(%past: f32[2,1,p,4], %n: f32[1,1,4]) {
      %i0 = const i64[] {0}
      %i1 = const i64[] {1}
      %ax = const i64[1] {0}
      %seq = const i64[1] {1}
      %p0: f32[1,p,4] = Gather(%past, %i0) {axis=0}
      %c0: f32[1,p+1,4] = Concat(%p0, %n) {axis=1}
      %r0: f32[1,1,4] = ReduceSum(%c0, %seq) {keepdims=1}
      )" + std::string(sliced ? R"(%one = const i64[1] {1}
      %two = const i64[1] {2}
      %s1: f32[1,1,p,4] = Slice(%past, %one, %two, %ax)
      %p1: f32[1,p,4] = Squeeze(%s1, %ax)
      )" : R"(%p1: f32[1,p,4] = Gather(%past, %i1) {axis=0}
      )") + R"(
      %c1: f32[1,p+1,4] = Concat(%p1, )" + n1 + R"() {axis=-2}
      %y: f32[1,1,4] = ReduceSum(%c1, %seq) {keepdims=1}
      %z: f32[1,1,4] = Add(%y, %r0)
      %u0: f32[1,1,p+1,4] = Unsqueeze(%c0, %ax)
      %u1: f32[1,1,p+1,4] = Unsqueeze(%c1, %ax)
      %present: f32[2,1,p+1,4] = Concat(%u0, %u1) {axis=0}
      %twice: f32[2,1,p+1,4] = Add(%present, %present)
      return %z, )" + std::string(present_is_output ? "%present" : "%twice") + R"(
    }
  )"));
}

TEST(UseKvCache, StackedKeysAndValuesFoldToOnePair) {
  // No new rows read an appended cache (K and V of one layer): present = past ++ stack(new rows) along
  // the sequence axis, one CacheAppend, and each reader takes its element of present.
  ir::Model m = stacked_kv_model(false, true);
  passes::FusionReport report;
  passes::PassContext ctx;
  ctx.report = &report;
  ASSERT_TRUE(passes::use_kv_cache(m, ctx));
  run_pass_on(m, "dce");
  EXPECT_EQ(ops(*m.graph), (std::vector<std::string>{"Unsqueeze", "Unsqueeze", "Concat", "onnxc.CacheAppend", "Gather",
                                                     "ReduceSum", "Gather", "ReduceSum", "Add"}));
  const ir::Node* c = m.graph->outputs()[1]->producer();
  EXPECT_EQ(c->op_type(), "CacheAppend");
  EXPECT_EQ(c->attr_int("axis", -1), 2);
  EXPECT_EQ(c->attr_int("layer", -1), -1);
  EXPECT_EQ(c->input(0)->name(), "past");
  EXPECT_EQ(m.graph->outputs()[1]->name(), "present");
  EXPECT_EQ(report.canonical.size(), 1u);
}

TEST(UseKvCache, StackedLayersBecomeAChainOfInPlaceAppends) {
  // Layer 1's new rows come from layer 0's appended cache: one link per layer, in the layers' order,
  // each writing its layer of the one stacked buffer; layer j reads element j of its link.
  ir::Model m = stacked_kv_model(true, true);
  passes::PassContext ctx;
  ASSERT_TRUE(passes::use_kv_cache(m, ctx));
  run_pass_on(m, "dce");
  std::vector<const ir::Node*> links;
  for (const ir::Node* n : m.graph->nodes())
    if (n->op_type() == "CacheAppend") links.push_back(n);
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0]->input(0)->name(), "past");
  EXPECT_EQ(links[0]->attr_int("layer", -1), 0);
  EXPECT_EQ(links[0]->attr_int("grow", -1), 1);
  EXPECT_EQ(links[0]->attr_int("axis", -1), 2);
  EXPECT_EQ(links[1]->input(0), links[0]->output(0));
  EXPECT_EQ(links[1]->attr_int("layer", -1), 1);
  EXPECT_EQ(links[1]->attr_int("grow", -1), 0);
  EXPECT_EQ(links[1]->output(0), m.graph->outputs()[1]);
  EXPECT_EQ(m.graph->outputs()[1]->name(), "present");
  for (const ir::Node* n : m.graph->nodes()) EXPECT_NE(n->op_type(), "Concat") << "no copy of the cache is left";
}

TEST(UseKvCache, StackedElementsMaySliceAndSqueeze) {
  // Squeeze(Slice(past, 1, 2, axis 0)) is element 1 as Gather(past, 1) is.
  ir::Model m = stacked_kv_model(true, true, true);
  passes::PassContext ctx;
  ASSERT_TRUE(passes::use_kv_cache(m, ctx));
  int links = 0;
  for (const ir::Node* n : m.graph->nodes()) links += n->op_type() == "CacheAppend";
  EXPECT_EQ(links, 2);
}

TEST(UseKvCache, StackedLayersNotReturnedStayAndSayWhy) {
  ir::Model m = stacked_kv_model(true, false);
  std::string before = ir::to_string(*m.graph);
  passes::FusionReport report;
  passes::PassContext ctx;
  ctx.report = &report;
  EXPECT_FALSE(passes::use_kv_cache(m, ctx));
  EXPECT_EQ(ir::to_string(*m.graph), before);
  ASSERT_EQ(report.near_misses.size(), 1u);
  EXPECT_NE(report.near_misses[0].reason.find("copied every step"), std::string::npos) << report.near_misses[0].reason;
}

}  // namespace
}  // namespace onnxc::testing
