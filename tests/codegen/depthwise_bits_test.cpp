// The depthwise kernel bit for bit against its sums taken in float32 in the kernel's tap order
// (zero, then each row of taps left to right, each a fused multiply-add where the target has FMA),
// and against the convolution's definition in double. Any other depthwise form (channels in the
// vector lanes for small images, see docs/models.md) must keep these bits. Strides 1 and 2, 3×3
// and 5×5 windows, channel counts that are not multiples of the vector width, small (7×7, 14×14)
// and larger images, a symbolic batch, NaN and infinities in the input. Those sizes take each way
// the kernel groups its vectors of pixels (depthwise_chains): all of a small grid's vectors in one
// group (7×7), a count that divides them (14×14: 14 vectors in groups of 7 on AVX-512), and a
// guarded last group (40×33 with 5×5: 93 vectors); the stride-2 phase rows copied in narrower
// vectors that divide them; and small grids summed several channels at a time, with partial chunks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "codegen/schedule/conv.h"
#include "codegen/target.h"
#include "runnable_targets.h"
#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

struct Case {
  int64_t n = 2, c = 20, h = 7, w = 7, k = 3, s = 1;
  int64_t pad() const { return k / 2; }
  int64_t oh() const { return (h + 2 * pad() - k) / s + 1; }
  int64_t ow() const { return (w + 2 * pad() - k) / s + 1; }
};

// y = b + Σ taps, in float32 (`fused`: fmaf per tap) or in double (`exact`).
std::vector<float> reference(const Case& k, const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b, bool fused,
                             bool exact) {
  std::vector<float> y(k.n * k.c * k.oh() * k.ow());
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t c = 0; c < k.c; ++c)
      for (int64_t i = 0; i < k.oh(); ++i)
        for (int64_t j = 0; j < k.ow(); ++j) {
          float acc = 0.f;
          double sum = 0.0;
          for (int64_t r = 0; r < k.k; ++r)
            for (int64_t q = 0; q < k.k; ++q) {
              const int64_t yi = i * k.s - k.pad() + r, xj = j * k.s - k.pad() + q;
              const bool in = yi >= 0 && yi < k.h && xj >= 0 && xj < k.w;
              const float xv = in ? x[((n * k.c + c) * k.h + yi) * k.w + xj] : 0.f, wv = w[(c * k.k + r) * k.k + q];
              acc = fused ? std::fmaf(wv, xv, acc) : acc + wv * xv;
              if (in) sum += static_cast<double>(xv) * wv;
            }
          y[((n * k.c + c) * k.oh() + i) * k.ow() + j] = exact ? static_cast<float>(sum + b[c]) : acc + b[c];
        }
  return y;
}

// Equal bits, except that any NaN matches any NaN and +0 matches −0 (a sum that starts from zero
// may keep either sign of a zero product, which the bias then absorbs unless it is zero).
bool same_bits(const std::vector<float>& a, const std::vector<float>& e, std::string* first) {
  if (a.size() != e.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if ((std::isnan(a[i]) && std::isnan(e[i])) || a[i] == e[i]) continue;
    char buf[96];
    std::snprintf(buf, sizeof buf, "element %zu: %a vs %a", i, static_cast<double>(a[i]), static_cast<double>(e[i]));
    *first = buf;
    return false;
  }
  return true;
}

