// dce: IR text before -> eliminate_dead_code -> IR text expected.
#include <gtest/gtest.h>

#include "test_util.h"

namespace onnxc::testing {
namespace {

TEST(Dce, RemovesUnusedChainsAndInitializers) {
  EXPECT_EQ(run_pass(R"(
    graph main(%x: f32[4]) {
      %w = const f32[] {2}
      %unused_w = const f32[] {3}
      %a: f32[4] = Mul(%x, %w)
      %dead1: f32[4] = Neg(%a)
      %dead2: f32[4] = Abs(%dead1)
      %y: f32[4] = Relu(%a)
      return %y: f32[4]
    }
  )", "dce"), canonical(R"(
    graph main(%x: f32[4]) {
      %w = const f32[] {2}
      %a: f32[4] = Mul(%x, %w)
      %y: f32[4] = Relu(%a)
      return %y: f32[4]
    }
  )"));
}

TEST(Dce, KeepsMultiOutputNodeWithOneUsedOutput) {
  // Near miss: Split's second output is unused, but the node computes the first one too.
  std::string before = R"(
    graph main(%x: f32[4]) {
      %a: f32[2], %b: f32[2] = Split(%x) {axis=0}
      return %a: f32[2]
    }
  )";
  EXPECT_EQ(run_pass(before, "dce"), canonical(before));
}

TEST(Dce, KeepsGraphOutputsThatAreInputsOrConstants) {
  // Near miss: a constant that is a graph output is used by the interface.
  std::string before = R"(
    graph main(%x: f32[4]) {
      %c = const f32[] {1}
      return %x: f32[4], %c: f32[]
    }
  )";
  EXPECT_EQ(run_pass(before, "dce"), canonical(before));
}

TEST(Dce, RecursesIntoSubgraphs) {
  ir::Model m = parse_model(dedent(R"(
    graph main(%x: f32[4], %cond: bool[]) {
      %outer_dead: f32[4] = Neg(%x)
      %used_inside: f32[4] = Abs(%x)
      return %x: f32[4]
    }
  )"));
  ir::Graph& g = *m.graph;
  // y = If(cond) { then: z = Relu(used_inside); dead = Neg(used_inside); return z } else { return x }
  auto then_g = std::make_shared<ir::Graph>("then", &g);
  ir::Node* relu = then_g->add_node("Relu", {g.find_value("used_inside")}, {"z"});
  then_g->add_node("Neg", {g.find_value("used_inside")}, {"dead_inside"});
  then_g->add_output(relu->output(0));
  auto else_g = std::make_shared<ir::Graph>("else", &g);
  else_g->add_output(g.find_value("x"));
  ir::Node* iff = g.add_node("If", {g.find_value("cond")}, {"y"});
  ir::Attribute a;
  a.name = "then_branch";
  a.kind = ir::Attribute::Kind::Graph;
  a.g = then_g;
  iff->set_attr(a);
  a.name = "else_branch";
  a.g = else_g;
  iff->set_attr(a);
  g.set_output(0, iff->output(0));
  ASSERT_TRUE(passes::find_pass("dce")->make()->run(m));
  std::string out = ir::to_string(g);
  EXPECT_EQ(out.find("outer_dead"), std::string::npos) << out;
  EXPECT_EQ(out.find("dead_inside"), std::string::npos) << out;
  EXPECT_NE(out.find("%used_inside: f32[4] = Abs(%x)"), std::string::npos) << out;  // used by the subgraph
  EXPECT_NE(out.find("%z"), std::string::npos) << out;
  // ir::Graph's destructor frees a graph's values before its nodes, so a subgraph that still uses
  // outer values would touch freed memory when the model dies (reported to the IR owner). Drop
  // the If node while the outer values are alive.
  g.clear_outputs();
  g.remove_node(iff);
}

}  // namespace
}  // namespace onnxc::testing
