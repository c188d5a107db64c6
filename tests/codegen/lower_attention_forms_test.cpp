// The seeds' attention forms (codegen/lower/attention_forms.cpp): additive (Bahdanau) with a mask
// and a score bias, cosine (NTM) with a per-query sharpness, Nadaraya–Watson kernel pooling; each
// against a double-precision reference of its formula, with both outputs (Y and the weights).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

std::vector<float> wave(int n, float phase, float scale = 1.0f) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = scale * std::sin(1.3f * float(i) + phase);
  return v;
}

// Reference: scores(b, i, s) given, optional keep mask, softmax over s, Y = W·V.
struct Ref {
  std::vector<float> y, w;
};
Ref reference(int B, int T, int S, int Dv, const std::vector<float>& V,
              const std::function<double(int, int, int)>& score, const std::function<bool(int, int, int)>& keep,
              double fill) {
  Ref r{std::vector<float>(B * T * Dv), std::vector<float>(B * T * S)};
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < T; ++i) {
      std::vector<double> sc(S);
      double mx = -INFINITY, sum = 0;
      for (int s = 0; s < S; ++s) mx = std::max(mx, sc[s] = keep(b, i, s) ? score(b, i, s) : fill);
      for (int s = 0; s < S; ++s) sum += (sc[s] = std::exp(sc[s] - mx));
      for (int s = 0; s < S; ++s) r.w[(b * T + i) * S + s] = float(sc[s] / sum);
      for (int d = 0; d < Dv; ++d) {
        double acc = 0;
        for (int s = 0; s < S; ++s) acc += sc[s] / sum * V[(b * S + s) * Dv + d];
        r.y[(b * T + i) * Dv + d] = float(acc);
      }
    }
  return r;
}

ModelBuilder onnxc_builder() {
  ModelBuilder b(17);
  b.model().opset_imports.push_back({"onnxc", 1});
  return b;
}

TEST(LowerAttentionForms, AdditiveWithMaskAndBias) {
  const int B = 2, T = 1, S = 5, A = 4, Dv = 3;
  ModelBuilder b = onnxc_builder();
  Dim s = Dim::symbol("s");
  auto* q = b.input("q", DType::Float32, {B, T, A});
  auto* k = b.input("k", DType::Float32, {B, s, A});
  auto* v = b.input("v", DType::Float32, {B, s, Dv});
  auto* m = b.input("m", DType::Bool, {B, 1, s});
  auto* va = b.const_f32("va", {A}, {0.5f, -1.0f, 0.25f, 2.0f});
  auto* c = b.const_f32("c", {1}, {0.3f});
  ir::Node* n = b.node("AdditiveAttention", {q, k, v, va, m, c},
                       {{"y", ir::Type::tensor(DType::Float32, ir::Shape{B, T, Dv})},
                        {"w", ir::Type::tensor(DType::Float32, ir::Shape{B, T, s})}}, "onnxc");
  n->set_attr_float("mask_fill", -1e10f);
  b.output(n->output(0));
  b.output(n->output(1));
  auto Q = wave(B * T * A, 0.1f), K = wave(B * S * A, 0.7f), V = wave(B * S * Dv, 1.9f, 2.0f);
  std::vector<uint8_t> M = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
  std::vector<float> vv = {0.5f, -1.0f, 0.25f, 2.0f};
  Ref r = reference(B, T, S, Dv, V, [&](int bb, int i, int ss) {
    double acc = 0;
    for (int a = 0; a < A; ++a) acc += vv[a] * std::tanh(double(Q[(bb * T + i) * A + a]) + K[(bb * S + ss) * A + a]);
    return acc + 0.3;
  }, [&](int bb, int, int ss) { return M[bb * S + ss] != 0; }, -1e10);
  auto out = compile_and_run(b.model(), {HostTensor::f32({B, T, A}, Q), HostTensor::f32({B, S, A}, K),
                                         HostTensor::f32({B, S, Dv}, V), HostTensor::make(DType::Bool, {B, 1, S}, M)},
                             "additive");
  EXPECT_TRUE(all_close(out[0].values<float>(), r.y, 1e-5, 1e-6));
  EXPECT_TRUE(all_close(out[1].values<float>(), r.w, 1e-5, 1e-6));
  EXPECT_EQ(out[1].values<float>()[8], 0.0f);  // masked
}