void check(const Case& k) {
  ModelBuilder b(13);
  auto* x = b.input("x", DType::Float32, {Dim::symbol("n"), k.c, k.h, k.w});
  auto wv = uniform(k.c * k.k * k.k, 7), bv = uniform(k.c, 11);
  ir::Node* c = b.node("Conv", {x, b.const_f32("w", {k.c, 1, k.k, k.k}, wv), b.const_f32("b", {k.c}, bv)},
                       {{"y", ir::Type::tensor(DType::Float32, ir::Shape{Dim::symbol("n"), k.c, k.oh(), k.ow()})}});
  c->set_attr_ints("kernel_shape", {k.k, k.k});
  c->set_attr_ints("strides", {k.s, k.s});
  c->set_attr_ints("pads", {k.pad(), k.pad(), k.pad(), k.pad()});
  c->set_attr_int("group", k.c);
  b.output(c->output());
  auto xv = uniform(k.n * k.c * k.h * k.w, 3);
  const int64_t plane = k.h * k.w;
  xv[plane / 2] = NAN;                                    // channel 0
  xv[plane + plane - 1] = INFINITY;                       // channel 1, its last pixel
  xv[(k.c - 1) * plane + 3] = -INFINITY;                  // the last channel (a partial vector's lane)
  if (k.n > 1) xv[(k.c + 2) * plane] = INFINITY, xv[(k.c + 2) * plane + 1] = -INFINITY;  // image 1: both (NaN)
  const auto exact = reference(k, xv, wv, bv, false, true);
  const std::string what = std::to_string(k.c) + "ch " + std::to_string(k.h) + "x" + std::to_string(k.w) + " k" + std::to_string(k.k) + " s" +
                           std::to_string(k.s);
  for (const std::string& target : runnable_targets()) {
    auto lib = compile(b.model(), "dw_bits", target);
    auto out = LoadedModel(lib.so_path).run({HostTensor::f32({k.n, k.c, k.h, k.w}, xv)});
    const auto y = out[0].values<float>();
    EXPECT_TRUE(all_close(y, exact, 1e-4, 1e-5)) << target << " " << what;
    // x86-64-avx2 runs here only beside FMA (runnable_targets); "host" is this CPU.
    __builtin_cpu_init();
    const bool fma = target != "host" || __builtin_cpu_supports("fma");
    std::string first;
    EXPECT_TRUE(same_bits(y, reference(k, xv, wv, bv, fma, false), &first)) << target << " " << what << ": " << first;
  }
}

TEST(DepthwiseBits, SameTapOrderAsFloatReference) {
  for (int64_t ch : {20, 37})
    for (int64_t kk : {3, 5})
      for (int64_t s : {1, 2}) {
        Case k;
        k.c = ch, k.k = kk, k.s = s, k.h = k.w = s == 1 ? 7 : 14;
        check(k);
      }
  // 7×7 grids are summed k channels at a time (depthwise_channel_chunk): 100 channels make tasks of
  // whole chunks and a last task with a partial one.
  Case chunked;
  chunked.c = 100, chunked.k = 5;
  check(chunked);
  Case wide;  // 14×14 at stride 1
  wide.c = 24, wide.h = wide.w = 14;
  check(wide);
  Case large;
  large.c = 17, large.h = 40, large.w = 33, large.k = 5;
  check(large);
  // Stride 2 over larger images: phase rows of 56 and 28 floats, copied in 8- and 4-wide vectors
  // (vectorize_planes), as MobileNetV3's and EfficientNet's stride-2 layers.
  for (int64_t kk : {3, 5}) {
    Case strided;
    strided.n = 1, strided.c = 5, strided.h = strided.w = kk == 3 ? 112 : 56, strided.k = kk, strided.s = 2;
    check(strided);
  }
}

// A SiLU epilogue on 7-wide output rows (8 lanes on AVX-512, depthwise_row_lanes) against the same
// depthwise convolution and the SiLU compiled as separate kernels: equal bits, NaN and ±inf included.
TEST(DepthwiseBits, ShortRowEpilogueMatchesTheSeparateOps) {
  const int64_t n = 2, c = 37, h = 7, k = 5;
  const ir::Shape shape{Dim::symbol("n"), c, h, h};
  auto wv = uniform(c * k * k, 7), bv = uniform(c, 11);
  auto xv = uniform(n * c * h * h, 3);
  for (size_t i = 0; i < xv.size(); i += 13) xv[i] *= 40.0f;  // past SiLU's saturation both ways
  xv[5] = NAN, xv[h * h + 6] = INFINITY, xv[2 * h * h] = -INFINITY;
  auto build = [&](ModelBuilder& b, bool silu) {
    auto* x = b.input("x", DType::Float32, shape);
    ir::Node* conv = b.node("Conv", {x, b.const_f32("w", {c, 1, k, k}, wv), b.const_f32("b", {c}, bv)},
                            {{"y", ir::Type::tensor(DType::Float32, shape)}});
    conv->set_attr_ints("kernel_shape", {k, k});
    conv->set_attr_ints("pads", {k / 2, k / 2, k / 2, k / 2});
    conv->set_attr_int("group", c);
    auto* y = conv->output();
    if (silu) y = b.op("Mul", {y, b.op("Sigmoid", {y}, "s", DType::Float32, shape)}, "z", DType::Float32, shape);
    b.output(y);
  };
  ModelBuilder with_silu(13), plain(13), e(13);
  build(with_silu, true);
  build(plain, false);
  auto* y = e.input("y", DType::Float32, shape);
  e.output(e.op("Mul", {y, e.op("Sigmoid", {y}, "s", DType::Float32, shape)}, "z", DType::Float32, shape));
  for (const std::string& target : runnable_targets()) {
    SCOPED_TRACE(target);
    const auto fused = compile_and_run(with_silu.model(), {HostTensor::f32({n, c, h, h}, xv)}, "dw_silu", target)[0].values<float>();
    const auto conv = compile_and_run(plain.model(), {HostTensor::f32({n, c, h, h}, xv)}, "dw_plain", target)[0].values<float>();
    const auto apart = compile_and_run(e.model(), {HostTensor::f32({n, c, h, h}, conv)}, "silu_alone", target)[0].values<float>();
    ASSERT_EQ(fused.size(), apart.size());
    auto bits = [](float v) {
      uint32_t u;
      std::memcpy(&u, &v, sizeof u);
      return u;
    };
    int nan = 0;
    for (size_t i = 0; i < fused.size(); ++i) {
      nan += std::isnan(apart[i]);
      ASSERT_TRUE(std::isnan(fused[i]) ? std::isnan(apart[i]) : bits(fused[i]) == bits(apart[i]))
          << "element " << i << ": " << fused[i] << " fused, " << apart[i] << " apart";
    }
    EXPECT_GT(nan, 0);  // the NaN and the inf-minus-inf windows reached the output
  }
}

