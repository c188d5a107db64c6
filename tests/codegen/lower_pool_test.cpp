// MaxPool's separable form over 2-D images (lower/pooling.cpp, max_pool_rows) checked against a
// naive window loop with a NaN-keeping max, and against the direct form (pool_at: the same pool
// asked for its Indices output, which only the direct form gives): strides, dilations, asymmetric
// pads, ceil_mode, windows entirely in the pads, windows larger than the unrolled limit, NaN and
// ±inf, rows shorter and longer than a vector, symbolic batch and image extents, on every ISA level
// this machine runs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "runnable_targets.h"
#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

struct PoolCase {
  int64_t n = 2, c = 3, h = 9, w = 13;
  int64_t kh = 3, kw = 3, sh = 1, sw = 1, dh = 1, dw = 1;
  std::vector<int64_t> pads = {0, 0, 0, 0};  // top, left, bottom, right
  bool ceil = false;

  // ONNX's output extent along dim i (0: rows, 1: columns).
  int64_t out(int i) const {
    const int64_t in = i == 0 ? h : w, k = i == 0 ? kh : kw, s = i == 0 ? sh : sw, d = i == 0 ? dh : dw;
    const int64_t span = in + pads[i] + pads[i + 2] - ((k - 1) * d + 1);
    return (ceil ? (span + s - 1) / s : span / s) + 1;
  }
};

void set_window(ir::Node* p, const PoolCase& k) {
  p->set_attr_ints("kernel_shape", {k.kh, k.kw});
  p->set_attr_ints("strides", {k.sh, k.sw});
  p->set_attr_ints("dilations", {k.dh, k.dw});
  p->set_attr_ints("pads", k.pads);
  if (k.ceil) p->set_attr_int("ceil_mode", 1);
}

// The maximum over each window's positions inside the image, NaN when any of them is NaN, -inf for
// a window with none (all in the pads).
std::vector<float> reference(const PoolCase& k, const std::vector<float>& x) {
  std::vector<float> y;
  const int64_t oh = k.out(0), ow = k.out(1);
  for (int64_t p = 0; p < k.n * k.c; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        float m = -INFINITY;
        for (int64_t a = 0; a < k.kh; ++a)
          for (int64_t e = 0; e < k.kw; ++e) {
            const int64_t yy = i * k.sh - k.pads[0] + a * k.dh, xx = j * k.sw - k.pads[1] + e * k.dw;
            if (yy < 0 || yy >= k.h || xx < 0 || xx >= k.w) continue;
            const float v = x[(p * k.h + yy) * k.w + xx];
            m = std::isnan(m) || m > v ? m : v;
          }
        y.push_back(m);
      }
  return y;
}

// Values on a grid of 1/8 (ties between taps), one NaN and one ±inf in some planes, one plane all
// -inf.
std::vector<float> pool_input(const PoolCase& k, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(-64, 63);
  const int64_t plane = k.h * k.w, planes = k.n * k.c;
  std::vector<float> x(static_cast<size_t>(planes * plane));
  for (float& v : x) v = static_cast<float>(d(gen)) / 8.f;
  std::uniform_int_distribution<int64_t> at(0, plane - 1);
  if (planes > 0) x[static_cast<size_t>(at(gen))] = NAN;
  if (planes > 1) x[static_cast<size_t>(plane + at(gen))] = INFINITY, x[static_cast<size_t>(plane + at(gen))] = -INFINITY;
  if (planes > 2)
    for (int64_t i = 0; i < plane; ++i) x[static_cast<size_t>(2 * plane + i)] = -INFINITY;
  return x;
}

// The same NaN pattern and equal values (max selects; nothing is rounded).
::testing::AssertionResult same(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << got.size() << " values, want " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (std::isnan(got[i]) != std::isnan(want[i]) || (!std::isnan(want[i]) && got[i] != want[i]))
      return ::testing::AssertionFailure() << "at " << i << ": " << got[i] << ", want " << want[i];
  return ::testing::AssertionSuccess();
}

