// onnxc.DynamicQuantMatMul (the int8 kernel of `--quantize dynamic-int8`): the compiled kernel
// computes exactly the int8 arithmetic it promises (checked against the same arithmetic done here in
// scalar C++), stays close to the float32 product, and turns a row holding NaN or ±inf into NaN.
// Shapes cover K not a multiple of 4, N not a multiple of the column block, M not a multiple of
// the row block, and a run-time M.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runnable_targets.h"
#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

constexpr int64_t K = 70, N = 45;
const float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

struct Weights {
  std::vector<float> w;  // float weight [K, N]
  std::vector<int8_t> q;  // per-column int8
  std::vector<float> s;   // per-column scale
};

Weights make_weights() {
  Weights r;
  r.w.resize(K * N);
  for (int64_t i = 0; i < K * N; ++i) r.w[i] = std::sin(0.37f * float(i)) * (1.0f + float(i % N) / N);
  r.q.resize(K * N);
  r.s.resize(N);
  for (int64_t n = 0; n < N; ++n) {
    float amax = 0;
    for (int64_t k = 0; k < K; ++k) amax = std::max(amax, std::fabs(r.w[k * N + n]));
    r.s[n] = amax / 127.0f;
    for (int64_t k = 0; k < K; ++k) r.q[k * N + n] = static_cast<int8_t>(std::nearbyint(r.w[k * N + n] / r.s[n]));
  }
  return r;
}

// The promised arithmetic, one row at a time, in the kernel's order of float operations.
std::vector<float> emulate(const std::vector<float>& a, int64_t m_ext, const Weights& wt) {
  std::vector<float> y(m_ext * N);
  for (int64_t m = 0; m < m_ext; ++m) {
    float lo = kInf, hi = -kInf;
    for (int64_t k = 0; k < K; ++k) {
      float x = a[m * K + k];
      lo = std::min(lo, std::isfinite(x) ? x : kInf);
      hi = std::max(hi, std::isfinite(x) ? x : kInf);
    }
    float step = (hi * 0.5f - lo * 0.5f) / 127.5f;
    float recip = 1.0f / step;
    float inv2 = step > 0 && std::isfinite(recip) ? recip * 2.0f : 0.0f;
    for (int64_t n = 0; n < N; ++n) {
      int32_t acc = 0, colsum = 0;
      for (int64_t k = 0; k < K; ++k) {
        float q = std::min(255.0f, std::max(0.0f, std::nearbyint((a[m * K + k] * 0.5f - lo * 0.5f) * inv2)));
        acc += static_cast<int32_t>(static_cast<uint8_t>(q)) * wt.q[k * N + n];
        colsum += wt.q[k * N + n];
      }
      float t = std::max(std::fabs(lo), std::fabs(hi)) > 1e30f ? 0x1p-64f : 1.0f;
      float v = wt.s[n] * ((step * t) * static_cast<float>(acc) + (lo * t) * static_cast<float>(colsum)) * (1.0f / t);
      y[m * N + n] = std::isfinite(hi) ? v : kNaN;
    }
  }
  return y;
}

ir::Model quant_model() {
  ModelBuilder b;
  Dim m = Dim::symbol("m");
  Weights wt = make_weights();
  auto* a = b.input("a", DType::Float32, {m, K});
  ir::Tensor q(DType::Int8, {K, N});
  std::copy(wt.q.begin(), wt.q.end(), q.mutable_data<int8_t>());
  auto* qw = b.constant("qw", q);
  auto* sw = b.const_f32("sw", {N}, wt.s);
  b.output(b.node("DynamicQuantMatMul", {a, qw, sw}, {{"y", ir::Type::tensor(DType::Float32, ir::Shape{m, N})}}, "onnxc")
               ->output(0));
  return std::move(b.model());
}

std::vector<float> rows(int64_t m_ext) {
  std::vector<float> a(m_ext * K);
  for (int64_t i = 0; i < m_ext * K; ++i) a[i] = std::cos(0.11f * float(i)) * 3.0f + (i % 7 == 0 ? 2.0f : 0.0f);
  return a;
}

