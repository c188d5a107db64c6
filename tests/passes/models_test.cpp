// The default pipeline on the committed PyTorch exports (tests/models/*/model.onnx): no Shape, no
// Gather on shapes and no ConstantOfShape survive, the inputs keep their symbolic dims, and the
// graph still verifies.
#include <gtest/gtest.h>

#include <map>

#include "ir/printer.h"
#include "ir/verify.h"
#include "passes/pipeline.h"
#include "reference_eval.h"

#ifdef ONNXC_HAVE_FRONTEND
#include <cmath>
#include <filesystem>

#include "frontend/onnx_import.h"
#include "frontend/tensor_io.h"
#include "ir/eval/eval.h"
#include "ir/eval/symbolic_shape.h"
#endif

namespace onnxc::testing {
namespace {

#ifdef ONNXC_HAVE_FRONTEND

std::map<std::string, int> op_histogram(const ir::Graph& g) {
  std::map<std::string, int> h;
  for (const ir::Node* n : g.nodes()) h[(n->domain().empty() ? "" : n->domain() + ".") + n->op_type()]++;
  return h;
}

std::string histogram_text(const std::map<std::string, int>& h) {
  std::string s;
  for (const auto& [op, n] : h) s += op + " " + std::to_string(n) + ", ";
  return s;
}

// Whether v is computed from a Shape/Size node through shape arithmetic (i.e. is shape data).
bool from_shape(const ir::Value* v, int depth = 0) {
  if (!v || !v->producer() || depth > 64) return false;
  const ir::Node* p = v->producer();
  if (p->op_type() == "Shape" || p->op_type() == "Size") return true;
  for (const ir::Value* in : p->inputs())
    if (from_shape(in, depth + 1)) return true;
  return false;
}

class CommittedModels : public ::testing::TestWithParam<std::string> {};

TEST_P(CommittedModels, DefaultPipelineRemovesShapeSubgraphs) {
  std::string path = std::string(ONNXC_SOURCE_DIR) + "/tests/models/" + GetParam() + "/model.onnx";
  ir::Model m = frontend::load_model(path);
  std::vector<std::string> input_types_before;
  for (const ir::Value* in : m.graph->inputs()) input_types_before.push_back(in->type().str());

  passes::PipelineOptions opt;
  opt.verify_each = true;
  passes::run_pipeline(m, passes::default_pipeline(), opt);
  ir::verify(m);

  auto h = op_histogram(*m.graph);
  std::cout << GetParam() << " after the default pipeline (" << m.graph->num_nodes() << " nodes): " << histogram_text(h)
            << "\n";
  EXPECT_EQ(h.count("Shape"), 0u) << histogram_text(h);
  EXPECT_EQ(h.count("ConstantOfShape"), 0u) << histogram_text(h);
  EXPECT_EQ(h.count("Constant"), 0u) << histogram_text(h);
  for (const ir::Node* n : m.graph->nodes()) {
    if (n->op_type() == "Gather") {
      EXPECT_FALSE(from_shape(n->input(0))) << n->describe();
    }
  }
  std::vector<std::string> input_types_after;
  for (const ir::Value* in : m.graph->inputs()) input_types_after.push_back(in->type().str());
  EXPECT_EQ(input_types_after, input_types_before);
  for (const std::string& t : input_types_after) {
    EXPECT_NE(t.find("batch"), std::string::npos) << t;
  }
  if (::testing::Test::HasFailure()) std::cout << ir::to_string(m);
}

TEST_P(CommittedModels, SimplifiedModelComputesTheReferenceOutputs) {
  // Numeric check of the whole pipeline: the original and the simplified graph, run by the reference
  // evaluator on every data set (batch/seq from 1 to 64), match PyTorch's outputs.
  std::string dir = std::string(ONNXC_SOURCE_DIR) + "/tests/models/" + GetParam();
  ir::Model original = frontend::load_model(dir + "/model.onnx");
  ir::Model simplified = frontend::load_model(dir + "/model.onnx");
  passes::run_pipeline(simplified, passes::default_pipeline());
  int sets = 0;
  for (int k = 0; std::filesystem::exists(dir + "/test_data_set_" + std::to_string(k)); ++k, ++sets) {
    std::string set = dir + "/test_data_set_" + std::to_string(k);
    std::vector<ir::Tensor> inputs;
    for (size_t i = 0; i < original.graph->inputs().size(); ++i)
      inputs.push_back(frontend::load_tensor_pb(set + "/input_" + std::to_string(i) + ".pb"));
    ir::Tensor want = frontend::load_tensor_pb(set + "/output_0.pb");
    EXPECT_LT(max_error(run_reference(*original.graph, inputs).at(0), want), 1e-4) << set << " (original)";
    EXPECT_LT(max_error(run_reference(*simplified.graph, inputs).at(0), want), 1e-4) << set << " (simplified)";
  }
  EXPECT_EQ(sets, 6);
}

INSTANTIATE_TEST_SUITE_P(Pipeline, CommittedModels,
                         ::testing::Values("encoder_layer", "decoder_prelayer_causal", "mha_cross_attention"));

#else
TEST(CommittedModels, SkippedWithoutFrontend) { GTEST_SKIP() << "onnxc_frontend is not built"; }
#endif

}  // namespace
}  // namespace onnxc::testing
