// loop_sequence_to_scan: a list a Loop collects (SequenceEmpty, SequenceInsert per iteration,
// ConcatFromSequence after) becomes a scan output (+ Transpose, + Reshape for a join along an existing
// axis); near-misses (the list is a graph output, iterations of different shapes) stay. The reference
// evaluator has no Loop, so values are checked elsewhere: the committed PyTorch export
// tests/models/recurrent/gru_greedy_loop (its ctest compares with torch once Loop compiles, and
// `onnxc optimize` of it runs in ONNX Runtime: see docs/control-flow.md).
#include <gtest/gtest.h>

#include <algorithm>

#include "ir/graph.h"
#include "passes/pass.h"
#include "passes/pipeline.h"
#ifdef ONNXC_HAVE_FRONTEND
#include "frontend/onnx_import.h"
#endif

namespace onnxc::testing {
namespace {

using ir::DType;

// y = Loop(M, cond, x0, SequenceEmpty) { x = x_in + 1; s_out = SequenceInsert(s_in, x); return cond, x, s_out }
// then ConcatFromSequence(list, axis, new_axis) (or the list as a graph output).
std::unique_ptr<ir::Model> collecting_loop(int64_t axis, int64_t new_axis, bool list_is_output) {
  auto m = std::make_unique<ir::Model>();
  m->opset_imports = {{"", 17}};
  ir::Graph& g = *m->graph;
  ir::Value* n = g.add_input("n", ir::Type::tensor(DType::Int64, ir::Shape{}));
  ir::Value* x0 = g.add_input("x0", ir::Type::tensor(DType::Float32, ir::Shape{2, 3}));
  ir::Value* cond = g.add_initializer("cond", ir::Tensor::scalar<uint8_t>(DType::Bool, 1));
  ir::Node* empty = g.add_node("SequenceEmpty", {}, {"empty"});
  auto body = std::make_shared<ir::Graph>("body", &g);
  body->add_input("i", ir::Type::tensor(DType::Int64, ir::Shape{}));
  ir::Value* c = body->add_input("c", ir::Type::tensor(DType::Bool, ir::Shape{}));
  ir::Value* x = body->add_input("x_in", ir::Type::tensor(DType::Float32, ir::Shape{2, 3}));
  ir::Value* s = body->add_input("s_in", ir::Type::container(ir::Type::Kind::Sequence, ir::Type::tensor(DType::Float32)));
  ir::Value* one = body->add_initializer("one", ir::Tensor::scalar<float>(DType::Float32, 1.0f));
  ir::Node* add = body->add_node("Add", {x, one}, {"x_out"});
  ir::Node* ins = body->add_node("SequenceInsert", {s, add->output(0)}, {"s_out"});
  body->add_output(body->add_node("Identity", {c}, {"c_out"})->output(0));
  body->add_output(add->output(0));
  body->add_output(ins->output(0));
  ir::Node* loop = g.add_node("Loop", {n, cond, x0, empty->output(0)}, {"x_last", "list"});
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::Graph, a.name = "body", a.g = body;
  loop->set_attr(a);
  g.add_output(loop->output(0));
  if (list_is_output) {
    g.add_output(loop->output(1));
  } else {
    ir::Node* cat = g.add_node("ConcatFromSequence", {loop->output(1)}, {"stacked"});
    cat->set_attr_int("axis", axis);
    cat->set_attr_int("new_axis", new_axis);
    g.add_output(cat->output(0));
  }
  return m;
}

std::vector<std::string> ops(const ir::Graph& g) {
  std::vector<std::string> r;
  for (const ir::Node* n : g.nodes()) r.push_back(n->op_type());
  return r;
}

ir::Node* find(const ir::Graph& g, const std::string& op) {
  for (ir::Node* n : g.nodes())
    if (n->op_type() == op) return n;
  return nullptr;
}

TEST(LoopSequenceToScan, StackAlongAxisOneIsAScanAndATranspose) {
  auto m = collecting_loop(1, 1, false);
  passes::run_pipeline(*m, passes::default_pipeline(), passes::PipelineOptions{});
  const ir::Node* loop = find(*m->graph, "Loop");
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->num_inputs(), 3u);   // M, cond, x0: the list is no carried value any more
  EXPECT_EQ(loop->num_outputs(), 2u);  // x_last and the scan
  const ir::Graph& body = *loop->attr("body")->g;
  EXPECT_EQ(body.inputs().size(), 3u);
  ASSERT_EQ(body.outputs().size(), 3u);
  EXPECT_EQ(body.outputs()[2], body.outputs()[1]);  // the scan collects x_out
  const ir::Node* t = find(*m->graph, "Transpose");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->input(0), loop->output(1));
  EXPECT_EQ(t->attr_ints("perm"), (std::vector<int64_t>{1, 0, 2}));
  // Interface kept: the stacked result has its name and type [2, T, 3].
  EXPECT_EQ(m->graph->outputs()[1]->name(), "stacked");
  EXPECT_EQ(m->graph->outputs()[1]->shape()->size(), 3u);
  for (const std::string& op : ops(*m->graph)) EXPECT_EQ(op.find("Sequence"), std::string::npos) << op;
}

