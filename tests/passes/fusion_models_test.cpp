// Fusions on real PyTorch exports: the tiny norm/GELU blocks in tests/passes/models (BERT, LLaMA,
// T5 styles at opsets 13-17) and the committed transformer blocks in tests/models. The default
// pipeline must fuse every norm and GELU (counts asserted) and still compute the module's outputs.
#include <gtest/gtest.h>

#ifdef ONNXC_HAVE_FRONTEND
#include <filesystem>

#include "frontend/onnx_import.h"
#include "frontend/tensor_io.h"
#include "ir/printer.h"
#include "passes/pipeline.h"
#include "reference_eval.h"

namespace onnxc::testing {
namespace {

struct Case {
  std::string dir;  // under the source tree
  std::map<std::string, int> counts;  // families that must fire this often (others: 0, attention unchecked)
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.dir; }

class FusionModels : public ::testing::TestWithParam<Case> {};

TEST_P(FusionModels, FusesEveryNormAndGeluAndKeepsTheOutputs) {
  const Case& c = GetParam();
  std::string dir = std::string(ONNXC_SOURCE_DIR) + "/" + c.dir;
  ir::Model original = frontend::load_model(dir + "/model.onnx");
  ir::Model fused = frontend::load_model(dir + "/model.onnx");
  passes::FusionReport report;
  passes::PipelineOptions opt;
  opt.fusion_report = &report;
  opt.verify_each = true;
  passes::run_pipeline(fused, passes::default_pipeline(), opt);
  for (const auto& [family, n] : report.counts()) {
    if (family == "attention") continue;  // the attention rules have their own model tests
    int want = c.counts.count(family) ? c.counts.at(family) : 0;
    EXPECT_EQ(n, want) << family << " in " << c.dir << "\n" << ir::to_string(*fused.graph);
  }
  for (const auto& nm : report.near_misses)
    if (nm.family != "attention") ADD_FAILURE() << "near miss " << nm.rule << " at " << nm.where << ": " << nm.reason;
  EXPECT_EQ(fused.opset(""), 23);

  std::string set = dir + "/test_data_set_0";
  std::vector<ir::Tensor> inputs;
  for (size_t i = 0; i < original.graph->inputs().size(); ++i)
    inputs.push_back(frontend::load_tensor_pb(set + "/input_" + std::to_string(i) + ".pb"));
  ir::Tensor want = frontend::load_tensor_pb(set + "/output_0.pb");
  EXPECT_LT(max_error(run_reference(*fused.graph, inputs).at(0), want), 1e-4) << "fused";
  EXPECT_LT(max_error(run_reference(*original.graph, inputs).at(0), want), 1e-4) << "original";
}

INSTANTIATE_TEST_SUITE_P(
    Exports, FusionModels,
    ::testing::Values(Case{"tests/passes/models/bert_block_op13", {{"layer_norm", 2}, {"gelu", 1}}},
                      Case{"tests/passes/models/bert_block_op14", {{"layer_norm", 2}, {"gelu", 1}}},
                      Case{"tests/passes/models/llama_mlp_op14", {{"rms_norm", 1}}},
                      Case{"tests/passes/models/llama_mlp_op17", {{"rms_norm", 1}}},
                      Case{"tests/passes/models/t5_block_op13", {{"rms_norm", 1}, {"gelu", 1}}},
                      Case{"tests/passes/models/t5_block_op17", {{"rms_norm", 1}, {"gelu", 1}}},
                      // torch writes LayerNormalization itself at opset 17: nothing left to fuse.
                      Case{"tests/models/encoder_layer", {}},
                      Case{"tests/models/decoder_prelayer_causal", {{"gelu", 2}}},
                      Case{"tests/models/mha_cross_attention", {}}),
    [](const ::testing::TestParamInfo<Case>& i) {
      std::string n = std::filesystem::path(i.param.dir).filename().string();
      return n;
    });

}  // namespace
}  // namespace onnxc::testing
#endif
