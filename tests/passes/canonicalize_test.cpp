// canonicalize and raise_opset: IR text before -> after; the model opset they leave.
#include <gtest/gtest.h>

#include "fusion_util.h"
#include "passes/canonicalize.h"

namespace onnxc::testing {
namespace {

TEST(Canonicalize, Spellings) {
  // Pow(x,2) -> x*x; Reciprocal -> Div(1, x); x/8 -> x*0.125 (exact); x/3 stays (1/3 is inexact).
  EXPECT_EQ(run_passes(R"(
    model ir_version=8 opset=[ai.onnx:23]
    graph main(%x: f32[4]) {
      %two = const f32[] {2}
      %eight = const f32[] {8}
      %three = const f32[] {3}
      %a: f32[4] = Pow(%x, %two)
      %b: f32[4] = Reciprocal(%a)
      %c: f32[4] = Div(%b, %eight)
      %d: f32[4] = Div(%c, %three)
      return %d
    }
  )", {"canonicalize", "dce"}), canonical(R"(
    graph main(%x: f32[4]) {
      %three = const f32[] {3}
      %one = const f32[] {1}
      %eight_reciprocal = const f32[] {0.125}
      %a: f32[4] = Mul(%x, %x)
      %b: f32[4] = Div(%one, %a)
      %c: f32[4] = Mul(%b, %eight_reciprocal)
      %d: f32[4] = Div(%c, %three)
      return %d: f32[4]
    }
  )"));
}

// Each spelling is a named rule on the fusion driver: the report lists them in model order, apart
// from the fusions.
TEST(Canonicalize, RulesReportByName) {
  ir::Model m = parse_model(dedent(R"(
    model ir_version=8 opset=[ai.onnx:23]
    graph main(%x: f32[4], %q: f32[2,3,5,8], %k: f32[2,3,7,8]) {
      %two = const f32[] {2}
      %eight = const f32[] {8}
      %a: f32[4] = Pow(%x, %two)
      %b: f32[4] = Reciprocal(%a)
      %c: f32[4] = Div(%b, %eight)
      %s: f32[2,3,5,7] = Einsum(%q, %k) {equation="bhqd,bhkd->bhqk"}
      return %c, %s
    }
  )"));
  passes::FusionReport report;
  passes::PassContext ctx;
  ctx.report = &report;
  EXPECT_TRUE(passes::canonicalize(m, ctx));
  std::vector<std::string> fired;
  for (const passes::FusedEntry& e : report.canonical) fired.push_back(e.rule + " " + e.where);
  EXPECT_EQ(fired, (std::vector<std::string>{"pow_square a", "reciprocal_div b", "div_exact_reciprocal c",
                                             "einsum_matmul s"}));
  EXPECT_TRUE(report.fused.empty());
  EXPECT_TRUE(report.near_misses.empty());
  // Turned off by name like a fusion (--no-fuse).
  ir::Model again = parse_model(dedent(R"(
    model ir_version=8 opset=[ai.onnx:23]
    graph main(%x: f32[4]) {
      %two = const f32[] {2}
      %a: f32[4] = Pow(%x, %two)
      return %a
    }
  )"));
  passes::PassContext off;
  off.disabled = {"pow_square"};
  EXPECT_FALSE(passes::canonicalize(again, off));
}

// finfo.min masks and divisions whose reciprocal would round or overflow stay as written.
TEST(Canonicalize, MasksAndInexactDivisionsStay) {
  std::string before = R"(
    model ir_version=8 opset=[ai.onnx:23]
    graph main(%m: f32[4], %x: f32[4]) {
      %one = const f32[] {1}
      %min = const f32[] {-3.4028235e+38}
      %big = const f32[] {1.7014118e+38}
      %a: f32[4] = Sub(%one, %m)
      %b: f32[4] = Mul(%a, %min)
      %c: f32[4] = Div(%x, %min)
      %d: f32[4] = Div(%c, %big)
      %e: f32[4] = Add(%b, %d)
      return %e
    }
  )";
  EXPECT_EQ(run_passes(before, {"canonicalize"}), canonical(before));
}

TEST(Canonicalize, EinsumIsMatMul) {
  EXPECT_EQ(run_passes(R"(
    model ir_version=8 opset=[ai.onnx:23]
    graph main(%q: f32[2,3,5,8], %k: f32[2,3,7,8]) {
      %s: f32[2,3,5,7] = Einsum(%q, %k) {equation="bhqd,bhkd->bhqk"}
      return %s
    }
  )", {"canonicalize"}), canonical(R"(
    graph main(%q: f32[2,3,5,8], %k: f32[2,3,7,8]) {
      %s_t = Transpose(%k) {perm=[0, 1, 3, 2]}
      %s: f32[2,3,5,7] = MatMul(%q, %s_t)
      return %s: f32[2,3,5,7]
    }
  )"));
  // The output in another order: a Transpose after the MatMul. A trace stays an Einsum.
  EXPECT_EQ(run_passes(R"(
    model ir_version=8 opset=[ai.onnx:23]
    graph main(%a: f32[2,5,8], %b: f32[2,8,7], %m: f32[4,4]) {
      %s: f32[2,7,5] = Einsum(%a, %b) {equation="bik,bkj->bji"}
      %t: f32[] = Einsum(%m) {equation="ii->"}
      return %s, %t
    }
  )", {"canonicalize"}), canonical(R"(
    graph main(%a: f32[2,5,8], %b: f32[2,8,7], %m: f32[4,4]) {
      %s_mm = MatMul(%a, %b)
      %s: f32[2,7,5] = Transpose(%s_mm) {perm=[0, 2, 1]}
      %t: f32[] = Einsum(%m) {equation="ii->"}
      return %s: f32[2,7,5], %t: f32[]
    }
  )"));
}

TEST(Canonicalize, RaisesOpsetForms) {
  ir::Model m = parse_model(dedent(R"(
    model ir_version=8 opset=[ai.onnx:11]
    graph main(%x: f32[2,3,4]) {
      %r: f32[2,3,1] = ReduceMean(%x) {axes=[-1], keepdims=1}
      %u: f32[1,2,3,1] = Unsqueeze(%r) {axes=[0]}
      %s: f32[2,3,4] = Softmax(%x) {axis=2}
      %t: f32[2,3,4] = Softmax(%x) {axis=1}
      return %u, %s, %t
    }
  )"));
  EXPECT_EQ(passes::raise_opset(m, 23), "");
  EXPECT_EQ(m.opset(""), 23);
  EXPECT_EQ(ir::to_string(*m.graph), canonical(R"(
    graph main(%x: f32[2,3,4]) {
      %r_axes = const i64[1] {-1}
      %u_axes = const i64[1] {0}
      %r: f32[2,3,1] = ReduceMean(%x, %r_axes) {keepdims=1}
      %u: f32[1,2,3,1] = Unsqueeze(%r, %u_axes)
      %s: f32[2,3,4] = Softmax(%x) {axis=-1}
      %t_flat = Flatten(%x) {axis=1}
      %t_shape = Shape(%x)
      %t_2d = Softmax(%t_flat) {axis=-1}
      %t: f32[2,3,4] = Reshape(%t_2d, %t_shape)
      return %u: f32[1,2,3,1], %s: f32[2,3,4], %t: f32[2,3,4]
    }
  )"));
}

// A Cast to bfloat16 from before opset 19 keeps its truncating conversion when raised (the
// internal attribute the lowering reads); other Casts are unchanged.
TEST(Canonicalize, RaisedBfloat16CastKeepsTruncating) {
  ir::Model m = parse_model(dedent(R"(
    model ir_version=7 opset=[ai.onnx:13]
    graph main(%x: f32[2]) {
      %b: bf16[2] = Cast(%x) {to=16}
      %h: f16[2] = Cast(%x) {to=10}
      return %b: bf16[2], %h: f16[2]
    }
  )"));
  EXPECT_EQ(passes::raise_opset(m, 23), "");
  EXPECT_EQ(ir::to_string(*m.graph), canonical(R"(
    graph main(%x: f32[2]) {
      %b: bf16[2] = Cast(%x) {to=16, __onnxc_bf16_truncates=1}
      %h: f16[2] = Cast(%x) {to=10}
      return %b: bf16[2], %h: f16[2]
    }
  )"));
}

TEST(Canonicalize, ModelThatCannotBeRaisedStaysAsItIs) {
  std::string before = R"(
    model ir_version=4 opset=[ai.onnx:9]
    graph main(%x: f32[1,1,2,2], %sc: f32[4]) {
      %r: f32[1,3,1] = ReduceMean(%x) {axes=[-1]}
      %u: f32[1,1,4,4] = Upsample(%x, %sc) {mode="nearest"}
      return %r, %u
    }
  )";
  ir::Model m = parse_model(dedent(before));
  EXPECT_EQ(passes::raise_opset(m, 23),
            "cannot raise the opset from 9 to 23: Upsample node producing 'u' changed meaning in opset 10");
  EXPECT_EQ(m.opset(""), 9);
  EXPECT_EQ(ir::to_string(*m.graph), canonical(before));
}

}  // namespace
}  // namespace onnxc::testing
