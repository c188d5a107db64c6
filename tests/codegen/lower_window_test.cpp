// Window ops: pooling (max with indices, average with and without pads counted), convolution with
// groups, strides and padding, ConvTranspose, Resize (linear, half_pixel; antialias with run-time scales).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

TEST(LowerWindow, MaxAndAveragePool) {
  ModelBuilder b(13);
  auto* x = b.input("x", DType::Float32, {1, 1, 3, 3});
  ir::Node* mp = b.node("MaxPool", {x}, {{"max", ir::Type::tensor(DType::Float32, ir::Shape{1, 1, 2, 2})},
                                         {"argmax", ir::Type::tensor(DType::Int64, ir::Shape{1, 1, 2, 2})}});
  mp->set_attr_ints("kernel_shape", {2, 2});
  ir::Node* ap = b.node("AveragePool", {x}, {{"avg", ir::Type::tensor(DType::Float32, ir::Shape{1, 1, 3, 3})}});
  ap->set_attr_ints("kernel_shape", {2, 2});
  ap->set_attr_ints("pads", {0, 0, 1, 1});
  ir::Node* api = b.node("AveragePool", {x}, {{"avg_pad", ir::Type::tensor(DType::Float32, ir::Shape{1, 1, 3, 3})}});
  api->set_attr_ints("kernel_shape", {2, 2});
  api->set_attr_ints("pads", {0, 0, 1, 1});
  api->set_attr_int("count_include_pad", 1);
  for (auto* n : {mp, ap, api}) b.output(n->output(0));
  b.output(mp->output(1));
  // x = [[0 1 2] [3 4 5] [6 7 8]]
  auto out = compile_and_run(b.model(), {HostTensor::f32({1, 1, 3, 3}, iota(9))});
  EXPECT_TRUE(all_close(out[0].values<float>(), {4, 5, 7, 8}));
  EXPECT_TRUE(all_close(out[1].values<float>(), {2, 3, 3.5f, 5, 6, 6.5f, 6.5f, 7.5f, 8}));
  EXPECT_TRUE(all_close(out[2].values<float>(), {2, 3, 1.75f, 5, 6, 3.25f, 3.25f, 3.75f, 2}));
  EXPECT_EQ(out[3].values<int64_t>(), (std::vector<int64_t>{4, 5, 7, 8}));
}

TEST(LowerWindow, GroupedStridedPaddedConv) {
  ModelBuilder b(13);
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n, 2, 4, 4});
  // Two groups of one channel: out channel 0 sums 3x3 windows of x channel 0, channel 1 negates the
  // centre of x channel 1.
  std::vector<float> w(18, 0.f);
  for (int i = 0; i < 9; ++i) w[i] = 1;
  w[9 + 4] = -1;
  auto* wt = b.const_f32("w", {2, 1, 3, 3}, w);
  auto* bias = b.const_f32("b", {2}, {0.5f, 0});
  ir::Node* c = b.node("Conv", {x, wt, bias}, {{"y", ir::Type::tensor(DType::Float32, ir::Shape{n, 2, 2, 2})}});
  c->set_attr_int("group", 2);
  c->set_attr_ints("strides", {2, 2});
  c->set_attr_ints("pads", {1, 1, 1, 1});
  b.output(c->output());
  auto xv = iota(32);
  auto out = compile_and_run(b.model(), {HostTensor::f32({1, 2, 4, 4}, xv)});
  // Channel 0 windows centred at (0,0), (0,2), (2,0), (2,2) with zero padding.
  auto sum = [&](int ci, int cj) {
    float s = 0;
    for (int i = ci - 1; i <= ci + 1; ++i)
      for (int j = cj - 1; j <= cj + 1; ++j)
        if (i >= 0 && i < 4 && j >= 0 && j < 4) s += xv[i * 4 + j];
    return s + 0.5f;
  };
  EXPECT_TRUE(all_close(out[0].values<float>(), {sum(0, 0), sum(0, 2), sum(2, 0), sum(2, 2), -16, -18, -24, -26}));
}

