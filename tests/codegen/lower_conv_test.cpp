// Convolution lowerings against a plain reference convolution computed here in double: the implicit
// GEMM (any kernel, stride, dilation, padding; partial register blocks and pixel panels; symbolic
// batch and image extents; fused epilogues), grouped and depthwise forms, global pooling over
// symbolic image extents.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "codegen/partition.h"
#include "codegen/schedule/conv.h"
#include "codegen/target.h"
#include "runnable_targets.h"
#include "test_util.h"
#if HAVE_ONNXC_PASSES
#include "passes/fold_batch_norm.h"
#endif

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

struct ConvCase {
  int64_t n = 1, c = 3, h = 7, w = 9, m = 5, kh = 3, kw = 3;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, group = 1;
  std::vector<int64_t> pads = {0, 0, 0, 0};  // top, left, bottom, right
  bool bias = true;
  bool one_d = false;  // a 1-D Conv over [N, C, W] (then h = kh = 1)
  int64_t oh() const { return (h + pads[0] + pads[2] - (dh * (kh - 1) + 1)) / sh + 1; }
  int64_t ow() const { return (w + pads[1] + pads[3] - (dw * (kw - 1) + 1)) / sw + 1; }
};

// The definition: y[n, m, i, j] = b[m] + Σ_{c, r, s} x[n, g·Cg + c, i·sh − pt + r·dh, j·sw − pl + s·dw] · w[m, c, r, s].
std::vector<float> reference(const ConvCase& k, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& b) {
  const int64_t cg = k.c / k.group, mg = k.m / k.group, oh = k.oh(), ow = k.ow();
  std::vector<float> y(k.n * k.m * oh * ow);
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t m = 0; m < k.m; ++m)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double s = k.bias ? b[m] : 0.0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t r = 0; r < k.kh; ++r)
              for (int64_t q = 0; q < k.kw; ++q) {
                int64_t yi = i * k.sh - k.pads[0] + r * k.dh, xj = j * k.sw - k.pads[1] + q * k.dw;
                if (yi < 0 || yi >= k.h || xj < 0 || xj >= k.w) continue;
                int64_t ch = (m / mg) * cg + c;
                s += static_cast<double>(x[((n * k.c + ch) * k.h + yi) * k.w + xj]) *
                     w[((m * cg + c) * k.kh + r) * k.kw + q];
              }
          y[((n * k.m + m) * oh + i) * ow + j] = static_cast<float>(s);
        }
  return y;
}

// Compiles one Conv over x [n?, C, h, w] (n a symbol when `symbolic_batch`) and checks it at the
// case's sizes, on every ISA level this machine runs.
void check_conv(const ConvCase& k, bool symbolic_batch = false, bool specials = false) {
  ModelBuilder b(13);
  Dim n = symbolic_batch ? Dim::symbol("n") : Dim(k.n);
  auto* x = b.input("x", DType::Float32, k.one_d ? ir::Shape{n, k.c, k.w} : ir::Shape{n, k.c, k.h, k.w});
  auto wv = uniform(k.m * (k.c / k.group) * k.kh * k.kw, 7), bv = uniform(k.m, 11);
  std::vector<int64_t> wdims = {k.m, k.c / k.group, k.kh, k.kw};
  if (k.one_d) wdims.erase(wdims.begin() + 2);
  std::vector<ir::Value*> ins = {x, b.const_f32("w", wdims, wv)};
  if (k.bias) ins.push_back(b.const_f32("b", {k.m}, bv));
  ir::Shape yshape = k.one_d ? ir::Shape{n, k.m, k.ow()} : ir::Shape{n, k.m, k.oh(), k.ow()};
  ir::Node* c = b.node("Conv", ins, {{"y", ir::Type::tensor(DType::Float32, yshape)}});
  auto two = [&](int64_t a, int64_t v) { return k.one_d ? std::vector<int64_t>{v} : std::vector<int64_t>{a, v}; };
  c->set_attr_ints("kernel_shape", two(k.kh, k.kw));
  c->set_attr_ints("strides", two(k.sh, k.sw));
  c->set_attr_ints("dilations", two(k.dh, k.dw));
  c->set_attr_ints("pads", k.one_d ? std::vector<int64_t>{k.pads[1], k.pads[3]} : k.pads);
  c->set_attr_int("group", k.group);
  b.output(c->output());
  auto xv = uniform(k.n * k.c * k.h * k.w, 3);
  if (specials) {  // a NaN, an infinity, and both infinities (NaN) in the first channels' planes
    const int64_t plane = k.h * k.w;
    xv[plane / 2] = NAN;
    xv[plane + plane - 1] = INFINITY;
    if (k.c > 2) xv[2 * plane] = -INFINITY, xv[2 * plane + plane / 3] = INFINITY;
  }
  std::vector<int64_t> xdims = {k.n, k.c, k.h, k.w};
  if (k.one_d) xdims.erase(xdims.begin() + 2);
  // Register blocks and vector widths differ per ISA: each level this machine runs is checked.
  for (const std::string& target : runnable_targets()) {
    auto lib = compile(b.model(), "conv", target);
    auto out = LoadedModel(lib.so_path).run({HostTensor::f32(xdims, xv)});
    EXPECT_TRUE(all_close(out[0].values<float>(), reference(k, xv, wv, bv), 1e-4, 1e-5)) << target;
  }
}