// The direct form is compiled on the host target only, for windows it unrolls (its Indices over
// a larger window take minutes to compile).
void check_pool(const PoolCase& k, const std::string& target) {
  const bool with_direct = target == "host" && k.kh * k.kw <= 32;
  ModelBuilder b(13);
  auto* x = b.input("x", DType::Float32, {k.n, k.c, k.h, k.w});
  const ir::Shape out{k.n, k.c, k.out(0), k.out(1)};
  ir::Node* rows = b.node("MaxPool", {x}, {{"separable", ir::Type::tensor(DType::Float32, out)}});
  set_window(rows, k);
  b.output(rows->output(0));
  if (with_direct) {
    ir::Node* direct = b.node("MaxPool", {x}, {{"direct", ir::Type::tensor(DType::Float32, out)},
                                               {"argmax", ir::Type::tensor(DType::Int64, out)}});
    set_window(direct, k);
    b.output(direct->output(0));
    b.output(direct->output(1));
  }
  const auto xv = pool_input(k, static_cast<uint32_t>(k.h * 31 + k.w));
  auto got = compile_and_run(b.model(), {HostTensor::f32({k.n, k.c, k.h, k.w}, xv)}, "maxpool_rows", target);
  SCOPED_TRACE(target + " " + std::to_string(k.h) + "x" + std::to_string(k.w) + " kernel " + std::to_string(k.kh) + "x" +
               std::to_string(k.kw) + " stride " + std::to_string(k.sh) + "x" + std::to_string(k.sw));
  EXPECT_TRUE(same(got[0].values<float>(), reference(k, xv)));
  if (with_direct) {
    EXPECT_TRUE(same(got[0].values<float>(), got[1].values<float>()));
  }
}

TEST(LowerPool, SeparableMaxPoolMatchesTheWindowLoop) {
  std::vector<PoolCase> cases;
  PoolCase resnet;  // ResNet's stem pool: 3×3, stride 2, pads 1, on an odd image
  resnet.h = resnet.w = 23, resnet.sh = resnet.sw = 2, resnet.pads = {1, 1, 1, 1};
  cases.push_back(resnet);
  PoolCase halves;  // 2×2 stride 2, rows of 37 (two vectors and a masked tail on AVX-512)
  halves.h = 8, halves.w = 37, halves.kh = halves.kw = 2, halves.sh = halves.sw = 2;
  cases.push_back(halves);
  PoolCase dilated;  // 3×5, stride 1×2, dilation 2×1, asymmetric pads
  dilated.h = 11, dilated.w = 40, dilated.kw = 5, dilated.sw = 2, dilated.dh = 2, dilated.pads = {1, 2, 2, 0};
  cases.push_back(dilated);
  PoolCase ceil;  // ceil_mode: the last column's window runs past the image
  ceil.h = 9, ceil.w = 12, ceil.sh = ceil.sw = 2, ceil.ceil = true;
  cases.push_back(ceil);
  PoolCase in_pads;  // the first output row's and last column's windows lie entirely in the pads: -inf
  in_pads.h = 5, in_pads.w = 6, in_pads.kh = in_pads.kw = 2, in_pads.pads = {2, 0, 0, 2};
  cases.push_back(in_pads);
  PoolCase one;  // 1×1, stride 2: a strided copy
  one.h = 7, one.w = 9, one.kh = one.kw = 1, one.sh = one.sw = 2;
  cases.push_back(one);
  PoolCase big;  // 7×7 (49 taps: the direct form's reduction, not its unrolled taps)
  big.n = 1, big.h = 10, big.w = 20, big.kh = big.kw = 7, big.pads = {3, 3, 3, 3};
  cases.push_back(big);
  for (const std::string& t : runnable_targets())
    for (const PoolCase& k : cases) check_pool(k, t);
}

// One library for every batch and image size: ResNet's 3×3/2 pool over [n, 4, h, w] at run time.
TEST(LowerPool, SeparableMaxPoolOverSymbolicExtents) {
  ModelBuilder b(13);
  Dim n = Dim::symbol("n"), h = Dim::symbol("h"), w = Dim::symbol("w");
  auto* x = b.input("x", DType::Float32, {n, 4, h, w});
  ir::Node* p = b.node("MaxPool", {x}, {{"y", ir::Type::tensor(DType::Float32, ir::Shape{n, 4, floordiv(h - 1, 2) + 1, floordiv(w - 1, 2) + 1})}});
  PoolCase k;
  k.c = 4, k.sh = k.sw = 2, k.pads = {1, 1, 1, 1};
  set_window(p, k);
  b.output(p->output(0));
  auto result = compile(b.model(), "maxpool_symbolic");
  LoadedModel lib(result.so_path);
  for (auto [nn, hh, ww] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {2, 6, 5}, {3, 19, 37}, {1, 112, 112}}) {
    k.n = nn, k.h = hh, k.w = ww;
    const auto xv = pool_input(k, static_cast<uint32_t>(hh + ww));
    auto out = lib.run({HostTensor::f32({nn, 4, hh, ww}, xv)});
    EXPECT_TRUE(same(out[0].values<float>(), reference(k, xv))) << nn << "x" << hh << "x" << ww;
  }
}

}  // namespace
}  // namespace onnxc::test
