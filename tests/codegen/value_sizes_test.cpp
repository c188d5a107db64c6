// Sizes given as data, end to end: HannWindow whose length is the value of its input, compiled to a
// library and run at two sizes (a VALUE_SIZE host step binds the size, the kernel then runs over it),
// checked against the formula; and a declared length that the value contradicts fails the run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "onnxc/runtime.h"
#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

#ifdef HAVE_ONNXC_RUNTIME
// size: int64 scalar -> HannWindow -> w[len] -> Mul 2 -> y[len]; len is `value:size` or a constant.
ir::Model hann_times_two(const Dim& len) {
  ModelBuilder b(17);
  auto* size = b.input("size", DType::Int64, {});
  auto* w = b.op("HannWindow", {size}, "w", DType::Float32, {len});
  auto* y = b.op("Mul", {w, b.const_f32("two", {}, {2})}, "y", DType::Float32, {len});
  b.output(y);
  return std::move(b.model());
}

struct Run {
  explicit Run(const std::string& so) {
    EXPECT_EQ(onnxc_model_open(so.c_str(), &model), ONNXC_OK) << onnxc_last_error();
    if (model) EXPECT_EQ(onnxc_session_create(model, nullptr, &s), ONNXC_OK) << onnxc_last_error();
  }
  ~Run() {
    onnxc_session_free(s);
    onnxc_model_free(model);
  }
  onnxc_status operator()(int64_t size) {
    onnxc_tensor in{ONNXC_DTYPE_INT64, 0, nullptr, &size};
    onnxc_status st = onnxc_session_set_input(s, 0, &in);
    return st == ONNXC_OK ? onnxc_session_run(s) : st;
  }
  onnxc_model* model = nullptr;
  onnxc_session* s = nullptr;
};

TEST(ValueSizes, CompiledHannWindowTakesItsLengthFromData) {
  auto r = compile(hann_times_two(Dim::symbol("value:size")), "hann_value_size");
  Run run(r.so_path);
  ASSERT_NE(run.s, nullptr);
  for (int64_t n : {5, 12}) {
    ASSERT_EQ(run(n), ONNXC_OK) << onnxc_session_last_error(run.s);
    onnxc_tensor out;
    ASSERT_EQ(onnxc_session_get_output(run.s, 0, &out), ONNXC_OK);
    ASSERT_EQ(out.rank, 1);
    ASSERT_EQ(out.dims[0], n);
    const float* y = static_cast<const float*>(out.data);
    for (int64_t i = 0; i < n; ++i)  // periodic: 0.5 - 0.5 cos(2πi / n), times 2
      EXPECT_NEAR(y[i], 2 * (0.5 - 0.5 * std::cos(2 * M_PI * static_cast<double>(i) / static_cast<double>(n))), 1e-6) << i;
  }
}

TEST(ValueSizes, ALengthTheValueContradictsFailsTheRun) {
  auto r = compile(hann_times_two(Dim(4)), "hann_fixed_size");
  Run run(r.so_path);
  ASSERT_NE(run.s, nullptr);
  EXPECT_EQ(run(4), ONNXC_OK) << onnxc_session_last_error(run.s);
  EXPECT_EQ(run(6), ONNXC_ERR_KERNEL_FAILED);
  EXPECT_THAT(onnxc_session_last_error(run.s), ::testing::HasSubstr("the size input does not match the output's length"));
}
#endif

}  // namespace
}  // namespace onnxc::test
