// Softmax lowerings: opset 13 single axis (last and not last), opset < 13 flattening, LogSoftmax,
// -inf entries (masked attention scores), symbolic row length.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

// Softmax of `x` viewed as rows of `len` consecutive elements with stride `stride` (outer x inner).
std::vector<float> softmax_ref(const std::vector<float>& x, int outer, int len, int inner, bool log = false) {
  std::vector<float> y(x.size());
  for (int o = 0; o < outer; ++o)
    for (int i = 0; i < inner; ++i) {
      double m = -INFINITY, s = 0;
      for (int k = 0; k < len; ++k) m = std::max(m, double(x[(o * len + k) * inner + i]));
      for (int k = 0; k < len; ++k) s += std::exp(x[(o * len + k) * inner + i] - m);
      for (int k = 0; k < len; ++k) {
        double v = x[(o * len + k) * inner + i] - m;
        y[(o * len + k) * inner + i] = float(log ? v - std::log(s) : std::exp(v) / s);
      }
    }
  return y;
}

std::vector<float> ramp(int n, float scale) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(std::sin(i * 1.7f) * scale);
  return v;
}

TEST(LowerSoftmax, LastAxisSymbolicWithMaskedEntries) {
  ModelBuilder b(13);
  Dim t = Dim::symbol("t");
  auto* x = b.input("x", DType::Float32, {2, 3, t});
  b.output(b.op("Softmax", {x}, "y", DType::Float32, {2, 3, t}));
  auto r = compile(b.model(), "softmax_last");
  LoadedModel lib(r.so_path);
  for (int len : {1, 5, 37}) {
    auto xv = ramp(6 * len, 4);
    for (int row = 0; row < 6; ++row)
      if (len > 1) xv[row * len + len - 1] = -std::numeric_limits<float>::infinity();  // a masked key
    auto out = lib.run({HostTensor::f32({2, 3, len}, xv)});
    EXPECT_TRUE(all_close(out[0].values<float>(), softmax_ref(xv, 6, len, 1))) << "len " << len;
  }
}

TEST(LowerSoftmax, MiddleAxisAndLogSoftmax) {
  ModelBuilder b(13);
  auto* x = b.input("x", DType::Float32, {2, 3, 4});
  ir::Node* s = b.node("Softmax", {x}, {{"y", ir::Type::tensor(DType::Float32, ir::Shape{2, 3, 4})}});
  s->set_attr_int("axis", 1);
  b.output(s->output());
  b.output(b.op("LogSoftmax", {x}, "logy", DType::Float32, {2, 3, 4}));
  auto xv = ramp(24, 3);
  auto out = compile_and_run(b.model(), {HostTensor::f32({2, 3, 4}, xv)});
  EXPECT_TRUE(all_close(out[0].values<float>(), softmax_ref(xv, 2, 3, 4)));
  EXPECT_TRUE(all_close(out[1].values<float>(), softmax_ref(xv, 6, 4, 1, true)));
}

// Before opset 13, axis=1 normalizes over every dim from 1 on (the input flattened to 2-D).
TEST(LowerSoftmax, Opset11FlattensTrailingDims) {
  ModelBuilder b(11);
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n, 3, 4});
  b.output(b.op("Softmax", {x}, "y", DType::Float32, {n, 3, 4}));
  auto xv = ramp(24, 2);
  auto out = compile_and_run(b.model(), {HostTensor::f32({2, 3, 4}, xv)});
  EXPECT_TRUE(all_close(out[0].values<float>(), softmax_ref(xv, 2, 12, 1)));
}

}  // namespace
}  // namespace onnxc::test