// The grouping itself: exact groups where a grid known when compiling allows them, else guarded
// groups of `most` (always for a run-time grid).
TEST(DepthwiseBits, ChainCountsForStaticAndRunTimeGrids) {
  using codegen::depthwise_chains;
  auto is = [](codegen::DepthwiseChains c, int count, bool round_up) { return c.count == count && c.round_up == round_up; };
  EXPECT_TRUE(is(depthwise_chains(77, 16, 4), 5, true));     // 7×7, 5×5 window: 5 vectors, one group
  EXPECT_TRUE(is(depthwise_chains(63, 16, 8), 4, true));     // 7×7, 3×3: 4 vectors
  EXPECT_TRUE(is(depthwise_chains(224, 16, 8), 7, true));    // 14×14, 3×3: 14 vectors, 2 groups of 7
  EXPECT_TRUE(is(depthwise_chains(3192, 16, 8), 8, true));   // 56×57 (stride 2): 200 vectors
  EXPECT_TRUE(is(depthwise_chains(1480, 16, 4), 4, false));  // 93 vectors: 4 does not divide them
  EXPECT_TRUE(is(depthwise_chains(1480, 16, 8), 8, false));  // nor 8, 7, 6, 5 or 4
  EXPECT_TRUE(is(depthwise_chains(252, 8, 4), 4, true));     // AVX2: 32 vectors
  EXPECT_TRUE(is(depthwise_chains(Halide::Expr(Halide::Var("px")), 16, 8), 8, false));
}

// Channels summed together before their output rows: several for small grids known when compiling
// (their planes and sums in a quarter of L1), one for large or run-time grids.
TEST(DepthwiseBits, ChannelChunksForSmallGrids) {
  using codegen::depthwise_channel_chunk;
  codegen::TargetDesc d;
  d.l1d_bytes = 48 << 10;
  EXPECT_EQ(depthwise_channel_chunk(77, d), 8);     // 7×7 with a 5×5 window
  EXPECT_EQ(depthwise_channel_chunk(252, d), 6);    // 14×14 with 5×5
  EXPECT_EQ(depthwise_channel_chunk(1024, d), 1);   // 28×28 and larger
  EXPECT_EQ(depthwise_channel_chunk(Halide::Expr(Halide::Var("px")), d), 1);
}

// Output rows in vectors no wider than needed: 7-wide rows in 8 lanes on AVX-512, 3-wide in 4;
// AVX2's 8 lanes stay; rows of run-time length take whole vectors.
TEST(DepthwiseBits, RowLanesForShortRows) {
  using codegen::depthwise_row_lanes;
  EXPECT_EQ(depthwise_row_lanes(7, 16), 8);
  EXPECT_EQ(depthwise_row_lanes(3, 16), 4);
  EXPECT_EQ(depthwise_row_lanes(14, 16), 16);
  EXPECT_EQ(depthwise_row_lanes(7, 8), 8);
  EXPECT_EQ(depthwise_row_lanes(4, 8), 4);
  EXPECT_EQ(depthwise_row_lanes(Halide::Expr(Halide::Var("w")), 16), 16);
}

}  // namespace
}  // namespace onnxc::test
