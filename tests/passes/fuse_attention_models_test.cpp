// fuse_attention on the committed PyTorch exports: each attention block of the model fuses (counts
// asserted), with near misses printed when one does not.
#include <gtest/gtest.h>

#include "passes/pipeline.h"

#ifdef ONNXC_HAVE_FRONTEND
#include "frontend/onnx_import.h"
#endif

namespace onnxc::testing {
namespace {

#ifdef ONNXC_HAVE_FRONTEND

struct Expected {
  const char* model;
  int attention;
  bool causal;
};

class AttentionModels : public ::testing::TestWithParam<Expected> {};

TEST_P(AttentionModels, EveryBlockFuses) {
  std::string path = std::string(ONNXC_SOURCE_DIR) + "/tests/models/" + GetParam().model + "/model.onnx";
  ir::Model m = frontend::load_model(path);
  passes::FusionReport report;
  passes::PipelineOptions opt;
  opt.fusion_report = &report;
  passes::run_pipeline(m, passes::default_pipeline(), opt);
  int nodes = 0;
  for (const ir::Node* n : m.graph->nodes()) nodes += n->op_type() == "Attention";
  std::string misses;
  for (const auto& nm : report.ranked_near_misses())
    if (nm.family == "attention") misses += "  " + nm.where + ": " + nm.reason + "\n";
  EXPECT_EQ(nodes, GetParam().attention) << "near misses:\n" << misses;
  EXPECT_EQ(report.counts().at("attention"), GetParam().attention);
  // Causal masks become is_causal=1, never a materialized mask.
  for (const ir::Node* n : m.graph->nodes())
    if (n->op_type() == "Attention") {
      EXPECT_EQ(n->attr_int("is_causal", 0), GetParam().causal ? 1 : 0) << n->describe();
      if (GetParam().causal) {
        EXPECT_LT(n->num_inputs(), 4u) << n->describe() << " kept a mask";
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Exports, AttentionModels,
                         ::testing::Values(Expected{"encoder_layer", 1, false}, Expected{"decoder_prelayer_causal", 2, true},
                                           Expected{"mha_cross_attention", 1, false}),
                         [](const auto& info) { return std::string(info.param.model); });

#endif

}  // namespace
}  // namespace onnxc::testing
