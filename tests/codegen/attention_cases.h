// Shared by the fused Attention kernel's tests (lower_attention_test.cpp, lower_attention_forms_test.cpp):
// a case in 4-D terms, the ONNX reference, and the model of one Attention node built for a case.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ir/onnxc_attrs.h"
#include "test_util.h"

namespace onnxc::test::attention_cases {

using ir::DType;
using ir::Dim;
using ir::Shape;

inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();
inline constexpr float kFloatMin = -std::numeric_limits<float>::max();

inline std::vector<float> wave(size_t n, float freq, float amp = 1.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = amp * std::sin(static_cast<float>(i) * freq + 0.3f);
  return v;
}

// A case in 4-D terms; 3-D layouts are converted by the test.
struct Case {
  int b = 1, hq = 2, hkv = 2, sq = 5, skv = 5, past = 0, dk = 8, dv = 8;
  bool causal = false;
  std::optional<float> scale;
  float softcap = 0;
  // Mask: shape (right-aligned to [b, hq, sq, total]) and values; bool masks as 0/1.
  std::vector<int64_t> mask_dims;
  std::vector<float> mask;
  bool mask_bool = false;
  bool masked_rows_nan = false;  // the attribute onnxc's fusion sets (ir::kMaskedRowsNan)
  std::vector<int64_t> nonpad;   // nonpad_kv_seqlen per batch entry (opset 24); empty: absent
  int left_window = -1, right_window = -1;  // opset 25
  bool past_inputs = false;                  // give past_key/past_value even when past is 0 (empty)
  int total() const { return past + skv; }
};

// The ONNX reference: scores in f32 (so finfo.min masks behave as a float32 graph computes them),
// softmax and the weighted sum in double. A row whose scores are all -inf gives 0 (ONNX 1.23), or
// NaN with masked_rows_nan. `qk`, when given, receives qk_matmul_output [b, hq, sq, total] for mode
// `qk_mode` (0: scaled Q·Kᵀ, 1: after softcap, 2: after softcap and mask, 3: weights).
inline std::vector<float> reference(const Case& c, const std::vector<float>& q, const std::vector<float>& k,
                             const std::vector<float>& v, const std::vector<float>& pk,
                             const std::vector<float>& pv, std::vector<float>* qk = nullptr, int qk_mode = 3) {
  int T = c.total(), rep = c.hq / c.hkv;
  float scale = c.scale ? *c.scale : 1.0f / std::sqrt(static_cast<float>(c.dk));
  auto K = [&](int b, int h, int t, int d) {
    return t < c.past ? pk[((b * c.hkv + h) * c.past + t) * c.dk + d] : k[((b * c.hkv + h) * c.skv + t - c.past) * c.dk + d];
  };
  auto V = [&](int b, int h, int t, int d) {
    return t < c.past ? pv[((b * c.hkv + h) * c.past + t) * c.dv + d] : v[((b * c.hkv + h) * c.skv + t - c.past) * c.dv + d];
  };
  auto mask_at = [&](int b, int h, int i, int t) -> std::optional<float> {
    if (c.mask_dims.empty()) return std::nullopt;
    int r = static_cast<int>(c.mask_dims.size());
    int full[4] = {b, h, i, t};
    int64_t off = 0;
    for (int a = 0; a < r; ++a) {
      int64_t e = c.mask_dims[a], x = full[4 - r + a];
      if (a == r - 1 && x >= e) return c.mask_bool ? 0.0f : kNegInf;  // padded
      off = off * e + (e == 1 ? 0 : x);
    }
    return c.mask[off];
  };
  std::vector<float> y(static_cast<size_t>(c.b) * c.hq * c.sq * c.dv);
  if (qk) qk->assign(static_cast<size_t>(c.b) * c.hq * c.sq * T, 0.0f);
  for (int b = 0; b < c.b; ++b)
    for (int h = 0; h < c.hq; ++h)
      for (int i = 0; i < c.sq; ++i) {
        std::vector<float> s(T);
        for (int t = 0; t < T; ++t) {
          float dot = 0;
          for (int d = 0; d < c.dk; ++d) dot += q[((b * c.hq + h) * c.sq + i) * c.dk + d] * K(b, h / rep, t, d);
          float x = dot * scale;
          size_t row = (static_cast<size_t>(b) * c.hq + h) * c.sq + i;
          if (qk && qk_mode == 0) (*qk)[row * T + t] = x;
          if (c.softcap > 0) x = c.softcap * std::tanh(x / c.softcap);
          if (qk && qk_mode == 1) (*qk)[row * T + t] = x;
          auto m = mask_at(b, h, i, t);
          if (m && c.mask_bool) x = *m != 0 ? x : kNegInf;
          else if (m) x = x + *m;
          // Causal and window masks align query i to key i + offset: the past length, or with
          // nonpad_kv_seqlen nonpad[b] - sq; keys at or past nonpad[b] are padding.
          int offset = c.nonpad.empty() ? c.past : static_cast<int>(c.nonpad[b]) - c.sq;
          if (c.causal && t > i + offset) x = kNegInf;
          if (c.left_window >= 0 && i + offset - t > c.left_window) x = kNegInf;
          if (c.right_window >= 0 && t - (i + offset) > c.right_window) x = kNegInf;
          if (!c.nonpad.empty() && t >= c.nonpad[b]) x = kNegInf;
          if (qk && qk_mode == 2) (*qk)[row * T + t] = x;
          s[t] = x;
        }
        double mx = -INFINITY, sum = 0;
        for (float x : s) mx = std::max(mx, double(x));
        std::vector<double> p(T);
        for (int t = 0; t < T; ++t) sum += p[t] = mx == -INFINITY ? 0.0 : std::exp(double(s[t]) - mx);
        if (sum == 0) sum = c.masked_rows_nan ? NAN : INFINITY;  // a fully masked row
        if (qk && qk_mode == 3)
          for (int t = 0; t < T; ++t) (*qk)[((static_cast<size_t>(b) * c.hq + h) * c.sq + i) * T + t] = float(p[t] / sum);
        for (int d = 0; d < c.dv; ++d) {
          double acc = 0;
          for (int t = 0; t < T; ++t) acc += p[t] / sum * V(b, h / rep, t, d);
          y[((b * c.hq + h) * c.sq + i) * c.dv + d] = static_cast<float>(acc);
        }
      }
  return y;
}

// [b, h, s, d] -> [b, s, h*d]
inline std::vector<float> to_3d(const std::vector<float>& x, int b, int h, int s, int d) {
  std::vector<float> y(x.size());
  for (int i = 0; i < b; ++i)
    for (int j = 0; j < h; ++j)
      for (int t = 0; t < s; ++t)
        for (int e = 0; e < d; ++e) y[((i * s + t) * h + j) * d + e] = x[((i * h + j) * s + t) * d + e];
  return y;
}

struct Built {
  ir::Model model;
  std::vector<HostTensor> inputs;
  std::vector<float> q, k, v, pk, pv;
};

// One Attention node for case c, inputs filled deterministically; `three_d` uses [b, s, h*d] layouts.
// qk_mode >= 0 also returns qk_matmul_output in that mode (outputs 1 and 2 omitted unless present).
inline Built attention_model(const Case& c, bool three_d, bool present_outputs = false, int qk_mode = -1) {
  Built r;
  ModelBuilder mb(23);
  r.q = wave(static_cast<size_t>(c.b) * c.hq * c.sq * c.dk, 0.37f);
  r.k = wave(static_cast<size_t>(c.b) * c.hkv * c.skv * c.dk, 0.11f, 1.5f);
  r.v = wave(static_cast<size_t>(c.b) * c.hkv * c.skv * c.dv, 0.05f);
  auto add_in = [&](const std::string& name, const std::vector<float>& x, int h, int s, int d) {
    Shape shp = three_d ? Shape{c.b, s, h * d} : Shape{c.b, h, s, d};
    std::vector<int64_t> dims = three_d ? std::vector<int64_t>{c.b, s, h * d} : std::vector<int64_t>{c.b, h, s, d};
    r.inputs.push_back(HostTensor::f32(dims, three_d ? to_3d(x, c.b, h, s, d) : x));
    return mb.input(name, DType::Float32, shp);
  };
  std::vector<ir::Value*> ins = {add_in("q", r.q, c.hq, c.sq, c.dk), add_in("k", r.k, c.hkv, c.skv, c.dk),
                                 add_in("v", r.v, c.hkv, c.skv, c.dv)};
  if (!c.mask_dims.empty()) {
    Shape ms;
    for (int64_t e : c.mask_dims) ms.push_back(Dim(e));
    if (c.mask_bool) {
      std::vector<uint8_t> bytes;
      for (float x : c.mask) bytes.push_back(x != 0);
      r.inputs.push_back(HostTensor::make(DType::Bool, c.mask_dims, bytes));
      ins.push_back(mb.input("mask", DType::Bool, ms));
    } else {
      r.inputs.push_back(HostTensor::f32(c.mask_dims, c.mask));
      ins.push_back(mb.input("mask", DType::Float32, ms));
    }
  } else if (c.past > 0 || c.past_inputs || !c.nonpad.empty()) {
    ins.push_back(nullptr);
  }
  if (c.past > 0 || c.past_inputs) {
    r.pk = wave(static_cast<size_t>(c.b) * c.hkv * c.past * c.dk, 0.23f);
    r.pv = wave(static_cast<size_t>(c.b) * c.hkv * c.past * c.dv, 0.19f);
    r.inputs.push_back(HostTensor::f32({c.b, c.hkv, c.past, c.dk}, r.pk));
    ins.push_back(mb.input("past_key", DType::Float32, {c.b, c.hkv, c.past, c.dk}));
    r.inputs.push_back(HostTensor::f32({c.b, c.hkv, c.past, c.dv}, r.pv));
    ins.push_back(mb.input("past_value", DType::Float32, {c.b, c.hkv, c.past, c.dv}));
  }
  if (!c.nonpad.empty()) {
    ins.insert(ins.end(), {nullptr, nullptr});
    r.inputs.push_back(HostTensor::i64({c.b}, c.nonpad));
    ins.push_back(mb.input("nonpad_kv_seqlen", DType::Int64, {c.b}));
  }
  Shape ys = three_d ? Shape{c.b, c.sq, c.hq * c.dv} : Shape{c.b, c.hq, c.sq, c.dv};
  std::vector<std::pair<std::string, ir::Type>> outs = {{"y", ir::Type::tensor(DType::Float32, ys)}};
  if (present_outputs) {
    outs.push_back({"present_key", ir::Type::tensor(DType::Float32, Shape{c.b, c.hkv, c.total(), c.dk})});
    outs.push_back({"present_value", ir::Type::tensor(DType::Float32, Shape{c.b, c.hkv, c.total(), c.dv})});
  }
  if (qk_mode >= 0) {
    if (!present_outputs) outs.insert(outs.end(), 2, {"", ir::Type()});
    outs.push_back({"qk", ir::Type::tensor(DType::Float32, Shape{c.b, c.hq, c.sq, c.total()})});
  }
  ir::Node* n = mb.node("Attention", ins, outs);
  if (three_d) {
    n->set_attr_int("q_num_heads", c.hq);
    n->set_attr_int("kv_num_heads", c.hkv);
  }
  if (c.causal) n->set_attr_int("is_causal", 1);
  if (c.scale) n->set_attr_float("scale", *c.scale);
  if (c.softcap > 0) n->set_attr_float("softcap", c.softcap);
  if (qk_mode >= 0) n->set_attr_int("qk_matmul_output_mode", qk_mode);
  if (c.masked_rows_nan) n->set_attr_int(ir::kMaskedRowsNan, 1);
  if (c.left_window >= 0) n->set_attr_int("left_window_size", c.left_window);
  if (c.right_window >= 0) n->set_attr_int("right_window_size", c.right_window);
  for (ir::Value* o : n->outputs())
    if (o) mb.output(o);
  r.model = std::move(mb.model());
  return r;
}

inline ::testing::AssertionResult check(const Case& c, bool three_d = false, double atol = 2e-5,
                                 const std::string& target = "host") {
  Built m = attention_model(c, three_d);
  auto out = compile_and_run(m.model, m.inputs, "attention", target);
  auto ref = reference(c, m.q, m.k, m.v, m.pk, m.pv);
  if (three_d) ref = to_3d(ref, c.b, c.hq, c.sq, c.dv);
  return all_close(out[0].values<float>(), ref, 1e-4, atol);
}

}  // namespace onnxc::test::attention_cases