TEST(LowerConv, Same3x3) {
  ConvCase k;
  k.pads = {1, 1, 1, 1};
  check_conv(k);
}

TEST(LowerConv, StridedOddSizesNoBias) {
  ConvCase k;
  k.h = 11, k.w = 13, k.sh = 2, k.sw = 2, k.bias = false, k.pads = {1, 1, 1, 1};
  check_conv(k);
}

TEST(LowerConv, DilatedAsymmetricPads) {
  ConvCase k;
  k.h = 12, k.w = 10, k.dh = 2, k.dw = 3, k.pads = {2, 0, 1, 3};
  check_conv(k);
}

TEST(LowerConv, StridedAndDilated) {
  ConvCase k;
  k.h = 17, k.w = 16, k.sh = 2, k.sw = 3, k.dh = 2, k.dw = 2, k.pads = {3, 1, 0, 2};
  check_conv(k);
}

TEST(LowerConv, OneDimensionalStrided) {
  ConvCase k;
  k.one_d = true, k.h = 1, k.kh = 1, k.w = 31, k.kw = 4, k.sw = 2, k.pads = {0, 1, 0, 2};
  check_conv(k);
}

TEST(LowerConv, StridedPointwiseAndWideKernel) {
  ConvCase k;
  k.kh = k.kw = 1, k.sh = k.sw = 2, k.c = 8, k.m = 17;
  check_conv(k);
  ConvCase wide;
  wide.kh = 5, wide.kw = 7, wide.sh = 3, wide.sw = 1, wide.pads = {2, 3, 2, 3};
  check_conv(wide);
}

// More output channels than one register block and more pixels than one panel, neither a multiple
// of the block, over two images of a symbolic batch.
TEST(LowerConv, PartialBlocksSymbolicBatch) {
  ConvCase k;
  k.n = 2, k.c = 16, k.h = 15, k.w = 14, k.m = 70, k.pads = {1, 1, 1, 1};
  check_conv(k, true);
}

// The output computed in tiles of image rows × output channel groups, each tile's products in
// cache (schedule_conv_tiles): a pointwise conv of 200 channels over 37 rows (channel groups with a
// partial last one, a partial last row tile, partial pixel panels in each tile) over a symbolic
// batch of 2, and a strided padded 3×3 conv whose grid rows are wider than the output's.
TEST(LowerConv, TiledRowsAndChannelGroups) {
  ConvCase pw;
  pw.n = 2, pw.c = 24, pw.m = 200, pw.h = 37, pw.w = 30, pw.kh = pw.kw = 1;
  check_conv(pw, true);
  ConvCase strided;
  strided.c = 5, strided.m = 33, strided.h = 41, strided.w = 23, strided.sh = strided.sw = 2, strided.pads = {1, 1, 1, 1};
  check_conv(strided);
}

TEST(LowerConv, GroupedAndDepthwise) {
  ConvCase g;
  g.c = 6, g.m = 4, g.group = 2, g.pads = {1, 1, 1, 1};
  check_conv(g);
  ConvCase dw;
  dw.c = dw.m = dw.group = 8, dw.h = 10, dw.w = 19, dw.sh = dw.sw = 2, dw.pads = {1, 1, 1, 1};
  check_conv(dw);
}

// One output pixel: squeeze-and-excitation's 1×1 FC over a pooled image (a partial panel of output
// channels, a symbolic batch of 2), and a 3×3 window over a 3×3 image with no bias.
TEST(LowerConv, OnePixelMatrixVector) {
  ConvCase fc;
  fc.n = 2, fc.c = 37, fc.h = fc.w = 1, fc.m = 70, fc.kh = fc.kw = 1;
  check_conv(fc, true);
  ConvCase win;
  win.c = 5, win.h = win.w = 3, win.m = 9, win.bias = false;
  check_conv(win);
}

