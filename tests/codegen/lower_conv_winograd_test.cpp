// Winograd F(2×2, 3×3) and F(4×4, 3×3) (lower/conv_winograd.cpp) against the direct convolution
// and a double-precision reference: tiles that overhang the output (odd sizes), padding 1 and
// asymmetric pads, output channels not a multiple of the register block, a symbolic batch, bias /
// ReLU / residual epilogues, NaN and ±inf inputs. The form is forced through ONNXC_CONV_WINOGRAD
// (part of the kernel cache key) and confirmed from the compiled library's symbols.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <utility>

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
  std::vector<int64_t> pads = {1, 1, 1, 1};
  bool symbolic_batch = false, residual = false, relu = true, bias = true;
  bool symbolic_image = false;  // the direct form then: Winograd needs extents known when compiling
  int64_t oh() const { return h + pads[0] + pads[2] - 2; }
  int64_t ow() const { return w + pads[1] + pads[3] - 2; }
};

// y = [Relu](Conv3×3(x, W[, b]) [+ res]).
ir::Model conv3x3(const Case& k, const std::vector<float>& wv, const std::vector<float>& bv) {
  ModelBuilder b(13);
  Dim n = k.symbolic_batch ? Dim::symbol("n") : Dim(k.n);
  Dim h = k.symbolic_image ? Dim::symbol("h") : Dim(k.h), w = k.symbolic_image ? Dim::symbol("w") : Dim(k.w);
  Dim oh = k.symbolic_image ? h : Dim(k.oh()), ow = k.symbolic_image ? w : Dim(k.ow());  // pads 1: the same extents
  ir::Shape xs{n, k.c, h, w}, ys{n, k.m, oh, ow};
  ir::Value* x = b.input("x", DType::Float32, xs);
  ir::Value* res = k.residual ? b.input("res", DType::Float32, ys) : nullptr;
  std::vector<ir::Value*> ins = {x, b.const_f32("w", {k.m, k.c, 3, 3}, wv)};
  if (k.bias) ins.push_back(b.const_f32("b", {k.m}, bv));
  ir::Node* c = b.node("Conv", ins, {{"y", ir::Type::tensor(DType::Float32, ys)}});
  c->set_attr_ints("kernel_shape", {3, 3});
  c->set_attr_ints("pads", k.pads);
  ir::Value* y = c->output();
  if (res) y = b.op("Add", {y, res}, "sum", DType::Float32, ys);
  if (k.relu) y = b.op("Relu", {y}, "relu", DType::Float32, ys);
  b.output(y);
  return std::move(b.model());
}

bool has_symbol(const std::string& so_path, const std::string& name) {
  std::ifstream f(so_path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return bytes.find(name) != std::string::npos;
}

std::vector<float> run(const std::string& so, const Case& k, const std::vector<float>& x, const std::vector<float>& r) {
  LoadedModel lib(so);
  std::vector<HostTensor> ins = {HostTensor::f32({k.n, k.c, k.h, k.w}, x)};
  if (k.residual) ins.push_back(HostTensor::f32({k.n, k.m, k.oh(), k.ow()}, r));
  return lib.run(ins)[0].values<float>();
}

// Compiles with ONNXC_CONV_WINOGRAD = `form` ("0": the direct forms).
std::string compile_form(const ir::Model& m, const std::string& form, const std::string& target) {
  setenv("ONNXC_CONV_WINOGRAD", form.c_str(), 1);
  auto r = compile(m, "conv_wino" + form, target);
  unsetenv("ONNXC_CONV_WINOGRAD");
  return r.so_path;
}

// Max |y − ref| over the reference's root mean square: the error relative to the output's norm.
double norm_error(const std::vector<float>& y, const std::vector<double>& ref) {
  double sq = 0, worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) sq += ref[i] * ref[i], worst = std::max(worst, std::abs(y[i] - ref[i]));
  return worst / std::sqrt(sq / static_cast<double>(ref.size()));
}