// On every ISA this machine runs (the blocks differ: AVX-512 48 × 8 with vpdpbusd where the CPU has
// VNNI, AVX2 16 × 5 through int16 pairs and vpmaddwd).
TEST(LowerQuantMatMul, MatchesTheInt8ArithmeticAndStaysNearFloat) {
  ir::Model model = quant_model();
  Weights wt = make_weights();
  for (const std::string& target : runnable_targets())
  for (int64_t m_ext : {1, 13, 40}) {
    SCOPED_TRACE(target);
    std::vector<float> a = rows(m_ext);
    if (m_ext == 40) {
      std::fill(a.begin() + 2 * K, a.begin() + 3 * K, 0.0f);   // an all-zero row
      std::fill(a.begin() + 3 * K, a.begin() + 4 * K, -1.5f);  // a constant row
      for (int64_t k = 0; k < K; ++k) a[5 * K + k] = k % 2 ? 1e-3f : 0.0f;  // one-sided, small
    }
    auto out = compile_and_run(model, {HostTensor::f32({m_ext, K}, a)}, "quant_matmul", target);
    std::vector<float> got = out[0].values<float>(), want = emulate(a, m_ext, wt);
    ASSERT_EQ(got.size(), want.size());
    double diff2 = 0, ref2 = 0;
    for (int64_t m = 0; m < m_ext; ++m) {
      for (int64_t n = 0; n < N; ++n) {
        size_t i = static_cast<size_t>(m * N + n);
        EXPECT_NEAR(got[i], want[i], 1e-5f * (1.0f + std::fabs(want[i]))) << "m=" << m << " n=" << n;
        if (m_ext == 40 && m >= 2 && m <= 5) continue;  // the special rows: exact, checked above
        double f = 0;
        for (int64_t k = 0; k < K; ++k) f += double(a[m * K + k]) * wt.w[k * N + n];
        diff2 += (got[i] - f) * (got[i] - f), ref2 += f * f;
      }
    }
    // 8-bit steps on both operands; this data cancels a lot (sin patterns), so a few percent.
    EXPECT_LT(std::sqrt(diff2 / ref2), 0.05) << "int8 result too far from float32 at M=" << m_ext;
  }
}

// A finite row whose range is wider than FLT_MAX (hi - lo overflows) is still quantized: no NaN.
// Each row is scaled so that its true products stay finite; the smaller scales take the ordinary path.
TEST(LowerQuantMatMul, RowsSpanningMoreThanFltMaxStayFinite) {
  const float big = std::numeric_limits<float>::max();
  for (float scale : {1e-10f, 1e-8f, 0.25f, 0.6f, 1.0f}) {
    std::vector<float> a(2 * K, 0.0f);
    a[0] = big * scale, a[1] = -0.8f * big * scale, a[2] = 1e30f * scale;  // zeros are not at a rounding tie
    for (int64_t k = 2; k < K; ++k) a[K + k] = 1e36f * scale * std::sin(0.3f * float(k));
    a[K + 0] = -0.9f * big * scale, a[K + 1] = 0.7f * big * scale;
    auto out = compile_and_run(quant_model(), {HostTensor::f32({2, K}, a)}, "quant_matmul_wide");
    Weights wt = make_weights();
    std::vector<float> got = out[0].values<float>(), want = emulate(a, 2, wt);
    int checked = 0;
    for (int64_t i = 0; i < 2 * N; ++i) {
      double exact = 0;
      for (int64_t k = 0; k < K; ++k) exact += double(a[(i / N) * K + k]) * wt.w[k * N + i % N];
      if (std::fabs(exact) > 0.5 * big) continue;  // the true sum (nearly) overflows float32
      ++checked;
      ASSERT_TRUE(std::isfinite(want[i])) << i << " scale " << scale;
      EXPECT_NEAR(got[i], want[i], 1e-5f * std::fabs(want[i])) << i << " scale " << scale;
    }
    EXPECT_GE(checked, 10) << "scale " << scale;
  }
}

TEST(LowerQuantMatMul, NonFiniteRowsGiveNaNRows) {
  std::vector<float> a = rows(3);
  a[0 * K + 5] = kNaN;
  a[1 * K + 69] = kInf;
  auto out = compile_and_run(quant_model(), {HostTensor::f32({3, K}, a)}, "quant_matmul_nan");
  std::vector<float> y = out[0].values<float>();
  for (int64_t n = 0; n < N; ++n) {
    EXPECT_TRUE(std::isnan(y[0 * N + n])) << n;
    EXPECT_TRUE(std::isnan(y[1 * N + n])) << n;
    EXPECT_TRUE(std::isfinite(y[2 * N + n])) << n;
  }
}

}  // namespace
}  // namespace onnxc::test