// Whether `k` compiled for `target` takes the channel-vectorized form (conv_channels), asked of the
// same function the lowering asks, with the extents the lowering sees.
bool takes_channel_block(const ConvCase& k, const std::string& target) {
  const Halide::Target t = codegen::parse_target(target);
  const int64_t gw = (k.w + k.pads[1] + k.pads[3] + k.sw - 1) / k.sw;  // a plane's width
  const int64_t grid = k.one_d ? k.ow() : k.oh() * gw;
  const int64_t taps = k.kh * k.kw;
  const bool strided_taps = ((k.sh > 1 && k.kh > 1) || (k.sw > 1 && k.kw > 1)) && k.kw <= 3;
  return codegen::choose_channel_block(k.m, k.c * taps, k.oh() * k.ow(), grid, strided_taps, codegen::describe(t)).has_value();
}

// Small images run vectorized over output channels, pixels as the block's rows (conv_channels): a
// 1×1 conv over 7×7 (many input channels), 3×3 stride 1 and stride 2 (pixel panels on AVX2), a dilated one with
// asymmetric pads, each with output channels not a multiple of the panel (a partial last panel)
// and pixels not a multiple of the block's rows on some ISA; a symbolic batch of 2.
TEST(LowerConv, ChannelVectorizedSmallImages) {
  std::vector<ConvCase> cases;
  ConvCase pw;
  pw.n = 2, pw.c = 512, pw.m = 90, pw.h = pw.w = 7, pw.kh = pw.kw = 1;
  cases.push_back(pw);
  ConvCase s1;
  s1.n = 2, s1.c = 40, s1.m = 94, s1.h = 11, s1.w = 13, s1.pads = {1, 1, 1, 1};
  cases.push_back(s1);
  ConvCase s2;
  s2.n = 2, s2.c = 48, s2.m = 100, s2.h = 21, s2.w = 25, s2.sh = s2.sw = 2, s2.pads = {1, 1, 1, 1};
  cases.push_back(s2);
  ConvCase dil;
  dil.n = 2, dil.c = 36, dil.m = 62, dil.h = 12, dil.w = 10, dil.dh = 2, dil.dw = 3, dil.pads = {2, 0, 1, 3};
  cases.push_back(dil);
  for (const ConvCase& k : cases) {
    for (const std::string& target : runnable_targets()) {
      // Strided 3×3 taps keep the pixel panels on 16-register targets (choose_channel_block).
      const bool strided = k.sh > 1 && codegen::describe(codegen::parse_target(target)).vector_registers <= 16;
      EXPECT_EQ(takes_channel_block(k, target), !strided) << target << " " << k.c << "->" << k.m << " " << k.oh() << "x" << k.ow();
    }
    check_conv(k, true);
  }
  // A large image keeps the pixel panels.
  ConvCase big;
  big.c = 64, big.m = 64, big.h = big.w = 56, big.kh = big.kw = 1;
  for (const std::string& target : runnable_targets()) EXPECT_FALSE(takes_channel_block(big, target)) << target;
}

// The channel-vectorized form with bias, a residual Add and Relu as its epilogue, over a 7×7 image
// (ResNet's last stage, narrowed).
TEST(LowerConv, ChannelVectorizedEpilogue) {
  ConvCase k;
  k.n = 1, k.c = 128, k.m = 112, k.h = k.w = 7, k.pads = {1, 1, 1, 1};
  for (const std::string& target : runnable_targets()) ASSERT_TRUE(takes_channel_block(k, target)) << target;
  ModelBuilder b(13);
  ir::Shape ys{k.n, k.m, k.oh(), k.ow()};
  auto* x = b.input("x", DType::Float32, {k.n, k.c, k.h, k.w});
  auto* res = b.input("res", DType::Float32, ys);
  auto wv = uniform(k.m * k.c * 9, 31), bv = uniform(k.m, 32);
  ir::Node* c = b.node("Conv", {x, b.const_f32("w", {k.m, k.c, 3, 3}, wv), b.const_f32("b", {k.m}, bv)},
                       {{"y", ir::Type::tensor(DType::Float32, ys)}});
  c->set_attr_ints("kernel_shape", {3, 3});
  c->set_attr_ints("pads", k.pads);
  auto* add = b.op("Add", {c->output(), res}, "sum", DType::Float32, ys);
  b.output(b.op("Relu", {add}, "r", DType::Float32, ys));
  EXPECT_EQ(codegen::partition_model(b.model()).steps.size(), 1u);
  auto xv = uniform(k.c * k.h * k.w, 33), rv = uniform(k.m * k.oh() * k.ow(), 34);
  auto expect = reference(k, xv, wv, bv);
  for (size_t i = 0; i < expect.size(); ++i) expect[i] = std::max(expect[i] + rv[i], 0.f);
  for (const std::string& target : runnable_targets()) {
    auto lib = compile(b.model(), "conv_channels_epilogue", target);
    auto out = LoadedModel(lib.so_path).run({HostTensor::f32({k.n, k.c, k.h, k.w}, xv), HostTensor::f32({k.n, k.m, k.oh(), k.ow()}, rv)});
    EXPECT_TRUE(all_close(out[0].values<float>(), expect, 1e-4, 1e-5)) << target;
  }
}

