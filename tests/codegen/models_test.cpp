// End to end: tests/models/*/model.onnx through the frontend, the default passes and codegen, run on
// every test_data_set_* through the runtime's C API, compared with PyTorch's reference outputs
// (rtol 1e-4, atol 1e-5). Also checks that a second compile of the same model is served from the
// kernel cache.
#include <gtest/gtest.h>

#include <filesystem>

#include "test_util.h"

#if defined(HAVE_ONNXC_FRONTEND) && defined(HAVE_ONNXC_PASSES)
#include "frontend/onnx_import.h"
#include "frontend/tensor_io.h"
#include "passes/pipeline.h"
#endif
#ifdef HAVE_ONNXC_RUNTIME
#include "onnxc/runtime.h"
#endif

namespace onnxc::test {
namespace {

namespace fs = std::filesystem;

#if defined(HAVE_ONNXC_FRONTEND) && defined(HAVE_ONNXC_PASSES)

HostTensor to_host(const ir::Tensor& t) {
  HostTensor h;
  h.dtype = t.dtype();
  h.dims = t.dims();
  auto p = static_cast<const uint8_t*>(t.raw());
  h.bytes.assign(p, p + t.nbytes());
  return h;
}

// Runs the library on `inputs`: through the runtime's C API when it is built, else the test executor.
std::vector<HostTensor> run_library(const std::string& so, const std::vector<HostTensor>& inputs) {
#ifdef HAVE_ONNXC_RUNTIME
  onnxc_model* model = nullptr;
  EXPECT_EQ(onnxc_model_open(so.c_str(), &model), ONNXC_OK) << onnxc_last_error();
  onnxc_session* s = nullptr;
  EXPECT_EQ(onnxc_session_create(model, nullptr, &s), ONNXC_OK) << onnxc_last_error();
  std::vector<onnxc_tensor> ts(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    ts[i] = {static_cast<int32_t>(inputs[i].dtype), static_cast<int32_t>(inputs[i].dims.size()),
             inputs[i].dims.data(), const_cast<uint8_t*>(inputs[i].bytes.data())};
    EXPECT_EQ(onnxc_session_set_input(s, i, &ts[i]), ONNXC_OK) << onnxc_session_last_error(s);
  }
  EXPECT_EQ(onnxc_session_run(s), ONNXC_OK) << onnxc_session_last_error(s);
  std::vector<HostTensor> outs;
  for (size_t i = 0; i < onnxc_model_num_outputs(model); ++i) {
    onnxc_tensor o{};
    EXPECT_EQ(onnxc_session_get_output(s, i, &o), ONNXC_OK) << onnxc_session_last_error(s);
    HostTensor h;
    h.dtype = static_cast<ir::DType>(o.dtype);
    h.dims.assign(o.dims, o.dims + o.rank);
    size_t n = onnxc_dtype_size(o.dtype);
    for (auto d : h.dims) n *= static_cast<size_t>(d);
    auto p = static_cast<const uint8_t*>(o.data);
    if (n) h.bytes.assign(p, p + n);
    outs.push_back(std::move(h));
  }
  onnxc_session_free(s);
  onnxc_model_free(model);
  return outs;
#else
  LoadedModel lib(so);
  return lib.run(inputs);
#endif
}

class ModelsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelsTest, MatchesReferenceOnEveryDataSet) {
  fs::path dir = fs::path(ONNXC_SOURCE_DIR) / "tests" / "models" / GetParam();
  ir::Model m = frontend::load_model((dir / "model.onnx").string());
  passes::run_pipeline(m, passes::default_pipeline());
  codegen::CompileResult r = compile(m, GetParam());
  RecordProperty("kernels", r.kernels);
  RecordProperty("compile_seconds", std::to_string(r.seconds));
  int sets = 0;
  for (int k = 0; fs::exists(dir / ("test_data_set_" + std::to_string(k))); ++k, ++sets) {
    fs::path ds = dir / ("test_data_set_" + std::to_string(k));
    std::vector<HostTensor> inputs;
    for (size_t i = 0; i < m.graph->inputs().size(); ++i)
      inputs.push_back(to_host(frontend::load_tensor_pb((ds / ("input_" + std::to_string(i) + ".pb")).string())));
    auto outs = run_library(r.so_path, inputs);
    ASSERT_EQ(outs.size(), m.graph->outputs().size());
    for (size_t i = 0; i < outs.size(); ++i) {
      ir::Tensor ref = frontend::load_tensor_pb((ds / ("output_" + std::to_string(i) + ".pb")).string());
      EXPECT_EQ(outs[i].dims, ref.dims()) << ds << " output " << i;
      std::vector<float> expect(ref.data<float>(), ref.data<float>() + ref.numel());
      EXPECT_TRUE(all_close(outs[i].values<float>(), expect, 1e-4, 1e-5)) << ds << " output " << i;
    }
  }
  EXPECT_EQ(sets, 6);

  // Recompiling is served from the kernel cache.
  codegen::CompileResult again = compile(m, GetParam());
  EXPECT_EQ(again.cache_hits, static_cast<uint64_t>(again.distinct_kernels));
  fs::remove_all(fs::path(r.so_path).parent_path());
  fs::remove_all(fs::path(again.so_path).parent_path());
}

INSTANTIATE_TEST_SUITE_P(Models, ModelsTest,
                         ::testing::Values("encoder_layer", "decoder_prelayer_causal", "mha_cross_attention"));

#endif

}  // namespace
}  // namespace onnxc::test
