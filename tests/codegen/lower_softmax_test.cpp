// Softmax lowerings: opset 13 single axis (last and not last), opset < 13 flattening, LogSoftmax,
// -inf entries (masked attention scores), symbolic row length.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

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


// Rows whose count is an expression (x[1:], n - 1 rows), empty where x has one row: an empty output
// computes and reads nothing. And rows of length t - 1 (x[:, :-1]), empty where t is 1: ONNX gives
// an empty output. Softmax, LogSoftmax and Hardmax share the row-wise kernel.
TEST(LowerSoftmax, EmptyRowsOfExpressionCountAndLength) {
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    SCOPED_TRACE(op);
    ModelBuilder b(13);
    Dim n = Dim::symbol("n"), t = Dim::symbol("t");
    auto* x = b.input("x", DType::Float32, {n, 4});
    auto* one = b.const_i64("one", {1});
    auto* big = b.const_i64("big", {INT64_MAX});
    auto* zero = b.const_i64("zero", {0});
    auto* rows = b.op("Slice", {x, one, big, zero}, "rows", DType::Float32, {n - 1, 4});
    b.output(b.op(op, {rows}, "y", DType::Float32, {n - 1, 4}));
    auto* z = b.input("z", DType::Float32, {3, t});
    auto* m1 = b.const_i64("m1", {-1});
    auto* ax1 = b.const_i64("ax1", {1});
    auto* cols = b.op("Slice", {z, zero, m1, ax1}, "cols", DType::Float32, {3, t - 1});
    b.output(b.op(op, {cols}, "w", DType::Float32, {3, t - 1}));
    LoadedModel lib(compile(b.model(), std::string("softmax_empty_") + op).so_path);
    for (int k : {1, 3}) {
      SCOPED_TRACE(k);
      auto xv = ramp(4 * k, 3), zv = ramp(3 * k, 2);
      auto out = lib.run({HostTensor::f32({k, 4}, xv), HostTensor::f32({3, k}, zv)});
      EXPECT_EQ(out[0].dims, (std::vector<int64_t>{k - 1, 4}));
      EXPECT_EQ(out[1].dims, (std::vector<int64_t>{3, k - 1}));
      std::vector<float> xr(xv.begin() + 4, xv.end()), zr;
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c + 1 < k; ++c) zr.push_back(zv[static_cast<size_t>(r * k + c)]);
      if (std::string(op) == "Hardmax") {
        auto hard = [](const std::vector<float>& v, int len) {
          std::vector<float> h(v.size(), 0);
          for (size_t r = 0; r * len < v.size(); ++r) {
            size_t best = r * len;
            for (int c = 1; c < len; ++c)
              if (v[r * len + c] > v[best]) best = r * len + c;
            h[best] = 1;
          }
          return h;
        };
        EXPECT_EQ(out[0].values<float>(), hard(xr, 4));
        EXPECT_EQ(out[1].values<float>(), hard(zr, k - 1));
      } else {
        bool log = std::string(op) == "LogSoftmax";
        EXPECT_TRUE(all_close(out[0].values<float>(), softmax_ref(xr, k - 1, 4, 1, log)));
        EXPECT_TRUE(all_close(out[1].values<float>(), softmax_ref(zr, 3, k - 1, 1, log)));
      }
    }
  }
}


}  // namespace
}  // namespace onnxc::test