// Depthwise 5×5 windows on a small image (most of a plane's row is padding) over a symbolic batch,
// a dilated one, and a 9×9 window (too large to unroll).
TEST(LowerConv, DepthwiseWindows) {
  ConvCase dw;
  dw.n = 2, dw.c = dw.m = dw.group = 19, dw.h = dw.w = 7, dw.kh = dw.kw = 5, dw.pads = {2, 2, 2, 2};
  check_conv(dw, true);
  ConvCase dil;
  dil.c = dil.m = dil.group = 4, dil.h = 12, dil.w = 9, dil.dh = 2, dil.dw = 3, dil.pads = {2, 3, 1, 0};
  check_conv(dil);
  ConvCase big;
  big.c = big.m = big.group = 3, big.h = 20, big.w = 21, big.kh = big.kw = 9, big.sh = 2, big.pads = {4, 4, 4, 4};
  check_conv(big);
}

// The depthwise sums run four vectors of pixels at a time (independent FMA chains): grids of one
// partial vector, of whole groups of four and with a partial group (on AVX-512 and AVX2), strided and
// 5×5 windows, with NaN and infinities reaching the outputs whose windows hold them.
TEST(LowerConv, DepthwiseInterleavedSums) {
  struct Shape {
    int64_t h, w, k, s;
  };
  for (Shape sh : {Shape{2, 3, 3, 1}, Shape{7, 7, 3, 1}, Shape{14, 14, 5, 1}, Shape{11, 23, 3, 2}, Shape{30, 17, 5, 2}, Shape{9, 40, 3, 1}}) {
    ConvCase dw;
    dw.n = 2, dw.c = dw.m = dw.group = 6, dw.h = sh.h, dw.w = sh.w, dw.kh = dw.kw = sh.k, dw.sh = dw.sw = sh.s;
    const int64_t pad = sh.k / 2;
    dw.pads = {pad, pad, pad, pad};
    check_conv(dw, true, true);
  }
}

// Image extents known only at run time: one library, two sizes; bias, ReLU and a residual Add run
// as the convolution's epilogue.
TEST(LowerConv, SymbolicImageWithEpilogue) {
  ModelBuilder b(13);
  Dim h = Dim::symbol("h"), w = Dim::symbol("w");
  auto* x = b.input("x", DType::Float32, {1, 4, h, w});
  auto* res = b.input("res", DType::Float32, {1, 6, h, w});
  ConvCase k;
  k.c = 4, k.m = 6, k.pads = {1, 1, 1, 1};
  auto wv = uniform(6 * 4 * 9, 5), bv = uniform(6, 9);
  ir::Node* c = b.node("Conv", {x, b.const_f32("w", {6, 4, 3, 3}, wv), b.const_f32("b", {6}, bv)},
                       {{"y", ir::Type::tensor(DType::Float32, ir::Shape{1, 6, h, w})}});
  c->set_attr_ints("kernel_shape", {3, 3});
  c->set_attr_ints("pads", {1, 1, 1, 1});
  auto* relu = b.op("Relu", {c->output()}, "r", DType::Float32, ir::Shape{1, 6, h, w});
  b.output(b.op("Add", {relu, res}, "sum", DType::Float32, ir::Shape{1, 6, h, w}));
  auto result = compile(b.model(), "conv_symbolic");
  // 40×33: several tiles of rows, the last one partial.
  for (auto [hh, ww] : {std::pair<int64_t, int64_t>{5, 8}, {12, 7}, {40, 33}}) {
    k.h = hh, k.w = ww;
    auto xv = uniform(4 * hh * ww, 1), rv = uniform(6 * hh * ww, 2);
    LoadedModel lib(result.so_path);
    auto out = lib.run({HostTensor::f32({1, 4, hh, ww}, xv), HostTensor::f32({1, 6, hh, ww}, rv)});
    auto expect = reference(k, xv, wv, bv);
    for (size_t i = 0; i < expect.size(); ++i) expect[i] = std::max(expect[i], 0.f) + rv[i];
    EXPECT_TRUE(all_close(out[0].values<float>(), expect, 1e-4, 1e-5)) << hh << "x" << ww;
  }
}