void check(const Case& k, bool expect_winograd = true) {
  const int64_t oh = k.oh(), ow = k.ow();
  auto wv = uniform(k.m * k.c * 9, 31), bv = uniform(k.m, 32);
  for (float& v : wv) v *= static_cast<float>(std::sqrt(3.0 / (9.0 * static_cast<double>(k.c))));
  const size_t xn = k.n * k.c * k.h * k.w, yn = k.n * k.m * oh * ow;
  auto xv = uniform(xn, 33), rv = uniform(yn, 34);
  std::vector<double> ref(yn);
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t m = 0; m < k.m; ++m)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double s = k.bias ? bv[m] : 0.0;
          for (int64_t c = 0; c < k.c; ++c)
            for (int64_t ky = 0; ky < 3; ++ky)
              for (int64_t kx = 0; kx < 3; ++kx) {
                const int64_t iy = oy + ky - k.pads[0], ix = ox + kx - k.pads[1];
                if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
                s += static_cast<double>(xv[((n * k.c + c) * k.h + iy) * k.w + ix]) * wv[((m * k.c + c) * 3 + ky) * 3 + kx];
              }
          const size_t i = ((n * k.m + m) * oh + oy) * ow + ox;
          if (k.residual) s += rv[i];
          ref[i] = k.relu ? std::max(s, 0.0) : s;
        }
  // Non-finite inputs: NaN in image 0 channel 0 at (1, 1), +inf in the last image's last channel at
  // its last pixel, −inf in the middle and +inf a row below it (outputs whose window holds both are
  // NaN in the direct form, those holding one ±inf by the weight's sign).
  std::vector<float> special = xv;
  special[1 * k.w + 1] = std::numeric_limits<float>::quiet_NaN();
  special[xn - 1] = std::numeric_limits<float>::infinity();
  special[xn / 2] = -std::numeric_limits<float>::infinity();
  special[xn / 2 + k.w] = std::numeric_limits<float>::infinity();
  const ir::Model model = conv3x3(k, wv, bv);
  for (const std::string& target : runnable_targets()) {
    const std::string direct = compile_form(model, "0", target);
    EXPECT_FALSE(has_symbol(direct, "wino_")) << target;
    // The default (ONNXC_CONV_WINOGRAD unset) is "auto": the same library as the explicit choice.
    unsetenv("ONNXC_CONV_WINOGRAD");
    EXPECT_EQ(has_symbol(compile(model, "conv_default", target).so_path, "wino_"),
              has_symbol(compile_form(model, "auto", target), "wino_"))
        << target;
    const auto yd = run(direct, k, xv, rv), yd_special = run(direct, k, special, rv);
    for (const std::string form : {"2", "4"}) {
      const std::string so = compile_form(model, form, target);
      EXPECT_EQ(has_symbol(so, "wino_"), expect_winograd) << target << " F" << form;
      const auto y = run(so, k, xv, rv);
      ASSERT_EQ(y.size(), yn);
      // F(4×4)'s transforms (entries to 8 and 1/24) lose several times more than F(2×2)'s: with 64
      // input channels the direct form's max error is 2.2e-6 of the output's RMS, F(2×2)'s about as
      // much, F(4×4)'s 1.8e-5.
      const double bound = form == "2" ? 5e-6 : 5e-5;
      const double err = norm_error(y, ref), err_direct = norm_error(yd, ref);
      std::printf("%s F(%s) C=%lld: max error / RMS %.3g (direct %.3g)\n", target.c_str(), form.c_str(),
                  static_cast<long long>(k.c), err, err_direct);
      EXPECT_LT(err, bound) << target << " F" << form << " (direct: " << err_direct << ")";
      EXPECT_TRUE(all_close(y, yd, 1e-3, 1e-4)) << target << " F" << form;
      // IEEE as the direct form: every output is non-finite exactly where the direct form's is, NaN
      // where it is NaN and the same infinity where it is ±inf; finite outputs match closely.
      const auto ys = run(so, k, special, rv);
      size_t nonfinite = 0;
      for (size_t i = 0; i < yn; ++i) {
        const float d = yd_special[i], w = ys[i];
        nonfinite += !std::isfinite(d);
        if (std::isnan(d)) {
          EXPECT_TRUE(std::isnan(w)) << target << " F" << form << " output " << i << ": " << w;
        } else if (std::isinf(d)) {
          EXPECT_EQ(w, d) << target << " F" << form << " output " << i;
        } else {
          EXPECT_NEAR(w, d, 1e-4 + 1e-3 * std::abs(d)) << target << " F" << form << " output " << i;
        }
      }
      EXPECT_GT(nonfinite, 0u);
    }
  }
}