TEST(LowerAttentionForms, CosineWithSharpness) {
  const int B = 2, T = 1, S = 6, Dm = 5;
  ModelBuilder b = onnxc_builder();
  Dim s = Dim::symbol("slots");
  auto* q = b.input("q", DType::Float32, {B, T, Dm});
  auto* mem = b.input("mem", DType::Float32, {B, s, Dm});
  auto* beta = b.input("beta", DType::Float32, {B, 1, 1});  // broadcast to [B, Tq, 1]
  ir::Node* n = b.node("CosineAttention", {q, mem, mem, beta},
                       {{"r", ir::Type::tensor(DType::Float32, ir::Shape{B, T, Dm})},
                        {"w", ir::Type::tensor(DType::Float32, ir::Shape{B, T, s})}}, "onnxc");
  n->set_attr_float("eps", 1e-8f);
  b.output(n->output(0));
  b.output(n->output(1));
  auto Q = wave(B * T * Dm, 0.3f), Mv = wave(B * S * Dm, 2.1f);
  for (int d = 0; d < Dm; ++d) Mv[(1 * S + 2) * Dm + d] = 0;  // an all-zero slot: eps guards the division
  std::vector<float> be = {1.5f, 4.0f};
  Ref r = reference(B, T, S, Dm, Mv, [&](int bb, int i, int ss) {
    double dot = 0, qq = 0, kk = 0;
    for (int d = 0; d < Dm; ++d) {
      double x = Q[(bb * T + i) * Dm + d], y = Mv[(bb * S + ss) * Dm + d];
      dot += x * y, qq += x * x, kk += y * y;
    }
    return be[bb] * dot / std::max(std::sqrt(qq * kk), 1e-8);
  }, [](int, int, int) { return true; }, 0);
  auto out = compile_and_run(b.model(), {HostTensor::f32({B, T, Dm}, Q), HostTensor::f32({B, S, Dm}, Mv),
                                         HostTensor::f32({B, 1, 1}, be)}, "cosine");
  EXPECT_TRUE(all_close(out[0].values<float>(), r.y, 1e-5, 1e-6));
  EXPECT_TRUE(all_close(out[1].values<float>(), r.w, 1e-5, 1e-6));
}

TEST(LowerAttentionForms, NadarayaWatsonKernel) {
  const int N = 4, S = 7;
  ModelBuilder b = onnxc_builder();
  Dim n = Dim::symbol("n"), m = Dim::symbol("m");
  auto* q = b.input("q", DType::Float32, {n, 1, 1});
  auto* k = b.input("k", DType::Float32, {n, m, 1});
  auto* v = b.input("v", DType::Float32, {n, m, 1});
  auto* w = b.const_f32("w", {1}, {1.7f});
  ir::Node* node = b.node("KernelAttention", {q, k, v, w}, {{"y", ir::Type::tensor(DType::Float32, ir::Shape{n, 1, 1})}},
                          "onnxc");
  b.output(node->output(0));
  auto Q = wave(N, 0.2f, 2.0f), K = wave(N * S, 1.1f, 2.0f), V = wave(N * S, 0.5f);
  Ref r = reference(N, 1, S, 1, V, [&](int bb, int, int ss) {
    double d = (double(Q[bb]) - K[bb * S + ss]) * 1.7;
    return -d * d / 2;
  }, [](int, int, int) { return true; }, 0);
  auto out = compile_and_run(b.model(), {HostTensor::f32({N, 1, 1}, Q), HostTensor::f32({N, S, 1}, K),
                                         HostTensor::f32({N, S, 1}, V)}, "nw");
  EXPECT_TRUE(all_close(out[0].values<float>(), r.y, 1e-5, 1e-6));
}

}  // namespace
}  // namespace onnxc::test