// Pads wider than the image: some stride phases hold no input at all (their planes are all halo),
// and whole rows and columns of output read only padding; a 1-D case with a 1-wide input.
TEST(LowerConv, PadsWiderThanTheImage) {
  ConvCase k;
  k.n = 2, k.h = 2, k.w = 3, k.sh = 2, k.sw = 3, k.pads = {4, 5, 3, 2};
  check_conv(k, true);
  ConvCase one;
  one.one_d = true, one.h = 1, one.kh = 1, one.w = 1, one.kw = 3, one.sw = 2, one.pads = {0, 3, 0, 4};
  check_conv(one);
}

// Run-time image extents with asymmetric and dilated halos (extents kept: pads sum to the kernel's
// span less one) over a batch of 2: the halo's rows and columns move with the extents.
TEST(LowerConv, SymbolicImageAsymmetricHalo) {
  for (bool dilated : {false, true}) {
    ModelBuilder b(13);
    Dim h = Dim::symbol("h"), w = Dim::symbol("w");
    ConvCase k;
    k.n = 2, k.c = 5, k.m = 7;
    k.dh = k.dw = dilated ? 2 : 1;
    k.pads = dilated ? std::vector<int64_t>{3, 1, 1, 3} : std::vector<int64_t>{2, 0, 0, 2};
    auto* x = b.input("x", DType::Float32, {2, 5, h, w});
    auto wv = uniform(7 * 5 * 9, 5), bv = uniform(7, 9);
    ir::Node* c = b.node("Conv", {x, b.const_f32("w", {7, 5, 3, 3}, wv), b.const_f32("b", {7}, bv)},
                         {{"y", ir::Type::tensor(DType::Float32, ir::Shape{2, 7, h, w})}});
    c->set_attr_ints("kernel_shape", {3, 3});
    c->set_attr_ints("dilations", {k.dh, k.dw});
    c->set_attr_ints("pads", k.pads);
    b.output(c->output());
    auto result = compile(b.model(), "conv_halo");
    for (auto [hh, ww] : {std::pair<int64_t, int64_t>{1, 1}, {6, 5}, {19, 37}}) {
      k.h = hh, k.w = ww;
      auto xv = uniform(2 * 5 * hh * ww, 1);
      LoadedModel lib(result.so_path);
      auto out = lib.run({HostTensor::f32({2, 5, hh, ww}, xv)});
      EXPECT_TRUE(all_close(out[0].values<float>(), reference(k, xv, wv, bv), 1e-4, 1e-5)) << hh << "x" << ww << " dilated " << dilated;
    }
  }
}

// A depthwise convolution over run-time image extents with a Relu epilogue: channels are grouped
// into tasks by the image's size at run time (150 channels of 5×8 pixels: two tasks, the second
// partial; of 12×7), and rows shorter than a vector are written masked.
TEST(LowerConv, DepthwiseSymbolicImageWithEpilogue) {
  ModelBuilder b(13);
  Dim h = Dim::symbol("h"), w = Dim::symbol("w");
  ConvCase k;
  k.c = k.m = k.group = 150, k.pads = {1, 1, 1, 1};
  auto* x = b.input("x", DType::Float32, {1, k.c, h, w});
  auto wv = uniform(k.m * 9, 5), bv = uniform(k.m, 9);
  ir::Node* c = b.node("Conv", {x, b.const_f32("w", {k.m, 1, 3, 3}, wv), b.const_f32("b", {k.m}, bv)},
                       {{"y", ir::Type::tensor(DType::Float32, ir::Shape{1, k.m, h, w})}});
  c->set_attr_ints("kernel_shape", {3, 3});
  c->set_attr_ints("pads", k.pads);
  c->set_attr_int("group", k.group);
  b.output(b.op("Relu", {c->output()}, "r", DType::Float32, ir::Shape{1, k.m, h, w}));
  for (const std::string& target : runnable_targets()) {
    auto result = compile(b.model(), "dw_symbolic", target);
    for (auto [hh, ww] : {std::pair<int64_t, int64_t>{5, 8}, {12, 7}}) {
      k.h = hh, k.w = ww;
      auto xv = uniform(k.c * hh * ww, 1);
      LoadedModel lib(result.so_path);
      auto out = lib.run({HostTensor::f32({1, k.c, hh, ww}, xv)});
      auto expect = reference(k, xv, wv, bv);
      for (float& e : expect) e = std::max(e, 0.f);
      EXPECT_TRUE(all_close(out[0].values<float>(), expect, 1e-4, 1e-5)) << target << " " << hh << "x" << ww;
    }
  }
}

