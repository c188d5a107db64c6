// Sizes given as data, end to end: HannWindow whose length is the value of its input and STFT whose
// frames and bins follow from frame_step and frame_length, compiled and run at two sizes each (VALUE_SIZE
// host steps bind the values, the kernels run over them), checked against the formulas; and a declared
// length that the value contradicts fails the run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "onnxc/runtime.h"
#include "opened_library.h"
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

struct SizedRun : OpenedLibrary {
  using OpenedLibrary::OpenedLibrary;
  onnxc_status operator()(int64_t size) {
    onnxc_tensor in{ONNXC_DTYPE_INT64, 0, nullptr, &size};
    onnxc_status st = onnxc_session_set_input(s, 0, &in);
    return st == ONNXC_OK ? onnxc_session_run(s) : st;
  }
};

TEST(ValueSizes, CompiledHannWindowTakesItsLengthFromData) {
  auto r = compile(hann_times_two(Dim::symbol("value:size")), "hann_value_size");
  SizedRun run(r.so_path);
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

// signal [1, 32, 1] -> STFT(frame_step, frame_length) -> y [1, frames, bins, 2], both sizes values:
// frames = (32 - value:len) floordiv value:step + 1, bins = value:len floordiv 2 + 1.
TEST(ValueSizes, CompiledStftTakesFramesAndBinsFromData) {
  ModelBuilder b(17);
  auto* x = b.input("x", DType::Float32, {1, 32, 1});
  auto* step = b.input("step", DType::Int64, {});
  auto* len = b.input("len", DType::Int64, {});
  Dim s = Dim::symbol("value:step"), l = Dim::symbol("value:len");
  auto* y = b.op("STFT", {x, step, nullptr, len}, "y", DType::Float32, {1, floordiv(Dim(32) - l, s) + 1, floordiv(l, Dim(2)) + 1, 2});
  b.output(y);
  auto r = compile(std::move(b.model()), "stft_value_sizes");
  SizedRun run(r.so_path);
  ASSERT_NE(run.s, nullptr);
  std::vector<float> signal(32);
  for (int i = 0; i < 32; ++i) signal[i] = static_cast<float>(std::sin(0.3 * i) + 0.1 * i);
  for (auto [fs, fl] : {std::pair<int64_t, int64_t>{8, 16}, {5, 6}}) {
    int64_t dims[3] = {1, 32, 1};
    onnxc_tensor in{ONNXC_DTYPE_FLOAT, 3, dims, signal.data()}, st{ONNXC_DTYPE_INT64, 0, nullptr, &fs},
        ln{ONNXC_DTYPE_INT64, 0, nullptr, &fl};
    ASSERT_EQ(onnxc_session_set_input(run.s, 0, &in), ONNXC_OK);
    ASSERT_EQ(onnxc_session_set_input(run.s, 1, &st), ONNXC_OK);
    ASSERT_EQ(onnxc_session_set_input(run.s, 2, &ln), ONNXC_OK);
    ASSERT_EQ(onnxc_session_run(run.s), ONNXC_OK) << onnxc_session_last_error(run.s);
    onnxc_tensor out;
    ASSERT_EQ(onnxc_session_get_output(run.s, 0, &out), ONNXC_OK);
    int64_t frames = (32 - fl) / fs + 1, bins = fl / 2 + 1;
    ASSERT_EQ(std::vector<int64_t>(out.dims, out.dims + out.rank), (std::vector<int64_t>{1, frames, bins, 2}));
    const float* v = static_cast<const float*>(out.data);
    for (int64_t f = 0; f < frames; ++f)
      for (int64_t k = 0; k < bins; ++k) {
        double re = 0, im = 0;
        for (int64_t j = 0; j < fl; ++j) {
          double a = -2 * M_PI * static_cast<double>(j * k) / static_cast<double>(fl);
          re += signal[f * fs + j] * std::cos(a);
          im += signal[f * fs + j] * std::sin(a);
        }
        EXPECT_NEAR(v[(f * bins + k) * 2], re, 1e-4) << f << " " << k;
        EXPECT_NEAR(v[(f * bins + k) * 2 + 1], im, 1e-4) << f << " " << k;
      }
  }
}

TEST(ValueSizes, ALengthTheValueContradictsFailsTheRun) {
  auto r = compile(hann_times_two(Dim(4)), "hann_fixed_size");
  SizedRun run(r.so_path);
  ASSERT_NE(run.s, nullptr);
  EXPECT_EQ(run(4), ONNXC_OK) << onnxc_session_last_error(run.s);
  EXPECT_EQ(run(6), ONNXC_ERR_KERNEL_FAILED);
  EXPECT_THAT(onnxc_session_last_error(run.s), ::testing::HasSubstr("the size input does not match the output's length"));
}
#endif

}  // namespace
}  // namespace onnxc::test