TEST(LoopSequenceToScan, StackAlongAxisZeroIsTheScanItself) {
  auto m = collecting_loop(0, 1, false);
  passes::run_pipeline(*m, passes::default_pipeline(), passes::PipelineOptions{});
  EXPECT_EQ(find(*m->graph, "Transpose"), nullptr);
  EXPECT_EQ(find(*m->graph, "ConcatFromSequence"), nullptr);
  // The graph output keeps its name on an Identity of the scan output.
  const ir::Node* out = m->graph->outputs()[1]->producer();
  ASSERT_EQ(out->op_type(), "Identity");
  EXPECT_EQ(m->graph->outputs()[1]->name(), "stacked");
  EXPECT_EQ(out->input(0)->producer()->op_type(), "Loop");
}

// Near-miss: the list itself is returned, so the model's output is a sequence.
TEST(LoopSequenceToScan, ListAtTheInterfaceStays) {
  auto m = collecting_loop(0, 1, true);
  EXPECT_FALSE(passes::find_pass("loop_sequence_to_scan")->make()->run(*m));
}

// ConcatFromSequence without new_axis joins along an existing axis: the scan with its loop axis moved
// next to that axis, then a Reshape merging the two (target: the scan's shape with -1 there).
TEST(LoopSequenceToScan, ConcatAlongAnExistingAxisIsAScanTransposeAndReshape) {
  auto m = collecting_loop(-1, 0, false);  // elements [2, 3] joined along axis 1: [2, 3T]
  passes::run_pipeline(*m, passes::default_pipeline(), passes::PipelineOptions{});
  const ir::Node* t = find(*m->graph, "Transpose");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->attr_ints("perm"), (std::vector<int64_t>{1, 0, 2}));
  const ir::Node* r = find(*m->graph, "Reshape");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->input(0), t->output(0));
  EXPECT_EQ(find(*m->graph, "ConcatFromSequence"), nullptr);
  const ir::Value* out = m->graph->outputs()[1];
  EXPECT_EQ(out->name(), "stacked");
  ASSERT_TRUE(out->shape());
  ASSERT_EQ(out->shape()->size(), 2u);
  EXPECT_EQ(out->shape()->at(0), ir::Dim(2));
}

// Near-miss: the collected tensor's size follows the iteration count (Range(0, i)), so iterations
// differ in shape: a list can hold that, a scan output cannot.
TEST(LoopSequenceToScan, ShapeThatChangesPerIterationStays) {
  auto m = collecting_loop(0, 0, false);
  ir::Graph& body = *find(*m->graph, "Loop")->attr("body")->g;
  ir::Node* ins = find(body, "SequenceInsert");
  ir::Value* zero = body.add_initializer("zero", ir::Tensor::scalar<int64_t>(DType::Int64, 0));
  ir::Value* step = body.add_initializer("step", ir::Tensor::scalar<int64_t>(DType::Int64, 1));
  ir::Node* range = body.insert_node_before(ins, "Range", {zero, body.inputs()[0], step}, {"upto_i"});
  ins->set_input(1, range->output(0));
  passes::run_pipeline(*m, passes::default_pipeline(), passes::PipelineOptions{});
  EXPECT_NE(find(*m->graph, "ConcatFromSequence"), nullptr);
}

#ifdef ONNXC_HAVE_FRONTEND
// The PyTorch export: a greedy GRU decode whose tokens are a list appended to in the loop.
TEST(LoopSequenceToScan, TorchGreedyDecodeLosesItsSequence) {
  ir::Model m = frontend::load_model(std::string(ONNXC_SOURCE_DIR) + "/tests/models/recurrent/gru_greedy_loop/model.onnx");
  passes::run_pipeline(m, passes::default_pipeline(), passes::PipelineOptions{});
  const ir::Node* loop = find(*m.graph, "Loop");
  ASSERT_NE(loop, nullptr);
  for (const ir::Node* n : m.graph->nodes()) EXPECT_EQ(n->op_type().find("Sequence"), std::string::npos) << n->describe();
  for (const ir::Node* n : loop->attr("body")->g->nodes())
    EXPECT_EQ(n->op_type().find("Sequence"), std::string::npos) << n->describe();
  // tokens = the stacked ArgMax of every step, [batch, steps] as torch returns it.
  const ir::Value* tokens = m.graph->outputs()[0];
  EXPECT_EQ(tokens->name(), "tokens");
  ASSERT_TRUE(tokens->shape());
  ASSERT_EQ(tokens->shape()->size(), 2u);
  EXPECT_EQ(tokens->shape()->at(0), ir::Dim::symbol("batch"));
}
#endif

}  // namespace
}  // namespace onnxc::testing