TEST(LowerWindow, ConvTransposeStride2) {
  ModelBuilder b(13);
  auto* x = b.input("x", DType::Float32, {1, 1, 3});
  auto* w = b.const_f32("w", {1, 1, 2}, {1, 10});
  ir::Node* c = b.node("ConvTranspose", {x, w}, {{"y", ir::Type::tensor(DType::Float32, ir::Shape{1, 1, 6})}});
  c->set_attr_ints("strides", {2});
  b.output(c->output());
  auto out = compile_and_run(b.model(), {HostTensor::f32({1, 1, 3}, {1, 2, 3})});
  EXPECT_TRUE(all_close(out[0].values<float>(), {1, 10, 2, 20, 3, 30}));
}

TEST(LowerWindow, ResizeLinearHalfPixel) {
  ModelBuilder b(13);
  auto* x = b.input("x", DType::Float32, {1, 1, 1, 2});
  auto* scales = b.const_f32("scales", {4}, {1, 1, 1, 2});
  ir::Node* r = b.node("Resize", {x, nullptr, scales}, {{"y", ir::Type::tensor(DType::Float32, ir::Shape{1, 1, 1, 4})}});
  r->set_attr_string("mode", "linear");
  b.output(r->output());
  auto out = compile_and_run(b.model(), {HostTensor::f32({1, 1, 1, 2}, {0, 4})});
  EXPECT_TRUE(all_close(out[0].values<float>(), {0, 1, 3, 4}));
}

// Resize with antialias (opset 18), linear, downscaling to 2x2: `scales` given at run time gives what
// the same node with constant scales gives. From 5x5 by 0.5 the taps are sized for the bound out/in =
// 0.4 (6 taps where 0.5 needs 4: the extra ones must weigh 0); 4x4 by 0.6 is ONNX 1.23's
// test_resize_downsample_scales_linear_antialias. Scales that do not give the declared 2x2 fail the run.
TEST(LowerWindow, ResizeAntialiasWithRunTimeScales) {
  for (int in : {4, 5}) {
    const float s = in == 4 ? 0.6f : 0.5f;
    auto build = [&](bool runtime) {
      auto b = std::make_unique<ModelBuilder>(19);
      auto* x = b->input("x", DType::Float32, {1, 1, in, in});
      auto* scales = runtime ? b->input("scales", DType::Float32, {4}) : b->const_f32("scales", {4}, {1, 1, s, s});
      ir::Node* r = b->node("Resize", {x, nullptr, scales}, {{"y", ir::Type::tensor(DType::Float32, ir::Shape{1, 1, 2, 2})}});
      r->set_attr_string("mode", "linear");
      r->set_attr_int("antialias", 1);
      b->output(r->output());
      return b;
    };
    HostTensor x = HostTensor::f32({1, 1, in, in}, iota(in * in, 1));
    auto fixed = compile_and_run(build(false)->model(), {x}, "aa_fixed_" + std::to_string(in));
    auto rt = build(true);
    auto lib = compile(rt->model(), "aa_runtime_" + std::to_string(in));
    LoadedModel m(lib.so_path);
    auto got = m.run({x, HostTensor::f32({4}, {1, 1, s, s})});
    EXPECT_TRUE(all_close(got[0].values<float>(), fixed[0].values<float>(), 0, 0)) << in;
    if (in == 4) {
      EXPECT_TRUE(all_close(got[0].values<float>(), {2.875f, 4.5f, 9.375f, 11.0f}));
    }
    EXPECT_THROW(m.run({x, HostTensor::f32({4}, {1, 1, 0.3f, 0.3f})}), std::runtime_error) << in;
  }
}

