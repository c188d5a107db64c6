// The CUDA calls of the C API (device inputs and outputs, the caller's context and stream) on a CPU
// library: each is refused with ONNXC_ERR_UNSUPPORTED and a message naming the call and the model, and
// the session still runs on the host afterwards. NULL sessions and bad indices are refused too.
#include <gtest/gtest.h>

#include <string>

#include "onnxc/runtime.h"
#include "session_check.h"
#include "tiny_model.h"

namespace {

class CpuLibrary : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(onnxc_model_from_desc(onnxc_model_tiny(), &model.m), ONNXC_OK) << onnxc_last_error();
    ASSERT_EQ(onnxc_session_create(model.m, nullptr, &session.s), ONNXC_OK) << onnxc_last_error();
  }
  void expect_refused(onnxc_status got, const char *call) {
    EXPECT_EQ(got, ONNXC_ERR_UNSUPPORTED) << onnxc_status_string(got);
    std::string want = std::string(call) +
                       ": model 'tiny' was compiled for the CPU (target host); device pointers and CUDA streams need a "
                       "library compiled with `onnxc compile --target cuda`";
    EXPECT_EQ(onnxc_session_last_error(session.s), want);
    EXPECT_EQ(onnxc_last_error(), want);
  }
  ModelPtr model;
  SessionPtr session;
};

TEST_F(CpuLibrary, SaysItRunsOnTheCpu) {
  EXPECT_EQ(onnxc_model_device(model.m), ONNXC_DEVICE_CPU);
  EXPECT_EQ(onnxc_model_device(nullptr), ONNXC_DEVICE_CPU);
}

TEST_F(CpuLibrary, RefusesDevicePointersAndStreams) {
  TinyCase c{2, 3};
  onnxc_tensor x = tensor(ONNXC_DTYPE_FLOAT, c.x_dims, c.x.data());
  expect_refused(onnxc_session_set_input_device(session.s, 0, &x), "onnxc_session_set_input_device");
  int stream = 0;
  expect_refused(onnxc_session_set_cuda_stream(session.s, nullptr, &stream), "onnxc_session_set_cuda_stream");
  expect_refused(onnxc_session_set_outputs_on_device(session.s, 1), "onnxc_session_set_outputs_on_device");
  run_and_check(session.s, c);  // nothing was bound or changed by the refused calls
  onnxc_tensor out{ONNXC_DTYPE_FLOAT, 1, nullptr, &stream};
  expect_refused(onnxc_session_get_output_device(session.s, 0, &out), "onnxc_session_get_output_device");
  EXPECT_EQ(out.data, nullptr) << "out-parameters are cleared on failure";
  EXPECT_EQ(out.rank, 0);
}

TEST(CudaApi, NullSessionsAreRefused) {
  onnxc_tensor out{};
  EXPECT_EQ(onnxc_session_set_input_device(nullptr, 0, nullptr), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(onnxc_last_error(), "onnxc_session_set_input_device: session is NULL");
  EXPECT_EQ(onnxc_session_set_cuda_stream(nullptr, nullptr, nullptr), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(onnxc_last_error(), "onnxc_session_set_cuda_stream: session is NULL");
  EXPECT_EQ(onnxc_session_set_outputs_on_device(nullptr, 1), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(onnxc_last_error(), "onnxc_session_set_outputs_on_device: session is NULL");
  EXPECT_EQ(onnxc_session_get_output_device(nullptr, 0, &out), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(onnxc_last_error(), "onnxc_session_get_output_device: session is NULL");
}

}  // namespace
