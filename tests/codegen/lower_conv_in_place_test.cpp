// A 1×1 stride-1 unpadded convolution reads its input buffer in place as the GEMM's B operand
// (lower/conv.cpp, in_place_tap). Checked against a plain double reference, and bit for bit against
// the staged form, which the same convolution takes when an elementwise producer is fused into its
// input: Conv(Neg(x), −W) has the same products (a sign flip of both factors is exact) summed in the
// same order. Tails in pixels and output channels, pixel tiles shorter than a panel, symbolic batch
// and image extents (the planes again), a residual Add + Relu epilogue, NaN and ±inf inputs; the
// two-vector panels choose_conv_panel picks where the wide ones overflow L1; register blocks of
// whole image rows, and NaN, ±inf, −0 in the residual.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <utility>

#include "codegen/partition.h"
#include "codegen/schedule/conv.h"
#include "codegen/schedule/target_desc.h"
#include "runnable_targets.h"
#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

struct Case {
  int64_t n, c, h, w, m;
  bool symbolic_batch = false, symbolic_image = false, residual = false;
  // Bit for bit against the staged form. Not for a handful of input channels: the sums are fast-math
  // (LowerContext::reassociable), and LLVM unrolls and reassociates a 5-step reduction differently
  // per load form (last-bit differences in about 4% of the outputs); ResNet's K >= 64 stays a loop.
  bool bitwise = true;
};

// y = Relu(Conv1x1(x, W, b) [+ res]); with `negate`, Conv(Neg(x), −W) instead.
ir::Model pointwise(const Case& k, const std::vector<float>& wv, const std::vector<float>& bv, bool negate) {
  ModelBuilder b(13);
  Dim n = k.symbolic_batch ? Dim::symbol("n") : Dim(k.n);
  Dim h = k.symbolic_image ? Dim::symbol("h") : Dim(k.h), w = k.symbolic_image ? Dim::symbol("w") : Dim(k.w);
  ir::Shape xs{n, k.c, h, w}, ys{n, k.m, h, w};
  ir::Value* x = b.input("x", DType::Float32, xs);
  ir::Value* res = k.residual ? b.input("res", DType::Float32, ys) : nullptr;
  std::vector<float> weights = wv;
  if (negate) {
    x = b.op("Neg", {x}, "negx", DType::Float32, xs);
    for (float& e : weights) e = -e;
  }
  ir::Node* c = b.node("Conv", {x, b.const_f32("w", {k.m, k.c, 1, 1}, weights), b.const_f32("b", {k.m}, bv)},
                       {{"y", ir::Type::tensor(DType::Float32, ys)}});
  c->set_attr_ints("kernel_shape", {1, 1});
  ir::Value* y = c->output();
  if (res) y = b.op("Add", {y, res}, "sum", DType::Float32, ys);
  b.output(b.op("Relu", {y}, "relu", DType::Float32, ys));
  return std::move(b.model());
}

// Whether the library holds the staged form's parallel plane copy (its closure's symbol).
bool has_planes(const std::string& so_path) {
  std::ifstream f(so_path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return bytes.find("conv_phases") != std::string::npos;
}

void check(const Case& k, bool expect_in_place) {
  auto wv = uniform(k.m * k.c, 21), bv = uniform(k.m, 22);
  ir::Model direct = pointwise(k, wv, bv, false), staged = pointwise(k, wv, bv, true);
  // One kernel each: the Neg runs inside the staged conv's plane copy.
  ASSERT_EQ(codegen::partition_model(staged).steps.size(), 1u);
  ASSERT_EQ(codegen::partition_model(direct).steps.size(), 1u);
  const size_t xn = k.n * k.c * k.h * k.w, yn = k.n * k.m * k.h * k.w;
  auto xv = uniform(xn, 23), rv = uniform(yn, 24);
  // The reference on finite inputs; then NaN, ±inf and −0 in a few channels and pixels (the last
  // pixel of the last channel of the last image too: the edge of the buffer).
  std::vector<float> special = xv;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  special[0] = nan, special[xn / 2] = inf, special[xn / 3] = -inf, special[xn - 1] = nan, special[7 % xn] = -0.0f;
  // The residual too (added in the epilogue): NaN, ±inf and −0 at a few places, the last output too.
  std::vector<float> rspecial = rv;
  if (k.residual) rspecial[yn - 1] = nan, rspecial[yn / 2] = -inf, rspecial[yn / 5] = inf, rspecial[1] = -0.0f;
  std::vector<float> expect(yn);
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t m = 0; m < k.m; ++m)
      for (int64_t p = 0; p < k.h * k.w; ++p) {
        double s = bv[m];
        for (int64_t c = 0; c < k.c; ++c) s += static_cast<double>(xv[(n * k.c + c) * k.h * k.w + p]) * wv[m * k.c + c];
        const size_t i = (n * k.m + m) * k.h * k.w + p;
        if (k.residual) s += rv[i];
        expect[i] = static_cast<float>(std::max(s, 0.0));
      }
  std::vector<int64_t> xd = {k.n, k.c, k.h, k.w}, yd = {k.n, k.m, k.h, k.w};
  for (const std::string& target : runnable_targets()) {
    auto a = compile(direct, "conv_in_place", target), s = compile(staged, "conv_staged", target);
    EXPECT_EQ(has_planes(a.so_path), !expect_in_place) << target;
    EXPECT_TRUE(has_planes(s.so_path)) << target;
    LoadedModel la(a.so_path), ls(s.so_path);
    for (const auto* in : {&xv, &special}) {
      std::vector<HostTensor> ins = {HostTensor::f32(xd, *in)};
      if (k.residual) ins.push_back(HostTensor::f32(yd, in == &xv ? rv : rspecial));
      auto ya = la.run(ins)[0].values<float>(), ys = ls.run(ins)[0].values<float>();
      ASSERT_EQ(ya.size(), yn);
      ASSERT_EQ(ys.size(), yn);
      size_t differ = 0, nans = 0;
      for (size_t i = 0; i < yn; ++i) {
        // A NaN's sign and payload follow its operands (−x carries the flipped sign): NaN matches NaN.
        if (std::isnan(ya[i]) || std::isnan(ys[i])) {
          differ += std::isnan(ya[i]) != std::isnan(ys[i]);
          nans += std::isnan(ya[i]);
          continue;
        }
        differ += std::memcmp(&ya[i], &ys[i], sizeof(float)) != 0;
      }
      if (k.bitwise) {
        EXPECT_EQ(differ, 0u) << target << (in == &xv ? " finite" : " special");
      }
      if (in == &xv) {
        EXPECT_TRUE(all_close(ya, expect, 1e-4, 1e-5)) << target;
      } else {
        EXPECT_GT(nans, 0u) << target;  // image 0's pixel 0 is NaN in every output channel
      }
    }
  }
}