// A SiLU, x · sigmoid(x), and squeeze-and-excitation's scaling by s[n, c] join the Conv that reads
// them (the pointwise projection, or a depthwise conv): the kernel copies its input once, so the
// Sigmoid and Muls run there, once per element. One kernel each, against the reference on the
// scaled input.
TEST(LowerConv, ChannelScaleJoinsTheConv) {
  for (bool depthwise : {false, true}) {
    ConvCase k;
    k.n = 2, k.c = 12, k.h = 6, k.w = 5, k.m = depthwise ? 12 : 20;
    k.kh = k.kw = depthwise ? 3 : 1, k.group = depthwise ? 12 : 1;
    if (depthwise) k.pads = {1, 1, 1, 1};
    ModelBuilder b(13);
    auto* x = b.input("x", DType::Float32, {k.n, k.c, k.h, k.w});
    auto* sc = b.input("s", DType::Float32, {k.n, k.c, 1, 1});
    auto* sig = b.op("Sigmoid", {x}, "sig", DType::Float32, {k.n, k.c, k.h, k.w});
    auto* silu = b.op("Mul", {x, sig}, "silu", DType::Float32, {k.n, k.c, k.h, k.w});
    auto* xs = b.op("Mul", {silu, sc}, "xs", DType::Float32, {k.n, k.c, k.h, k.w});
    auto wv = uniform(k.m * (k.c / k.group) * k.kh * k.kw, 4), bv = uniform(k.m, 6);
    ir::Node* c = b.node("Conv", {xs, b.const_f32("w", {k.m, k.c / k.group, k.kh, k.kw}, wv), b.const_f32("b", {k.m}, bv)},
                         {{"y", ir::Type::tensor(DType::Float32, ir::Shape{k.n, k.m, k.oh(), k.ow()})}});
    c->set_attr_ints("kernel_shape", {k.kh, k.kw});
    c->set_attr_ints("pads", k.pads);
    c->set_attr_int("group", k.group);
    b.output(c->output());
    EXPECT_EQ(codegen::partition_model(b.model()).steps.size(), 1u) << (depthwise ? "depthwise" : "pointwise");
    auto xv = uniform(k.n * k.c * k.h * k.w, 8), sv = uniform(k.n * k.c, 10);
    std::vector<float> scaled(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) scaled[i] = xv[i] / (1 + std::exp(-xv[i])) * sv[i / (k.h * k.w)];
    for (const std::string& target : runnable_targets()) {
      auto lib = compile(b.model(), "conv_scaled", target);
      auto out = LoadedModel(lib.so_path).run({HostTensor::f32({k.n, k.c, k.h, k.w}, xv), HostTensor::f32({k.n, k.c, 1, 1}, sv)});
      EXPECT_TRUE(all_close(out[0].values<float>(), reference(k, scaled, wv, bv), 1e-4, 1e-5)) << target;
    }
  }
}

// A SiLU after a Conv as exporters write it, Mul(y, Sigmoid(y)): y is read twice, and both nodes run
// as the Conv's epilogue (one kernel), for a pointwise, a 3×3 and a depthwise conv. A Sigmoid that
// is also a graph output keeps its own value: no diamond then.
TEST(LowerConv, SiluDiamondIsTheEpilogue) {
  for (int form = 0; form < 4; ++form) {
    ConvCase k;
    k.n = 1, k.c = 8, k.h = 7, k.w = 9, k.m = 8;
    k.kh = k.kw = form == 0 ? 1 : 3;
    if (form > 0) k.pads = {1, 1, 1, 1};
    if (form == 2) k.group = 8;
    ModelBuilder b(13);
    auto* x = b.input("x", DType::Float32, {k.n, k.c, k.h, k.w});
    auto wv = uniform(k.m * (k.c / k.group) * k.kh * k.kw, 14), bv = uniform(k.m, 15);
    ir::Shape ys{k.n, k.m, k.oh(), k.ow()};
    ir::Node* c = b.node("Conv", {x, b.const_f32("w", {k.m, k.c / k.group, k.kh, k.kw}, wv), b.const_f32("b", {k.m}, bv)},
                         {{"y", ir::Type::tensor(DType::Float32, ys)}});
    c->set_attr_ints("kernel_shape", {k.kh, k.kw});
    c->set_attr_ints("pads", k.pads);
    c->set_attr_int("group", k.group);
    auto* sig = b.op("Sigmoid", {c->output()}, "sig", DType::Float32, ys);
    b.output(b.op("Mul", {c->output(), sig}, "silu", DType::Float32, ys));
    if (form == 3) b.output(sig);
    size_t kernels = codegen::partition_model(b.model()).steps.size();
    if (form == 3) EXPECT_GT(kernels, 1u);  // the Conv alone, then the Sigmoid and the Mul
    else EXPECT_EQ(kernels, 1u) << form;
    auto xv = uniform(k.n * k.c * k.h * k.w, 16);
    auto expect = reference(k, xv, wv, bv);
    for (float& e : expect) e = e / (1 + std::exp(-e));
    for (const std::string& target : runnable_targets()) {
      auto lib = compile(b.model(), "conv_silu", target);
      auto out = LoadedModel(lib.so_path).run({HostTensor::f32({k.n, k.c, k.h, k.w}, xv)});
      EXPECT_TRUE(all_close(out[0].values<float>(), expect, 1e-4, 1e-5)) << target << " form " << form;
    }
  }
}

