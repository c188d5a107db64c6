// simplify_shapes: IR text before -> simplify_shapes (+ dce, to drop the abandoned shape chains)
// -> IR text expected.
#include <gtest/gtest.h>

#include "ir/eval/eval.h"
#include "ir/eval/symbolic_shape.h"
#include "test_util.h"

namespace onnxc::testing {
namespace {

// The shape subgraphs torch.onnx.export writes for multi-head attention, on x: [batch, seq, 64].
const char* kExportedShapes = R"(
  graph main(%x: f32[batch,seq,64]) {
    %zero = const i64[] {0}
    %one = const i64[] {1}
    %two = const i64[] {2}
    %four = const i64[] {4}
    %axes = const i64[1] {0}
    %heads = const i64[1] {4}
    %s: i64[3] = Shape(%x)
    %b: i64[] = Gather(%s, %zero) {axis=0}
    %t: i64[] = Gather(%s, %one) {axis=0}
    %e: i64[] = Gather(%s, %two) {axis=0}
    %hd: i64[] = Div(%e, %four)
    %b1: i64[1] = Unsqueeze(%b, %axes)
    %t1: i64[1] = Unsqueeze(%t, %axes)
    %e1: i64[1] = Unsqueeze(%e, %axes)
    %hd1: i64[1] = Unsqueeze(%hd, %axes)
    %split_heads: i64[4] = Concat(%b1, %t1, %heads, %hd1) {axis=0}
    %q = Reshape(%x, %split_heads)
    %bt: i64[] = Mul(%b, %t)
    %bt1: i64[1] = Unsqueeze(%bt, %axes)
    %flat: i64[2] = Concat(%bt1, %e1) {axis=0}
    %rows = Reshape(%x, %flat)
    %tb: i64[3] = Concat(%t1, %b1, %e1) {axis=0}
    %seq_first = Reshape(%rows, %tb)
    %tt: i64[2] = Concat(%t1, %t1) {axis=0}
    %mask = ConstantOfShape(%tt) {value=tensor f32[1] {-inf}}
    %pos = Range(%zero, %t, %one)
    return %q, %rows, %seq_first, %mask, %pos
  }
)";

TEST(SimplifyShapes, ExportedAttentionShapes) {
  EXPECT_EQ(run_passes(kExportedShapes, {"simplify_shapes", "dce"}), canonical(R"(
    graph main(%x: f32[batch,seq,64]) {
      %zero = const i64[] {0}
      %one = const i64[] {1}
      %split_heads = const i64[4] {0, 0, 4, 16}
      %flat = const i64[2] {-1, 64}
      %q: f32[batch,seq,4,16] = Reshape(%x, %split_heads)
      %rows: f32[batch*seq,64] = Reshape(%x, %flat)
      %tb_1: i64[3] = onnxc.SymbolicShape(%x) {dims=["seq", "batch", "64"]}
      %seq_first: f32[seq,batch,64] = Reshape(%rows, %tb_1)
      %tt_1: i64[2] = onnxc.SymbolicShape(%x) {dims=["seq", "seq"]}
      %mask: f32[seq,seq] = ConstantOfShape(%tt_1) {value=tensor f32[1] {-inf}}
      %t_1: i64[] = onnxc.SymbolicShape(%x) {dims=["seq"], scalar=1}
      %pos: i64[seq] = Range(%zero, %t_1, %one)
      return %q: f32[batch,seq,4,16], %rows: f32[batch*seq,64], %seq_first: f32[seq,batch,64], %mask: f32[seq,seq], %pos: i64[seq]
    }
  )"));
}

std::vector<int64_t> ints(const ir::Tensor& t) {
  std::vector<int64_t> r;
  for (int64_t i = 0; i < t.numel(); ++i) r.push_back(t.get_i64(i));
  return r;
}

TEST(SimplifyShapes, SameShapesAsTheOriginalChainForConcreteDims) {
  // Numeric check. Reference: the original text with concrete dims, constant-folded (Shape of a
  // static value folds, then the chain). Simplified: SymbolicShape evaluated at those dims, and the
  // 0/-1 Reshape targets applied by the evaluator to a tensor of x's concrete shape.
  ir::Model simplified = parse_model(dedent(kExportedShapes));
  ASSERT_TRUE(passes::find_pass("simplify_shapes")->make()->run(simplified));
  std::map<std::string, std::string> sym_of = {{"tb", "tb_1"}, {"tt", "tt_1"}, {"t", "t_1"}};
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{2, 5}, {1, 1}, {3, 64}}) {
    std::string text = kExportedShapes;
    text.replace(text.find("f32[batch,seq,64]"), 17, "f32[" + std::to_string(batch) + "," + std::to_string(seq) + ",64]");
    ir::Model ref = parse_model(dedent(text));
    passes::find_pass("constant_folding")->make()->run(ref);
    for (auto [orig, sym] : sym_of) {
      const ir::Value* r = ref.graph->find_value(orig);
      ASSERT_TRUE(r && r->is_constant()) << orig;
      ir::Node* n = simplified.graph->find_value(sym)->producer();
      auto binding = ir::bind_symbols(*n, {{batch, seq, 64}});
      ASSERT_TRUE(binding);
      auto got = ir::evaluate_symbolic_shape(*n, *binding);
      ASSERT_TRUE(got);
      EXPECT_EQ(ints(*got), ints(r->constant())) << orig << " at batch=" << batch << " seq=" << seq;
      EXPECT_EQ(got->rank(), r->constant().rank()) << orig;
    }
    for (auto [reshape, target] : {std::pair<std::string, std::string>{"q", "split_heads"}, {"rows", "flat"}}) {
      ir::Node* rn = simplified.graph->find_value(reshape)->producer();
      ir::Tensor x(ir::DType::Float32, {batch, seq, 64});
      auto out = ir::evaluate(*rn, {&x, &simplified.graph->find_value(target)->constant()});
      ASSERT_TRUE(out);
      EXPECT_EQ((*out)[0].dims(), ints(ref.graph->find_value(target)->constant())) << reshape;
    }
  }
}

