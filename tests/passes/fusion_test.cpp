// The fusion framework: the pattern extensions (optional and variadic inputs, list attributes,
// constant tensors, interior uses), the driver (subgraphs, disabled families, near-miss ranking)
// and the rewrite builder (attributes, several outputs, names kept).
#include <gtest/gtest.h>

#include "fusion_util.h"
#include "passes/fusion.h"

namespace onnxc::testing {
namespace {

using namespace passes::pat;

ir::Node* producer(ir::Model& m, const std::string& name) { return m.graph->find_value(name)->producer(); }

TEST(FusionPatterns, OptionalAndVariadicInputs) {
  ir::Model m = parse_model(dedent(R"(
    graph main(%x: f32[2,4], %w: f32[4], %b: f32[4]) {
      %a: f32[2,4] = LayerNormalization(%x, %w)
      %c: f32[2,4] = LayerNormalization(%x, %w, %b)
      %k = const f32[2,4] {1, 1, 1, 1, 1, 1, 1, 1}
      %d: f32[6,4] = Concat(%a, %k, %k) {axis=0}
      %e: f32[6,4] = Concat(%a, %k, %x) {axis=0}
      return %c, %d, %e
    }
  )"));
  Pattern ln = op("LayerNormalization", {any(), any(), optional(any().capture("bias"))});
  MatchResult r = match(ln, *producer(m, "a"));
  ASSERT_TRUE(r) << r.reason;
  EXPECT_FALSE(r->has("bias"));
  r = match(ln, *producer(m, "c"));
  ASSERT_TRUE(r) << r.reason;
  EXPECT_EQ(r->value("bias")->name(), "b");
  Pattern cat = op("Concat", {any()}).variadic(const_all(1.0)).attr("axis", 0);
  EXPECT_TRUE(match(cat, *producer(m, "d")));
  r = match(cat, *producer(m, "e"));
  EXPECT_EQ(r.reason, "Concat.in2: 'x' is not a constant");
  EXPECT_EQ(match(op("LayerNormalization", {any()}), *producer(m, "c")).reason,
            "LayerNormalization: expected 1 inputs, found 3");
}

TEST(FusionPatterns, ListAttributesAndInteriorUses) {
  ir::Model m = parse_model(dedent(R"(
    graph main(%x: f32[2,3,4]) {
      %t: f32[2,4,3] = Transpose(%x) {perm=[0, 2, 1]}
      %r: f32[2,4,3] = Relu(%t)
      %n: f32[2,4,3] = Neg(%r)
      return %n, %t
    }
  )"));
  Pattern p = op("Neg", {op("Relu", {op("Transpose", {any()}).attr_ints("perm", {0, 2, 1})})});
  MatchResult r = match(p, *producer(m, "n"));
  ASSERT_TRUE(r) << r.reason;
  EXPECT_EQ(r->nodes().size(), 3u);
  EXPECT_EQ(r->nodes()[0]->op_type(), "Neg");
  EXPECT_EQ(r->interior_use_outside(), "'t' (inside the match) is a graph output");
  EXPECT_EQ(match(op("Transpose").attr_ints("perm", {1, 0, 2}), *producer(m, "t")).reason,
            "Transpose: attribute perm is [0, 2, 1], not [1, 0, 2]");
}

// A toy rule: Neg(Neg(x)) -> x via a two-output onnxc op, to exercise the builder.
std::vector<passes::FusionRule> toy_rules() {
  Pattern x = any().capture("x");
  return {{"double_neg", "gelu", op("Neg", {op("Neg", {x})}), nullptr,
           [](const Match& m, passes::RewriteBuilder& b) {
             ir::Node* n = b.replace({m.root(), nullptr}, "Pair", {m["x"]},
                                     {passes::RewriteBuilder::attr("k", int64_t{2}),
                                      passes::RewriteBuilder::attr("perm", std::vector<int64_t>{1, 0})},
                                     "onnxc");
             EXPECT_EQ(n->num_outputs(), 2u);
           },
           0, false, 2}};
}

TEST(FusionDriver, BuilderKeepsNamesAndRunsInSubgraphs) {
  ir::Model m = parse_model(dedent(R"(
    graph main(%x: f32[4], %c: bool[]) {
      %a: f32[4] = Neg(%x)
      %y: f32[4] = Neg(%a)
      return %y
    }
  )"));
  // A subgraph (If's then-branch) reading x from the outer scope, with the same idiom.
  ir::Graph& g = *m.graph;
  auto branch = std::make_shared<ir::Graph>("then", &g);
  ir::Node* n1 = branch->add_node("Neg", {g.find_value("x")}, {"t1"});
  ir::Node* n2 = branch->add_node("Neg", {n1->output(0)}, {"t2"});
  branch->add_output(n2->output(0));
  ir::Node* iff = g.add_node("If", {g.find_value("c")}, {"z"});
  ir::Attribute then_attr;
  then_attr.name = "then_branch";
  then_attr.kind = ir::Attribute::Kind::Graph;
  then_attr.g = branch;
  iff->set_attr(then_attr);
  g.add_output(iff->output(0));

  passes::FusionReport report;
  passes::PassContext ctx;
  ctx.report = &report;
  EXPECT_TRUE(passes::run_fusion_rules(m, toy_rules(), ctx));
  ASSERT_EQ(report.fused.size(), 2u);
  EXPECT_EQ(report.fused[0].where, "then/t2");  // subgraphs first
  EXPECT_EQ(report.fused[1].where, "y");
  EXPECT_EQ(report.counts().at("gelu"), 2);
  std::string text = ir::to_string(g);
  EXPECT_NE(text.find("%y: f32[4], %\"\" = onnxc.Pair(%x) {k=2, perm=[1, 0]}"), std::string::npos) << text;
  EXPECT_EQ(g.outputs()[0]->name(), "y");
  EXPECT_EQ(g.outputs()[0]->producer()->op_type(), "Pair");
  EXPECT_EQ(branch->outputs()[0]->name(), "t2");
  EXPECT_EQ(branch->num_nodes(), 1u);
}

TEST(FusionDriver, DisabledFamilyAndNearMissRanking) {
  const char* text = R"(
    graph main(%x: f32[4]) {
      %a: f32[4] = Neg(%x)
      %y: f32[4] = Neg(%a)
      return %y
    }
  )";
  ir::Model m = parse_model(dedent(text));
  passes::FusionReport report;
  passes::PassContext ctx;
  ctx.report = &report;
  ctx.disabled = {"gelu"};
  EXPECT_FALSE(passes::run_fusion_rules(m, toy_rules(), ctx));
  EXPECT_TRUE(report.fused.empty());

  report.near_misses = {{"a", "gelu", "p", "r1", 3}, {"b", "gelu", "q", "r2", 7}};
  std::vector<passes::NearMiss> ranked = report.ranked_near_misses();
  EXPECT_EQ(ranked[0].rule, "b");
  EXPECT_EQ(ranked[1].rule, "a");
}

// A planned rule's analysis runs once per match, in the check (a rejected candidate costs one more
// run), and the rewrite reads the plan of the match it rewrites.
int g_analyses = 0;

std::string plan_neg(const Match& m, const passes::FusionContext&, std::string& plan) {
  ++g_analyses;
  if (m["x"]->name() == "skip") return "the input is named skip";
  plan = m["x"]->name() + "_twice_negated";
  return "";
}

void build_neg(const Match& m, const std::string& plan, passes::RewriteBuilder& b) {
  b.replace({m.root()}, "Identity", {m["x"]})->set_name(plan);
}

TEST(FusionDriver, PlannedRuleAnalysesOncePerMatch) {
  ir::Model m = parse_model(dedent(R"(
    graph main(%x: f32[4], %skip: f32[4]) {
      %a: f32[4] = Neg(%x)
      %y: f32[4] = Neg(%a)
      %b: f32[4] = Neg(%skip)
      %z: f32[4] = Neg(%b)
      return %y, %z
    }
  )"));
  std::vector<passes::FusionRule> rules = {passes::planned_rule<std::string>(
      "double_neg", "gelu", op("Neg", {op("Neg", {any().capture("x")})}), plan_neg, build_neg)};
  passes::FusionReport report;
  passes::PassContext ctx;
  ctx.report = &report;
  g_analyses = 0;
  EXPECT_TRUE(passes::run_fusion_rules(m, rules, ctx));
  EXPECT_EQ(g_analyses, 2);  // y's match (rewritten) and z's (rejected); none again in the rewrite
  ASSERT_EQ(report.fused.size(), 1u);
  EXPECT_EQ(m.graph->outputs()[0]->producer()->name(), "x_twice_negated");
  EXPECT_EQ(m.graph->outputs()[1]->producer()->op_type(), "Neg");
}

// Canonical rule sets walk in program order and report apart from the fusions, without near misses.
TEST(FusionDriver, CanonicalRulesReportApart) {
  ir::Model m = parse_model(dedent(R"(
    graph main(%x: f32[4]) {
      %a: f32[4] = Neg(%x)
      %y: f32[4] = Neg(%a)
      %n: f32[4] = Neg(%y)
      return %n
    }
  )"));
  passes::FusionReport report;
  passes::PassContext ctx;
  ctx.report = &report;
  EXPECT_TRUE(passes::run_fusion_rules(m, toy_rules(), ctx, passes::RuleSetKind::kCanonical));
  EXPECT_TRUE(report.fused.empty());
  EXPECT_TRUE(report.near_misses.empty());
  // In program order, y = Neg(Neg(x)) is rewritten first; n then reads the Pair and stays.
  ASSERT_EQ(report.canonical.size(), 1u);
  EXPECT_EQ(report.canonical[0].where, "y");
  EXPECT_EQ(report.counts().at("gelu"), 0);
}

}  // namespace
}  // namespace onnxc::testing