#if HAVE_ONNXC_PASSES
// Conv → BatchNormalization → Mul → Add → Relu, compiled as written and with the affine maps folded
// into the weights: the same values up to the rounding of the folded weights.
TEST(LowerConv, FoldedBatchNormMatchesUnfolded) {
  auto build = [](ModelBuilder& b) {
    auto* x = b.input("x", DType::Float32, {2, 5, 9, 8});
    auto wv = uniform(7 * 5 * 9, 21);
    ir::Node* c = b.node("Conv", {x, b.const_f32("w", {7, 5, 3, 3}, wv), b.const_f32("b", {7}, uniform(7, 22))},
                         {{"c", ir::Type::tensor(DType::Float32, ir::Shape{2, 7, 9, 8})}});
    c->set_attr_ints("kernel_shape", {3, 3});
    c->set_attr_ints("pads", {1, 1, 1, 1});
    auto var = uniform(7, 23);
    for (float& v : var) v = v * v + 0.1f;
    auto* bn = b.op("BatchNormalization", {c->output(), b.const_f32("g", {7}, uniform(7, 24)),
                    b.const_f32("be", {7}, uniform(7, 25)), b.const_f32("mu", {7}, uniform(7, 26)),
                    b.const_f32("var", {7}, var)}, "bn", DType::Float32, ir::Shape{2, 7, 9, 8});
    auto* mul = b.op("Mul", {bn, b.const_f32("s", {7, 1, 1}, uniform(7, 27))}, "mul", DType::Float32,
                     ir::Shape{2, 7, 9, 8});
    auto* add = b.op("Add", {mul, b.const_f32("t", {7, 1, 1}, uniform(7, 28))}, "add", DType::Float32,
                     ir::Shape{2, 7, 9, 8});
    b.output(b.op("Relu", {add}, "y", DType::Float32, ir::Shape{2, 7, 9, 8}));
  };
  ModelBuilder plain(13), folded(13);
  build(plain);
  build(folded);
  ASSERT_TRUE(passes::fold_batch_norm(folded.model()));
  int convs = 0, others = 0;
  for (const ir::Node* n : folded.model().graph->nodes()) (n->op_type() == "Conv" ? convs : others) += 1;
  EXPECT_EQ(others, 1);  // the Relu; the dead Convs before folding are still there for DCE
  EXPECT_GE(convs, 1);
  auto xv = uniform(2 * 5 * 9 * 8, 29);
  auto a = compile_and_run(plain.model(), {HostTensor::f32({2, 5, 9, 8}, xv)}, "bn_plain");
  auto f = compile_and_run(folded.model(), {HostTensor::f32({2, 5, 9, 8}, xv)}, "bn_folded");
  EXPECT_TRUE(all_close(f[0].values<float>(), a[0].values<float>(), 1e-4, 1e-5));
}
#endif

