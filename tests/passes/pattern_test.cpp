// The pattern matcher: captures, alternatives, either-order matching, predicates, failure reasons.
#include <gtest/gtest.h>

#include "ir/error.h"
#include "passes/pattern.h"
#include "test_util.h"

namespace onnxc::testing {
namespace {

using namespace passes::pat;

ir::Node* producer(ir::Model& m, const std::string& name) { return m.graph->find_value(name)->producer(); }

// x - mean(x), then its variance: the core of layer norm, sharing `x` and `d`.
const char* kLayerNormCore = R"(
  graph main(%x: f32[batch,seq,64]) {
    %two = const f32[] {2}
    %mean: f32[batch,seq,1] = ReduceMean(%x) {axes=[-1]}
    %d: f32[batch,seq,64] = Sub(%x, %mean)
    %sq: f32[batch,seq,64] = Pow(%d, %two)
    %var: f32[batch,seq,1] = ReduceMean(%sq) {axes=[-1]}
    return %var, %d
  }
)";

TEST(Pattern, CapturesAndSharedNames) {
  ir::Model m = parse_model(dedent(kLayerNormCore));
  Pattern x = any().capture("x");
  Pattern d = op("Sub", {x, op("ReduceMean", {x}).capture("mean")}).capture("d");
  Pattern var = op("ReduceMean", {op("Pow", {d, const_value(2.0)})}).capture("var");
  MatchResult r = match(var, *producer(m, "var"));
  ASSERT_TRUE(r) << r.reason;
  EXPECT_EQ(r->value("x")->name(), "x");
  EXPECT_EQ(r->value("d")->name(), "d");
  EXPECT_EQ(r->node("mean")->op_type(), "ReduceMean");
  EXPECT_EQ(r->node("x"), nullptr);  // captured on any(): no node
  EXPECT_THROW(r->value("nope"), InternalError);
}

TEST(Pattern, SharedCaptureMustBeTheSameValue) {
  ir::Model m = parse_model(dedent(R"(
    graph main(%x: f32[4], %y: f32[4]) {
      %mean: f32[1] = ReduceMean(%y)
      %d: f32[4] = Sub(%x, %mean)
      return %d
    }
  )"));
  Pattern x = any().capture("x");
  MatchResult r = match(op("Sub", {x, op("ReduceMean", {x})}), *producer(m, "d"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.reason, "Sub.in1.ReduceMean.in0: capture 'x' would bind both 'x' and 'y'");
}

TEST(Pattern, CommutativeOpsMatchEitherOrder) {
  ir::Model m = parse_model(dedent(R"(
    graph main(%x: f32[4]) {
      %half = const f32[] {0.5}
      %a: f32[4] = Mul(%half, %x)
      %s: f32[4] = Sub(%half, %x)
      return %a, %s
    }
  )"));
  Pattern p = op("Mul", {any().capture("x"), const_value(0.5)});
  MatchResult r = match(p, *producer(m, "a"));
  ASSERT_TRUE(r) << r.reason;  // Mul is commutative in the op table
  EXPECT_EQ(r->value("x")->name(), "x");
  EXPECT_FALSE(match(p.commutative(false), *producer(m, "a")));
  Pattern sub = op("Sub", {any(), const_value(0.5)});
  MatchResult rs = match(sub, *producer(m, "s"));
  ASSERT_FALSE(rs);  // Sub is not
  EXPECT_EQ(rs.reason, "Sub.in1: 'x' is not a constant");
  EXPECT_TRUE(match(sub.commutative(), *producer(m, "s")));
}

TEST(Pattern, AlternativesBacktrack) {
  // Pow(d, 2) or Mul(d, d); the first alternative binds d, fails later, and the second is retried.
  ir::Model m = parse_model(dedent(R"(
    graph main(%x: f32[4]) {
      %d: f32[4] = Neg(%x)
      %sq: f32[4] = Mul(%d, %d)
      %o: f32[4] = Add(%sq, %d)
      return %o
    }
  )"));
  Pattern d = any().capture("d");
  Pattern square = alt({op("Pow", {d, const_value(2)}), op("Mul", {d, d})});
  MatchResult r = match(op("Add", {square, d}), *producer(m, "o"));
  ASSERT_TRUE(r) << r.reason;
  EXPECT_EQ(r->value("d")->name(), "d");
  // optional_op: an optional Cast in front of x.
  EXPECT_TRUE(match(optional_op("Cast", any().capture("v")), m.graph->find_value("x")));
}

TEST(Pattern, PredicatesAndReasons) {
  ir::Model m = parse_model(dedent(R"(
    graph main(%x: f32[2,4], %y: f32[4]) {
      %k = const f32[] {3}
      %sm: f32[2,4] = Softmax(%x) {axis=0}
      %a: f32[2,4] = Add(%sm, %y)
      %b: f32[2,4] = Mul(%sm, %k)
      return %a, %b
    }
  )"));
  MatchResult r1 = match(op("Softmax").attr("axis", -1, -1), *producer(m, "sm"));
  ASSERT_FALSE(r1);
  EXPECT_EQ(r1.reason, "Softmax: attribute axis is 0, not -1");
  MatchResult r2 = match(op("Add", {op("Softmax").one_use(), any()}), *producer(m, "a"));
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.reason, "Add.in0: 'sm' has more than one use");
  EXPECT_TRUE(match(op("Mul", {any(), any().constant().scalar()}), *producer(m, "b")));
  MatchResult r3 = match(op("Add", {any(), any().scalar()}).commutative(false), *producer(m, "a"));
  EXPECT_EQ(r3.reason, "Add.in1: 'y' is not a scalar");
  MatchResult r4 = match(op("Mul", {op("Softmax"), any()}).where_node([](const ir::Node& n) {
                           return n.name().empty() ? std::string("node has no name") : "";
                         }),
                         *producer(m, "b"));
  EXPECT_EQ(r4.reason, "Mul: node has no name");
  MatchResult r5 = match(op("Add", {op("Relu"), any()}).commutative(false), *producer(m, "a"));
  EXPECT_EQ(r5.reason, "Add.in0: expected Relu, found Softmax node producing 'sm'");
  MatchResult r6 = match(op("Add", {any()}), *producer(m, "a"));
  EXPECT_EQ(r6.reason, "Add: expected 1 inputs, found 2");
  MatchResult r7 = match(op("Relu"), m.graph->find_value("x"));
  EXPECT_EQ(r7.reason, "expected Relu, found graph input 'x'");
}

TEST(Pattern, ReportsTheAttemptThatGotFurthest) {
  ir::Model m = parse_model(dedent(R"(
    graph main(%x: f32[4]) {
      %e: f32[4] = Tanh(%x)
      %p: f32[4] = Add(%e, %x)
      return %p
    }
  )"));
  // Both input orders fail; the order that matched Add.in1 = x first gets further (into in0).
  Pattern p = op("Add", {op("Erf", {any().capture("x")}), any().capture("x")});
  MatchResult r = match(p, *producer(m, "p"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.reason, "Add.in0: expected Erf, found Tanh node producing 'e'");
}

TEST(Pattern, OutputIndexDomainAndFloatAttributes) {
  ir::Model m = parse_model(dedent(R"(
    graph main(%x: f32[4,8]) {
      %a: f32[4,4], %b: f32[4,4] = Split(%x) {axis=1}
      %n: f32[4,4] = LayerNormalization(%b) {epsilon=9.99999975e-06}
      %s: i64[2] = onnxc.SymbolicShape(%x) {dims=["4", "8"]}
      return %a, %n, %s
    }
  )"));
  Pattern second = op("Split", {any()}).output(1).capture("split");
  EXPECT_TRUE(match(op("LayerNormalization", {second}).attr_float("epsilon", 1e-5f), *producer(m, "n")));
  MatchResult first = match(op("LayerNormalization", {op("Split").output(0)}), *producer(m, "n"));
  EXPECT_EQ(first.reason, "LayerNormalization.in0: expected output 0 of Split node producing 'a'");
  MatchResult eps = match(op("LayerNormalization").attr_float("epsilon", 1e-6f), *producer(m, "n"));
  EXPECT_FALSE(eps);
  EXPECT_TRUE(match(op("SymbolicShape").domain("onnxc"), *producer(m, "s")));
  EXPECT_FALSE(match(op("SymbolicShape"), *producer(m, "s")));  // default domain only
}

TEST(Pattern, DocumentedGeluExampleMatchesTheExport) {
  // The example in pattern.h, on GELU as torch.onnx.export writes it (decoder_prelayer_causal).
  ir::Model m = parse_model(dedent(R"(
    graph main(%h: f32[batch,seq,128]) {
      %sqrt2 = const f32[] {1.41421354}
      %one = const f32[] {1}
      %half = const f32[] {0.5}
      %div: f32[batch,seq,128] = Div(%h, %sqrt2)
      %erf: f32[batch,seq,128] = Erf(%div)
      %add: f32[batch,seq,128] = Add(%erf, %one)
      %mul: f32[batch,seq,128] = Mul(%h, %add)
      %gelu: f32[batch,seq,128] = Mul(%mul, %half)
      return %gelu
    }
  )"));
  Pattern x = any().capture("x");
  Pattern erf = op("Erf", {op("Div", {x, const_value(1.41421356, 1e-5)})});
  Pattern one_plus = op("Add", {erf, const_value(1.0)}).one_use();
  Pattern gelu = alt({op("Mul", {op("Mul", {x, one_plus}), const_value(0.5)}),
                      op("Mul", {x, op("Mul", {one_plus, const_value(0.5)})})})
                     .capture("out");
  MatchResult r = match(gelu, *producer(m, "gelu"));
  ASSERT_TRUE(r) << r.reason;
  EXPECT_EQ(r->value("x")->name(), "h");
  EXPECT_EQ(r->value("out")->name(), "gelu");
  // The tanh approximation is a near miss, and the reason says where.
  ir::Model t = parse_model(dedent(R"(
    graph main(%h: f32[8]) {
      %sqrt2 = const f32[] {1.41421354}
      %one = const f32[] {1}
      %half = const f32[] {0.5}
      %div: f32[8] = Div(%h, %sqrt2)
      %th: f32[8] = Tanh(%div)
      %add: f32[8] = Add(%th, %one)
      %mul: f32[8] = Mul(%h, %add)
      %gelu: f32[8] = Mul(%mul, %half)
      return %gelu
    }
  )"));
  MatchResult miss = match(gelu, *producer(t, "gelu"));
  ASSERT_FALSE(miss);
  EXPECT_EQ(miss.reason, "Mul.in0.Mul.in1.Add.in0: expected Erf, found Tanh node producing 'th'");
}

}  // namespace
}  // namespace onnxc::testing
