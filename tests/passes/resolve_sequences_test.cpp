// resolve_sequences: sequences and optionals built and read at compile-time positions become the
// tensors they hold. Each case runs the default pipeline, checks that no sequence op is left, and
// evaluates the result (reference evaluator) against values computed here by hand; the near-misses
// (a run-time position, a sequence input) keep their sequence ops.
#include <gtest/gtest.h>

#include <algorithm>

#include "fusion_util.h"
#include "passes/pass.h"
#include "passes/pipeline.h"

namespace onnxc::testing {
namespace {

using ir::DType;

ir::Tensor iota(std::vector<int64_t> dims, float start) {
  ir::Tensor t(DType::Float32, dims);
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = start + static_cast<float>(i);
  return t;
}

std::vector<float> values(const ir::Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.numel()); }

// Elements [from, to) of x along axis 0 of a [n, 3, 4] tensor, as a flat list.
std::vector<float> rows(const ir::Tensor& x, int64_t from, int64_t to) {
  return std::vector<float>(x.data<float>() + from * 12, x.data<float>() + to * 12);
}

struct Built {
  std::unique_ptr<ir::Model> m = std::make_unique<ir::Model>();
  ir::Graph& g() { return *m->graph; }
  ir::Value* in(const std::string& name, ir::Shape s) { return g().add_input(name, ir::Type::tensor(DType::Float32, s)); }
  ir::Value* i64(const std::string& name, int64_t v) { return g().add_initializer(name, ir::Tensor::scalar<int64_t>(DType::Int64, v)); }
  ir::Node* node(const std::string& op, std::vector<ir::Value*> ins, const std::string& out) { return g().add_node(op, ins, {out}); }
  explicit Built(int64_t opset) { m->opset_imports = {{"", opset}}; }
};

// Runs the default pipeline; returns how many nodes of sequence or optional ops are left.
size_t optimize_and_count_sequence_ops(ir::Model& m) {
  passes::run_pipeline(m, passes::default_pipeline(), passes::PipelineOptions{});
  size_t left = 0;
  for (const ir::Node* n : m.graph->nodes())
    left += n->op_type().rfind("Sequence", 0) == 0 || n->op_type().rfind("Optional", 0) == 0 ||
            n->op_type() == "SplitToSequence" || n->op_type() == "ConcatFromSequence";
  return left;
}

TEST(ResolveSequences, ConstructEraseInsertAt) {
  Built b(12);
  ir::Value *x = b.in("X", {2, 3, 4}), *y = b.in("Y", {2, 3, 4}), *z = b.in("Z", {2, 3, 4});
  ir::Node* s1 = b.node("SequenceConstruct", {x, y, z}, "s1");
  ir::Node* s2 = b.node("SequenceErase", {s1->output(0), b.i64("p0", 0)}, "s2");   // [Y, Z]
  ir::Node* s3 = b.node("SequenceInsert", {s2->output(0), x, b.i64("p1", -1)}, "s3");  // [Y, X, Z]
  ir::Node* at = b.node("SequenceAt", {s3->output(0), b.i64("p2", -2)}, "out");     // X
  ir::Node* len = b.node("SequenceLength", {s3->output(0)}, "len");
  b.g().add_output(at->output(0));
  b.g().add_output(len->output(0));
  EXPECT_EQ(optimize_and_count_sequence_ops(*b.m), 0u);
  EXPECT_EQ(b.g().outputs()[0]->name(), "out");
  ir::Tensor xv = iota({2, 3, 4}, 0), yv = iota({2, 3, 4}, 100), zv = iota({2, 3, 4}, 200);
  auto got = eval_graph(*b.m, {{"X", xv}, {"Y", yv}, {"Z", zv}});
  EXPECT_EQ(values(got.at("out")), values(xv));
  EXPECT_EQ(got.at("len").get_i64(0), 3);
}

// SplitToSequence without `split`, keepdims=0: the parts of axis 0 without that axis; at opset 12
// (Split/Squeeze take attributes) and 17 (inputs).
TEST(ResolveSequences, SplitToSequenceThenAt) {
  for (int64_t opset : {12, 17}) {
    Built b(opset);
    ir::Value* x = b.in("X", {2, 3, 4});
    ir::Node* s = b.node("SplitToSequence", {x}, "s");
    s->set_attr_int("keepdims", 0);
    ir::Node* at = b.node("SequenceAt", {s->output(0), b.i64("p", 1)}, "out");
    b.g().add_output(at->output(0));
    EXPECT_EQ(optimize_and_count_sequence_ops(*b.m), 0u) << "opset " << opset;
    EXPECT_EQ(b.g().outputs()[0]->type().str(), "f32[3,4]");
    ir::Tensor xv = iota({2, 3, 4}, 0);
    EXPECT_EQ(values(eval_graph(*b.m, {{"X", xv}}).at("out")), rows(xv, 1, 2)) << "opset " << opset;
  }
}

// Explicit split sizes [1, 2] along axis 0, then ConcatFromSequence with new_axis (a stack) of the
// parts reversed would need equal shapes, so: split [1, 2] and concat back along axis 0 = X.
TEST(ResolveSequences, SplitThenConcatIsTheInput) {
  Built b(13);
  ir::Value* x = b.in("X", {3, 3, 4});
  ir::Value* sizes = b.g().add_initializer("sizes", ir::Tensor::from_vector<int64_t>(DType::Int64, {2}, {1, 2}));
  ir::Node* s = b.node("SplitToSequence", {x, sizes}, "s");
  ir::Node* c = b.node("ConcatFromSequence", {s->output(0)}, "out");
  c->set_attr_int("axis", 0);
  b.g().add_output(c->output(0));
  EXPECT_EQ(optimize_and_count_sequence_ops(*b.m), 0u);
  ir::Tensor xv = iota({3, 3, 4}, 0);
  EXPECT_EQ(values(eval_graph(*b.m, {{"X", xv}}).at("out")), values(xv));
}

// ConcatFromSequence with new_axis=1 at axis -1 stacks the elements as a new last axis.
TEST(ResolveSequences, ConcatWithNewAxisStacks) {
  Built b(12);
  ir::Value *x = b.in("X", {2, 3}), *y = b.in("Y", {2, 3});
  ir::Node* s = b.node("SequenceConstruct", {x, y}, "s");
  ir::Node* c = b.node("ConcatFromSequence", {s->output(0)}, "out");
  c->set_attr_int("axis", -1);
  c->set_attr_int("new_axis", 1);
  b.g().add_output(c->output(0));
  EXPECT_EQ(optimize_and_count_sequence_ops(*b.m), 0u);
  ir::Tensor xv = iota({2, 3}, 0), yv = iota({2, 3}, 10);
  ir::Tensor out = eval_graph(*b.m, {{"X", xv}, {"Y", yv}}).at("out");
  EXPECT_EQ(out.dims(), (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(values(out), (std::vector<float>{0, 10, 1, 11, 2, 12, 3, 13, 4, 14, 5, 15}));
}

// SequenceMap over a known sequence and a tensor: the body (Add) once per element.
TEST(ResolveSequences, SequenceMapInlinesTheBodyPerElement) {
  Built b(17);
  ir::Value *x = b.in("X", {2, 3, 4}), *w = b.in("W", {3, 4});
  ir::Node* s = b.node("SplitToSequence", {x}, "s");
  s->set_attr_int("keepdims", 0);
  auto body = std::make_shared<ir::Graph>("body", &b.g());
  ir::Value* e = body->add_input("e", ir::Type::tensor(DType::Float32));
  ir::Value* v = body->add_input("v", ir::Type::tensor(DType::Float32));
  body->add_output(body->add_node("Add", {e, v}, {"sum"})->output(0));
  ir::Node* map = b.node("SequenceMap", {s->output(0), w}, "mapped");
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::Graph, a.name = "body", a.g = body;
  map->set_attr(a);
  ir::Node* c = b.node("ConcatFromSequence", {map->output(0)}, "out");
  c->set_attr_int("axis", 0);
  b.g().add_output(c->output(0));
  EXPECT_EQ(optimize_and_count_sequence_ops(*b.m), 0u);
  ir::Tensor xv = iota({2, 3, 4}, 0), wv = iota({3, 4}, 50);
  std::vector<float> want;
  for (int64_t i = 0; i < 24; ++i) want.push_back(xv.data<float>()[i] + wv.data<float>()[i % 12]);
  EXPECT_EQ(values(eval_graph(*b.m, {{"X", xv}, {"W", wv}}).at("out")), want);
}

TEST(ResolveSequences, OptionalPresentAndEmpty) {
  Built b(18);
  ir::Value* x = b.in("X", {2});
  ir::Node* opt = b.node("Optional", {x}, "o");
  ir::Node* has = b.node("OptionalHasElement", {opt->output(0)}, "has");
  ir::Node* get = b.node("OptionalGetElement", {opt->output(0)}, "got");
  b.g().add_output(has->output(0));
  b.g().add_output(get->output(0));
  EXPECT_EQ(optimize_and_count_sequence_ops(*b.m), 0u);
  ir::Tensor xv = iota({2}, 7);
  auto got = eval_graph(*b.m, {{"X", xv}});
  EXPECT_EQ(got.at("has").get_i64(0), 1);
  EXPECT_EQ(values(got.at("got")), values(xv));
}

// SplitToSequence by a run-time split of 3 sizes: the count is known (3), the parts are not.
TEST(ResolveSequences, LengthOfARunTimeSplit) {
  Built b(12);
  ir::Value* x = b.in("X", {ir::Dim::symbol("n")});
  ir::Value* sizes = b.g().add_input("sizes", ir::Type::tensor(DType::Int64, ir::Shape{3}));
  ir::Node* s = b.node("SplitToSequence", {x, sizes}, "s");
  b.g().add_output(b.node("SequenceLength", {s->output(0)}, "len")->output(0));
  EXPECT_EQ(optimize_and_count_sequence_ops(*b.m), 0u);
  ASSERT_TRUE(b.g().outputs()[0]->is_constant());
  EXPECT_EQ(b.g().outputs()[0]->constant().get_i64(0), 3);
}

// Near-miss: split sizes that do not add up to the axis (an invalid model) are left for inference
// and codegen to refuse by name; the pass builds no Split from them.
TEST(ResolveSequences, SplitSizesThatDoNotAddUpStay) {
  Built b(13);
  ir::Value* x = b.in("X", {3, 4});
  ir::Value* sizes = b.g().add_initializer("sizes", ir::Tensor::from_vector<int64_t>(DType::Int64, {2}, {1, 1}));
  ir::Node* s = b.node("SplitToSequence", {x, sizes}, "s");
  b.g().add_output(b.node("SequenceAt", {s->output(0), b.i64("p", 0)}, "out")->output(0));
  EXPECT_FALSE(passes::find_pass("resolve_sequences")->make()->run(*b.m));
  for (const ir::Node* n : b.g().nodes()) EXPECT_NE(n->op_type(), "Split");
}

// Near-miss: the position is a run-time input, so which element is read is not known.
TEST(ResolveSequences, RunTimePositionStays) {
  Built b(12);
  ir::Value *x = b.in("X", {2}), *y = b.in("Y", {2});
  ir::Value* p = b.g().add_input("p", ir::Type::tensor(DType::Int64, ir::Shape{}));
  ir::Node* s = b.node("SequenceConstruct", {x, y}, "s");
  b.g().add_output(b.node("SequenceAt", {s->output(0), p}, "out")->output(0));
  EXPECT_EQ(optimize_and_count_sequence_ops(*b.m), 2u);
}

// Near-miss: a sequence graph input has a length only known at run time.
TEST(ResolveSequences, SequenceInputStays) {
  Built b(12);
  ir::Value* s = b.g().add_input("s", ir::Type::container(ir::Type::Kind::Sequence, ir::Type::tensor(DType::Float32)));
  b.g().add_output(b.node("SequenceAt", {s, b.i64("p", 0)}, "out")->output(0));
  b.g().add_output(b.node("SequenceLength", {s}, "len")->output(0));
  EXPECT_EQ(optimize_and_count_sequence_ops(*b.m), 2u);
}

}  // namespace
}  // namespace onnxc::testing