// ResNet-50's 3×3 shape scaled down: padding 1, a residual and ReLU epilogue, whole tiles.
TEST(LowerConvWinograd, PaddedWithResidual) { check({1, 64, 16, 16, 64, {1, 1, 1, 1}, false, true}); }

// Output extents not a multiple of either tile (9×11), channels not a multiple of the block's
// lanes (40 output, 24 input), a symbolic batch of 2.
TEST(LowerConvWinograd, TileTailsAndSymbolicBatch) {
  check({2, 24, 9, 11, 40, {1, 1, 1, 1}, true, false});
  check({2, 16, 7, 7, 70, {1, 1, 1, 1}, true, true, false});
}

// Channels enough that a task holds fewer tile rows than the image (2 of 3 with F(4×4) over a
// 10×10 output), so the last task's tiles do not fill a register block: its rows are guarded.
TEST(LowerConvWinograd, ShortLastTask) { check({1, 256, 10, 10, 256, {1, 1, 1, 1}, false, true}); }

// Asymmetric and no padding, no bias, no activation: a 13×6 input gives a 12×5 output.
TEST(LowerConvWinograd, AsymmetricPadsNoBias) {
  check({1, 24, 13, 6, 40, {1, 0, 0, 1}, false, false, false, false});
  check({1, 32, 10, 12, 32, {0, 0, 0, 0}, false, true, true, true});
}

// Image extents known only at run time keep the direct form, with any override.
TEST(LowerConvWinograd, SymbolicImageKeepsTheDirectForm) {
  Case k{1, 16, 9, 10, 16};
  k.symbolic_image = true;
  check(k, false);
}

// The choice from the target description: ResNet-50's 56×56 and 28×28 layers take F(4×4), its
// 14×14 layer F(2×2), its 7×7 layer of 512 channels (weights grow a²/9 times) the direct form;
// few channels or large images never.
TEST(LowerConvWinograd, ChoosesPerShape) {
  const codegen::TargetDesc d = codegen::describe(Halide::Target("x86-64-linux-avx-avx2-avx512-avx512_skylake-f16c-fma-sse41"));
  EXPECT_EQ(codegen::choose_winograd_tile(64, 64, 56, 56, d), 4);
  EXPECT_EQ(codegen::choose_winograd_tile(128, 128, 28, 28, d), 4);
  EXPECT_EQ(codegen::choose_winograd_tile(256, 256, 14, 14, d), 2);
  EXPECT_EQ(codegen::choose_winograd_tile(512, 512, 7, 7, d), 0);
  EXPECT_EQ(codegen::choose_winograd_tile(8, 64, 56, 56, d), 0);
  // Large images: the transformed input of a whole image would not stay in cache.
  EXPECT_EQ(codegen::choose_winograd_tile(64, 64, 224, 224, d), 0);
  // AVX2 (measured on the same machine with --target x86-64-avx2): the same choices.
  const codegen::TargetDesc d2 = codegen::describe(Halide::Target("x86-64-linux-avx-avx2-f16c-fma-sse41"));
  EXPECT_EQ(codegen::choose_winograd_tile(64, 64, 56, 56, d2), 4);
  EXPECT_EQ(codegen::choose_winograd_tile(128, 128, 28, 28, d2), 4);
  EXPECT_EQ(codegen::choose_winograd_tile(256, 256, 14, 14, d2), 2);
  EXPECT_EQ(codegen::choose_winograd_tile(512, 512, 7, 7, d2), 0);
}

}  // namespace
}  // namespace onnxc::test