// One axis of Resize as ONNX's reference computes it: the coordinate x of output o, the ratio t in
// (0, 1] (an integral x prefers its left neighbour: t = 1), n neighbours from ceil(x) − n/2, clamped
// or (exclude_outside) weighted 0 and the rest renormalized; linear or cubic (A = −0.75) weights.
struct ResizeAxis {
  std::vector<int64_t> idx;
  std::vector<double> w;
};
ResizeAxis resize_axis(int64_t o, int64_t in, float scale, bool cubic, bool half_pixel, bool exclude) {
  const double s = scale, x = half_pixel ? (static_cast<double>(o) + 0.5) / s - 0.5 : static_cast<double>(o) / s;
  const double t = x == std::floor(x) ? 1.0 : x - std::floor(x), a = -0.75;
  std::vector<double> c = {1 - t, t};
  if (cubic) {
    const double u = 1 - t;
    c = {((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a, ((a + 2) * t - (a + 3)) * t * t + 1,
         ((a + 2) * u - (a + 3)) * u * u + 1, ((a * (u + 1) - 5 * a) * (u + 1) + 8 * a) * (u + 1) - 4 * a};
  }
  ResizeAxis r;
  const int64_t n = static_cast<int64_t>(c.size()), base = static_cast<int64_t>(std::ceil(x)) - n / 2;
  double total = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t j = base + k;
    if (exclude && (j < 0 || j >= in)) c[static_cast<size_t>(k)] = 0;
    total += c[static_cast<size_t>(k)];
    r.idx.push_back(std::clamp<int64_t>(j, 0, in - 1));
  }
  for (double& e : c) r.w.push_back(exclude ? e / total : e);
  return r;
}

// 2-D linear and cubic Resize, which the kernel computes one axis at a time (W, then H over the W
// results, ONNX's reference order), against the direct form: per output element, the sum over every
// (row, column) neighbour pair of both weights times the input, in double. The input holds a NaN and
// a +inf: every output whose neighbourhood holds one is NaN or ±inf in both (a weight of 0 times inf
// is NaN either way).
TEST(LowerWindow, ResizeSeparableMatchesTheDirectSum) {
  const int64_t N = 2, C = 3, H = 5, W = 4, OH = 12, OW = 12;
  const float sh = 2.4f, sw = 3.f;
  std::vector<float> xv(N * C * H * W);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(static_cast<float>(i) * 0.7f) * 2.f;
  xv[((0 * C + 1) * H + 2) * W + 1] = NAN;
  xv[((1 * C + 2) * H + 4) * W + 3] = INFINITY;
  struct Mode {
    bool cubic, half_pixel, exclude;
  };
  for (Mode m : {Mode{false, true, false}, Mode{true, true, false}, Mode{true, false, true}}) {
    ModelBuilder b(13);
    auto* x = b.input("x", DType::Float32, {N, C, H, W});
    auto* scales = b.const_f32("scales", {4}, {1, 1, sh, sw});
    ir::Node* r = b.node("Resize", {x, nullptr, scales}, {{"y", ir::Type::tensor(DType::Float32, ir::Shape{N, C, OH, OW})}});
    r->set_attr_string("mode", m.cubic ? "cubic" : "linear");
    r->set_attr_string("coordinate_transformation_mode", m.half_pixel ? "half_pixel" : "asymmetric");
    r->set_attr_int("exclude_outside", m.exclude ? 1 : 0);
    b.output(r->output());
    auto out = compile_and_run(b.model(), {HostTensor::f32({N, C, H, W}, xv)}, "resize_separable");
    std::vector<float> expect(static_cast<size_t>(N * C * OH * OW));
    for (int64_t nc = 0; nc < N * C; ++nc)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          ResizeAxis ah = resize_axis(i, H, sh, m.cubic, m.half_pixel, m.exclude);
          ResizeAxis aw = resize_axis(j, W, sw, m.cubic, m.half_pixel, m.exclude);
          double sum = 0;
          for (size_t p = 0; p < ah.idx.size(); ++p)
            for (size_t q = 0; q < aw.idx.size(); ++q)
              sum += ah.w[p] * aw.w[q] * static_cast<double>(xv[static_cast<size_t>((nc * H + ah.idx[p]) * W + aw.idx[q])]);
          expect[static_cast<size_t>((nc * OH + i) * OW + j)] = static_cast<float>(sum);
        }
    int nan = 0;
    for (float e : expect) nan += std::isnan(e);
    EXPECT_GT(nan, 0);
    EXPECT_TRUE(all_close(out[0].values<float>(), expect, 1e-5, 1e-5)) << m.cubic << m.half_pixel << m.exclude;
  }
}