// ResNet-50's layer1 1×1 shape scaled down: whole panels and tiles, a residual epilogue.
TEST(LowerConvInPlace, WholePanelsWithResidual) { check({1, 64, 28, 16, 48, false, false, true}, true); }

// Pixels not a multiple of a panel (the last panel shifted inwards), output channels not a multiple
// of the register block, a last row tile shorter than a panel, a symbolic batch of 2.
TEST(LowerConvInPlace, TailsAndSymbolicBatch) {
  check({2, 24, 35, 30, 70, true, false, true}, true);
  check({3, 32, 9, 11, 7, true, false, false}, true);
  check({3, 5, 9, 11, 7, true, false, false, false}, true);
}

// ResNet-50's layer3 1×1 expansion (K = 256 over 14×14) with fewer output channels: on AVX-512 its
// 48-pixel panels overflow L1 and it takes 32-pixel panels of 12 rows (choose_conv_panel), a
// partial last register block (100 = 8·12 + 4), a residual; and a symbolic batch of 2.
TEST(LowerConvInPlace, TwoVectorPanelsWhereWideOnesOverflowL1) {
  check({1, 256, 14, 14, 100, false, false, true}, true);
  check({2, 256, 14, 14, 36, true, false, false}, true);
}

// The implicit GEMM's pixel panels (choose_conv_panel): two vectors only where the three-vector
// panel of the input overflows L1, the two-vector one fits and wastes fewer lanes.
TEST(LowerConvInPlace, PanelsNarrowOnlyWhereTheWideOnesOverflowL1) {
  const codegen::TargetDesc d = codegen::describe(Halide::Target("x86-64-linux-avx-avx2-avx512-avx512_skylake-f16c-fma-sse41"));
  EXPECT_EQ(codegen::choose_conv_panel(196, 256, d).width, 32);  // 14×14, K = 256: 7 panels of 32
  EXPECT_EQ(codegen::choose_conv_panel(196, 256, d).rows, 12);
  EXPECT_EQ(codegen::choose_conv_panel(3136, 256, d).width, 64);  // 56×56: 49 whole panels of 64
  EXPECT_EQ(codegen::choose_conv_panel(196, 128, d).width, 48);   // fits L1
  EXPECT_EQ(codegen::choose_conv_panel(196, 1024, d).width, 48);  // neither fits
  const codegen::TargetDesc d2 = codegen::describe(Halide::Target("x86-64-linux-avx-avx2-f16c-fma-sse41"));
  EXPECT_EQ(codegen::choose_conv_panel(196, 256, d2).width, codegen::choose_panel(196, d2).width);
}

// Register blocks of whole image rows stored straight from the accumulators
// (schedule_conv_row_blocks; on AVX-512 2 rows of 56 and 4 rows of 28 pixels, K <= 64 so the input
// stays in L1), bit for bit against the staged form's flat panels: a partial last register block
// of channels (40 and 50 are not multiples of 3), several row tiles, a residual with NaN/inf/−0, a
// symbolic batch.
TEST(LowerConvInPlace, WholeRowBlocksWithResidual) {
  check({2, 64, 8, 56, 40, true, false, true}, true);
  check({1, 64, 12, 28, 50, false, false, true}, true);
  check({1, 48, 4, 56, 7, false, false, false}, true);
}

// Extents known only at run time, or an image smaller than a panel: the staged planes, as before.
TEST(LowerConvInPlace, SymbolicOrSmallImagesKeepThePlanes) {
  check({2, 16, 13, 21, 33, true, true, true}, false);
  check({1, 8, 3, 5, 6, false, false, false}, false);
}

}  // namespace
}  // namespace onnxc::test