// GQA's repeat_kv as torch exports `x[:, :, None].expand(b, kvh, n_rep, s, d)`: the size goes
// through the guard Where(Equal(size, -1), ones, size). Symbols are extents, never -1, so the
// expanded shape stays symbolic and the reshape to [b, kvh*n_rep, s, d] is known.
TEST(SimplifyShapes, TorchExpandGuardStaysSymbolic) {
  ir::Model m = parse_model(dedent(R"(
    graph main(%x: f32[batch,2,seq,8]) {
      %zero = const i64[] {0}
      %two = const i64[] {2}
      %m1 = const i64[] {-1}
      %ax0 = const i64[1] {0}
      %ax2 = const i64[1] {2}
      %kv = const i64[1] {2}
      %rep = const i64[1] {2}
      %heads = const i64[1] {4}
      %hd = const i64[1] {8}
      %flat = const i64[1] {-1}
      %s = Shape(%x)
      %b = Gather(%s, %zero) {axis=0}
      %t = Gather(%s, %two) {axis=0}
      %b1 = Unsqueeze(%b, %ax0)
      %t1 = Unsqueeze(%t, %ax0)
      %cat = Concat(%b1, %kv, %rep, %t1, %hd) {axis=0}
      %size = Reshape(%cat, %flat)
      %ss = Shape(%size)
      %ones = ConstantOfShape(%ss) {value=tensor i64[1] {1}}
      %neg = Mul(%ones, %m1)
      %eq = Equal(%size, %neg)
      %target = Where(%eq, %ones, %size)
      %xu = Unsqueeze(%x, %ax2)
      %e = Expand(%xu, %target)
      %merged = Concat(%b1, %heads, %t1, %hd) {axis=0}
      %y = Reshape(%e, %merged)
      return %y
    }
  )"));
  passes::find_pass("simplify_shapes")->make()->run(m);
  passes::find_pass("dce")->make()->run(m);
  std::string out = ir::to_string(*m.graph);
  EXPECT_NE(out.find("f32[batch,2,2,seq,8] = Expand("), std::string::npos) << out;
  EXPECT_NE(out.find("return %y: f32[batch,4,seq,8]"), std::string::npos) << out;
  EXPECT_EQ(out.find("?"), std::string::npos) << out;
}

TEST(SimplifyShapes, NearMissShapeFromData) {
  // Near miss: the target shape is data (a graph input), not derived from shapes: nothing is known.
  std::string before = R"(
    graph main(%x: f32[batch,64], %target: i64[2]) {
      %r: f32[?,?] = Reshape(%x, %target)
      return %r: f32[?,?]
    }
  )";
  EXPECT_EQ(run_passes(before, {"simplify_shapes", "dce"}), canonical(before));
}

TEST(SimplifyShapes, NearMissDataDependentSymbol) {
  // Near miss: NonZero's count is a symbol no graph input carries, so no SymbolicShape can compute
  // it; the Shape chain stays.
  ir::Model m = parse_model(dedent(R"(
    graph main(%x: f32[batch]) {
      %zero = const i64[] {0}
      %one = const i64[] {1}
      %nz = NonZero(%x)
      %s = Shape(%nz)
      %n = Gather(%s, %one) {axis=0}
      %r = Range(%zero, %n, %one)
      return %r
    }
  )"));
  passes::find_pass("simplify_shapes")->make()->run(m);
  passes::find_pass("dce")->make()->run(m);
  std::string out = ir::to_string(*m.graph);
  EXPECT_NE(out.find("= Shape(%nz)"), std::string::npos) << out;
  EXPECT_EQ(out.find("SymbolicShape"), std::string::npos) << out;
}

TEST(SimplifyShapes, ParseDimReadsCanonicalText) {
  for (std::string s : {"batch", "64", "4*batch", "batch*seq", "seq-1", "seq+past", "-batch", "floordiv(seq,2)",
                        "max(past,seq)", "2*(seq+1)"}) {
    auto d = ir::parse_dim(s);
    ASSERT_TRUE(d) << s;
    EXPECT_EQ(ir::parse_dim(d->str())->str(), d->str()) << s;
  }
  EXPECT_EQ(ir::parse_dim("2*(seq+1)")->str(), ir::parse_dim("2*seq+2")->str());
  EXPECT_FALSE(ir::parse_dim("seq+"));
  EXPECT_FALSE(ir::parse_dim("min(a)"));
}

}  // namespace
}  // namespace onnxc::testing