TEST(LowerConv, GlobalPoolingOverSymbolicImage) {
  ModelBuilder b(13);
  Dim h = Dim::symbol("h"), w = Dim::symbol("w");
  auto* x = b.input("x", DType::Float32, {2, 3, h, w});
  b.output(b.op("GlobalAveragePool", {x}, "avg", DType::Float32, ir::Shape{2, 3, 1, 1}));
  b.output(b.op("GlobalMaxPool", {x}, "max", DType::Float32, ir::Shape{2, 3, 1, 1}));
  b.output(b.op("GlobalLpPool", {x}, "lp", DType::Float32, ir::Shape{2, 3, 1, 1}));
  // Rows narrower than a vector, and one of two vectors and a masked rest (37 wide), on every ISA.
  for (const std::string& target : runnable_targets()) {
    auto result = compile(b.model(), "global_pool_symbolic", target);
    for (auto [hh, ww] : {std::pair<int64_t, int64_t>{4, 5}, {9, 2}, {3, 37}}) {
      auto xv = uniform(6 * hh * ww, 4);
      LoadedModel lib(result.so_path);
      auto out = lib.run({HostTensor::f32({2, 3, hh, ww}, xv)});
      std::vector<float> avg(6), mx(6), lp(6);
      for (int64_t p = 0; p < 6; ++p) {
        double s = 0, sq = 0;
        float m = -INFINITY;
        for (int64_t i = 0; i < hh * ww; ++i) {
          float v = xv[p * hh * ww + i];
          s += v, sq += static_cast<double>(v) * v, m = std::max(m, v);
        }
        avg[p] = static_cast<float>(s / static_cast<double>(hh * ww));
        mx[p] = m;
        lp[p] = static_cast<float>(std::sqrt(sq));
      }
      EXPECT_TRUE(all_close(out[0].values<float>(), avg, 1e-5, 1e-6)) << target << " " << hh << "x" << ww;
      EXPECT_TRUE(all_close(out[1].values<float>(), mx, 0, 0)) << target;
      EXPECT_TRUE(all_close(out[2].values<float>(), lp, 1e-5, 1e-6)) << target;
    }
    // The sums run in vector lanes, each add IEEE: a NaN or an infinity anywhere in a channel's
    // plane reaches its average, maximum and Lp norm (here in the masked last vector of a row).
    const int64_t hh = 6, ww = 21;
    auto xv = uniform(6 * hh * ww, 5);
    xv[4 * ww + 20] = NAN;
    xv[hh * ww + 2 * ww + 18] = INFINITY;
    auto all = LoadedModel(result.so_path).run({HostTensor::f32({2, 3, hh, ww}, xv)});
    auto avg = all[0].values<float>();
    for (int k = 0; k < 3; ++k) {
      auto v = all[k].values<float>();
      EXPECT_TRUE(std::isnan(v[0])) << target << " output " << k << " " << v[0];
      EXPECT_TRUE(std::isinf(v[1]) && v[1] > 0) << target << " output " << k << " " << v[1];
    }
    for (size_t i = 2; i < avg.size(); ++i) EXPECT_TRUE(std::isfinite(avg[i])) << target << " " << i;
  }
}

// Static rows that are not a whole number of vectors (the 7, 14, 28 and 56 of squeeze-and-excitation
// blocks) are summed in one vector as wide as the row; rows of 1-D, 2-D and 3-D images, against a
// double-precision sum, with a NaN, a -inf and both infinities in channels of their own.
TEST(LowerConv, GlobalPoolingOverStaticNarrowRows) {
  const std::vector<std::vector<int64_t>> images = {{7, 7}, {14, 14}, {5, 28}, {3, 56}, {20}, {2, 3, 7}, {4, 1}};
  for (const std::string& target : runnable_targets()) {
    for (const auto& image : images) {
      const int64_t N = 2, C = 5;
      std::vector<int64_t> dims = {N, C};
      dims.insert(dims.end(), image.begin(), image.end());
      int64_t plane = 1;
      for (int64_t d : image) plane *= d;
      ir::Shape in_shape(dims.begin(), dims.end()), out_shape(dims.size(), 1);
      out_shape[0] = N, out_shape[1] = C;
      ModelBuilder b(13);
      auto* x = b.input("x", DType::Float32, in_shape);
      b.output(b.op("GlobalAveragePool", {x}, "avg", DType::Float32, out_shape));
      b.output(b.op("GlobalLpPool", {x}, "lp", DType::Float32, out_shape));
      auto xv = uniform(N * C * plane, 6);
      xv[1 * plane + plane / 2] = NAN;                // image 0, channel 1
      xv[2 * plane] = -INFINITY;                      // channel 2: -inf average, +inf norm
      xv[3 * plane + plane - 1] = INFINITY;           // channel 3: +inf and -inf make NaN
      xv[3 * plane] = -INFINITY;
      auto out = compile_and_run(b.model(), {HostTensor::f32(dims, xv)}, "global_pool_rows", target);
      std::vector<float> avg(N * C), lp(N * C);
      for (int64_t q = 0; q < N * C; ++q) {
        double s = 0, sq = 0;
        for (int64_t i = 0; i < plane; ++i) {
          double v = xv[q * plane + i];
          s += v, sq += v * v;
        }
        avg[q] = static_cast<float>(s / static_cast<double>(plane));
        lp[q] = static_cast<float>(std::sqrt(sq));
      }
      auto a = out[0].values<float>(), l = out[1].values<float>();
      EXPECT_TRUE(std::isnan(a[1]) && std::isnan(l[1])) << target << " " << a[1] << " " << l[1];
      EXPECT_TRUE(std::isinf(a[2]) && a[2] < 0 && std::isinf(l[2]) && l[2] > 0) << target << " " << a[2];
      EXPECT_TRUE(std::isnan(a[3]) && std::isinf(l[3])) << target << " " << a[3] << " " << l[3];
      EXPECT_TRUE(all_close(a, avg, 1e-5, 1e-6)) << target << " plane " << plane;
      EXPECT_TRUE(all_close(l, lp, 1e-5, 1e-6)) << target << " plane " << plane;
    }
  }
}

}  // namespace
}  // namespace onnxc::test