// NaN and ±inf through the max and Lp pools and ReduceMax/Min, as numpy's max and power sums give
// them: a NaN anywhere in a window or reduction makes the result NaN, ±inf count as values. x is
// [1, 2, 3, 21] (rows of 21: the last vector of a row is masked); channel 0 holds one NaN, first,
// in the middle or last of its plane, channel 1 a +inf and a -inf. Each result is checked against
// a naive window loop with NaN-propagating max here.
TEST(LowerWindow, PoolsAndExtremaPassNaNAndInfinity) {
  const int64_t C = 2, H = 3, W = 21;
  ModelBuilder b(13);
  auto* x = b.input("x", DType::Float32, {1, C, H, W});
  b.output(b.op("GlobalMaxPool", {x}, "gmax", DType::Float32, ir::Shape{1, C, 1, 1}));
  b.output(b.op("GlobalLpPool", {x}, "glp", DType::Float32, ir::Shape{1, C, 1, 1}));
  // Windows of 2x3 (unrolled taps, padded, strided) and 3x12 (36 taps: an inline reduction).
  ir::Node* small = b.node("MaxPool", {x}, {{"max_small", ir::Type::tensor(DType::Float32, ir::Shape{1, C, 3, 11})},
                                            {"argmax_small", ir::Type::tensor(DType::Int64, ir::Shape{1, C, 3, 11})}});
  small->set_attr_ints("kernel_shape", {2, 3});
  small->set_attr_ints("strides", {1, 2});
  small->set_attr_ints("pads", {0, 1, 1, 1});
  ir::Node* big = b.node("MaxPool", {x}, {{"max_big", ir::Type::tensor(DType::Float32, ir::Shape{1, C, 1, 10})}});
  big->set_attr_ints("kernel_shape", {3, 12});
  ir::Node* lp = b.node("LpPool", {x}, {{"lp", ir::Type::tensor(DType::Float32, ir::Shape{1, C, 3, 11})}});
  lp->set_attr_ints("kernel_shape", {2, 3});
  lp->set_attr_ints("strides", {1, 2});
  lp->set_attr_ints("pads", {0, 1, 1, 1});
  ir::Node* rmax = b.node("ReduceMax", {x}, {{"rmax", ir::Type::tensor(DType::Float32, ir::Shape{1, C, H, 1})}});
  rmax->set_attr_ints("axes", {3});
  ir::Node* rmin = b.node("ReduceMin", {x}, {{"rmin", ir::Type::tensor(DType::Float32, ir::Shape{1, C, 1, W})}});
  rmin->set_attr_ints("axes", {2});
  for (auto* n : {small, big, lp, rmax, rmin}) b.output(n->output(0));
  b.output(small->output(1));
  auto r = compile(b.model(), "nan_pools");
  LoadedModel lib(r.so_path);

  auto max_nan = [](float a, float v) { return std::isnan(a) || a > v ? a : v; };
  // Window (kernel kh x kw, stride sh x sw, pads top/left pt/pl) over each channel: max or sqrt of
  // the sum of squares, and the flat index of the first maximum (of the first NaN if any).
  struct Pooled {
    std::vector<float> mx, lp;
    std::vector<int64_t> arg;
  };
  auto pool = [&](const std::vector<float>& xv, int kh, int kw, int sh, int sw, int pt, int pl, int oh, int ow) {
    Pooled p;
    for (int c = 0; c < C; ++c)
      for (int i = 0; i < oh; ++i)
        for (int j = 0; j < ow; ++j) {
          float m = -INFINITY;
          double sq = 0;
          int64_t at = -1;
          for (int a = 0; a < kh; ++a)
            for (int e = 0; e < kw; ++e) {
              int y = i * sh - pt + a, z = j * sw - pl + e;
              if (y < 0 || y >= H || z < 0 || z >= W) continue;
              float v = xv[(c * H + y) * W + z];
              sq += double(v) * v;
              if (at < 0 || (!std::isnan(m) && (std::isnan(v) || v > m))) at = (c * H + y) * W + z;
              m = max_nan(m, v);
            }
          p.mx.push_back(m);
          p.lp.push_back(float(std::sqrt(sq)));
          p.arg.push_back(at);
        }
    return p;
  };
  // Equal NaN pattern; infinities equal; finite values within a relative 1e-5.
  auto same = [](const std::vector<float>& got, const std::vector<float>& want) -> ::testing::AssertionResult {
    if (got.size() != want.size()) return ::testing::AssertionFailure() << got.size() << " values, want " << want.size();
    for (size_t i = 0; i < got.size(); ++i) {
      bool ok = std::isnan(want[i]) ? std::isnan(got[i])
                : std::isinf(want[i]) ? got[i] == want[i]
                                      : std::abs(got[i] - want[i]) <= 1e-5f * std::max(1.f, std::abs(want[i]));
      if (!ok) return ::testing::AssertionFailure() << "at " << i << ": " << got[i] << ", want " << want[i];
    }
    return ::testing::AssertionSuccess();
  };
  for (int64_t nan_at : {int64_t{0}, 1 * W + 9, 2 * W + 20}) {  // first, middle, masked tail
    std::vector<float> xv(C * H * W);
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = float((i * 37) % 23) - 11.f;
    xv[nan_at] = NAN;
    xv[H * W + 1 * W + 5] = INFINITY;
    xv[H * W + 2 * W + 20] = -INFINITY;
    auto out = lib.run({HostTensor::f32({1, C, H, W}, xv)});
    SCOPED_TRACE("NaN at " + std::to_string(nan_at));
    std::vector<float> gmax, glp, rmax_want, rmin_want;
    for (int c = 0; c < C; ++c) {
      float m = -INFINITY;
      double sq = 0;
      for (int64_t i = 0; i < H * W; ++i) m = max_nan(m, xv[c * H * W + i]), sq += double(xv[c * H * W + i]) * xv[c * H * W + i];
      gmax.push_back(m);
      glp.push_back(float(std::sqrt(sq)));
      for (int y = 0; y < H; ++y) {
        float rm = -INFINITY;
        for (int z = 0; z < W; ++z) rm = max_nan(rm, xv[(c * H + y) * W + z]);
        rmax_want.push_back(rm);
      }
      for (int z = 0; z < W; ++z) {
        float rn = INFINITY;
        for (int y = 0; y < H; ++y) {
          float v = xv[(c * H + y) * W + z];
          rn = std::isnan(rn) || rn < v ? rn : v;
        }
        rmin_want.push_back(rn);
      }
    }
    EXPECT_TRUE(std::isnan(gmax[0]) && gmax[1] == INFINITY && std::isnan(rmax_want[nan_at / W]));  // the reference itself
    Pooled ps = pool(xv, 2, 3, 1, 2, 0, 1, 3, 11), pb = pool(xv, 3, 12, 1, 1, 0, 0, 1, 10);
    EXPECT_TRUE(same(out[0].values<float>(), gmax));
    EXPECT_TRUE(same(out[1].values<float>(), glp));
    EXPECT_TRUE(same(out[2].values<float>(), ps.mx));
    EXPECT_TRUE(same(out[3].values<float>(), pb.mx));
    EXPECT_TRUE(same(out[4].values<float>(), ps.lp));
    EXPECT_TRUE(same(out[5].values<float>(), rmax_want));
    EXPECT_TRUE(same(out[6].values<float>(), rmin_want));
    EXPECT_EQ(out[7].values<int64_t>(), ps.arg);
  }
}

}  // namespace
}  // namespace onnxc::test
