// The fused Attention kernel (opset 23) against a direct reference of the ONNX function and against
// the same computation written in plain ops (MatMul/Softmax...) and compiled unfused: 4-D and 3-D,
// GQA/MQA, causal (with past), bool/float/finfo.min masks, fully masked rows, past/present, cross
// attention, one-token sequences, lengths that are not multiples of the tiles.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

#include "codegen/partition.h"
#include "ir/error.h"
#include "ir/onnxc_attrs.h"
#include "runnable_targets.h"
#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;
using ir::Shape;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kFloatMin = -std::numeric_limits<float>::max();

std::vector<float> wave(size_t n, float freq, float amp = 1.0f) {
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
std::vector<float> reference(const Case& c, const std::vector<float>& q, const std::vector<float>& k,
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
std::vector<float> to_3d(const std::vector<float>& x, int b, int h, int s, int d) {
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
Built attention_model(const Case& c, bool three_d, bool present_outputs = false, int qk_mode = -1) {
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

::testing::AssertionResult check(const Case& c, bool three_d = false, double atol = 2e-5,
                                 const std::string& target = "host") {
  Built m = attention_model(c, three_d);
  auto out = compile_and_run(m.model, m.inputs, "attention", target);
  auto ref = reference(c, m.q, m.k, m.v, m.pk, m.pv);
  if (three_d) ref = to_3d(ref, c.b, c.hq, c.sq, c.dv);
  return all_close(out[0].values<float>(), ref, 1e-4, atol);
}

TEST(LowerAttention, ThreeDWithHeadAttributes) {
  Case c;
  c.b = 2, c.hq = 3, c.hkv = 3, c.sq = 7, c.skv = 9, c.dk = 4, c.dv = 6;
  EXPECT_TRUE(check(c, true));
}

TEST(LowerAttention, GroupedAndMultiQuery) {
  Case gqa;
  gqa.hq = 4, gqa.hkv = 2, gqa.sq = gqa.skv = 40;
  EXPECT_TRUE(check(gqa));
  Case mqa = gqa;
  mqa.hkv = 1;
  EXPECT_TRUE(check(mqa, true));
}

TEST(LowerAttention, CausalSelfCrossAndWithPast) {
  Case self;
  self.causal = true, self.sq = self.skv = 70;
  EXPECT_TRUE(check(self));
  Case cross = self;
  cross.sq = 6, cross.skv = 80;  // upper-left aligned: query i sees keys 0..i
  EXPECT_TRUE(check(cross));
  Case past = self;
  past.sq = past.skv = 3, past.past = 66;  // query i sees keys 0..past+i
  EXPECT_TRUE(check(past));
}

TEST(LowerAttention, BoolKeyPaddingMaskWithFullyMaskedRow) {
  Case c;
  c.b = 2, c.sq = c.skv = 6;
  c.mask_bool = true;
  c.mask_dims = {2, 1, 6, 6};
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 6; ++i)
      for (int t = 0; t < 6; ++t) c.mask.push_back((b == 1 && i == 2) ? 0.0f : float(t < 4 + b));
  Built m = attention_model(c, false);
  auto out = compile_and_run(m.model, m.inputs, "attention_bool")[0].values<float>();
  auto ref = reference(c, m.q, m.k, m.v, m.pk, m.pv);
  // Row (b=1, i=2) has no key left: 0, as ONNX 1.23 defines it.
  for (int h = 0; h < 2; ++h)
    for (int d = 0; d < 8; ++d) {
      size_t at = (((1 * 2 + h) * 6 + 2) * 8) + d;
      EXPECT_EQ(out[at], 0.0f) << at;
    }
  EXPECT_TRUE(all_close(out, ref, 1e-4, 2e-5));
  // The node onnxc's fusion writes keeps the NaN that softmax over an all -inf row gives unfused.
  c.masked_rows_nan = true;
  Built fused = attention_model(c, false);
  out = compile_and_run(fused.model, fused.inputs, "attention_bool_nan")[0].values<float>();
  ref = reference(c, fused.q, fused.k, fused.v, fused.pk, fused.pv);
  for (int h = 0; h < 2; ++h)
    for (int d = 0; d < 8; ++d) {
      size_t at = (((1 * 2 + h) * 6 + 2) * 8) + d;
      EXPECT_TRUE(std::isnan(out[at]) && std::isnan(ref[at])) << at;
      out[at] = ref[at] = 0;
    }
  EXPECT_TRUE(all_close(out, ref, 1e-4, 2e-5));
}

// nonpad_kv_seqlen (opset 24): keys past each batch entry's length are padding, and causal rows
// align to the end of the valid keys (query i sees keys up to nonpad[b] - sq + i); a negative
// offset leaves rows with no key, which give 0. Both kernels: streaming and materialized (mode 3).
TEST(LowerAttention, NonpadKvSeqlen) {
  Case c;
  c.b = 3, c.hq = 4, c.hkv = 2, c.sq = 4, c.skv = 70;
  c.nonpad = {70, 33, 2};
  EXPECT_TRUE(check(c));
  c.causal = true;
  EXPECT_TRUE(check(c));
  Built m = attention_model(c, false, false, 3);
  auto out = compile_and_run(m.model, m.inputs, "attention_nonpad_qk");
  std::vector<float> qk;
  auto y = reference(c, m.q, m.k, m.v, m.pk, m.pv, &qk, 3);
  EXPECT_TRUE(all_close(out[0].values<float>(), y, 1e-4, 2e-5));
  EXPECT_TRUE(all_close(out.back().values<float>(), qk, 1e-4, 2e-6));
}

// left_window_size / right_window_size (opset 25): query i (at key i + past) sees keys within the
// window, causal or not, with a past.
TEST(LowerAttention, SlidingWindow) {
  Case c;
  c.sq = c.skv = 70, c.left_window = 5;
  EXPECT_TRUE(check(c));
  c.causal = true;
  EXPECT_TRUE(check(c));
  c.causal = false, c.right_window = 2, c.left_window = -1, c.sq = c.skv = 3, c.past = 9;
  EXPECT_TRUE(check(c));
}

TEST(LowerAttention, FloatMasksBroadcastAndShorterThanKeys) {
  Case c;
  c.sq = 5, c.skv = 70;
  c.mask_dims = {5, 70};
  c.mask = wave(5 * 70, 0.7f, 3.0f);
  EXPECT_TRUE(check(c));
  Case shorter = c;  // keys past the mask's end are masked out
  shorter.mask_dims = {1, 1, 1, 65};
  shorter.mask = wave(65, 0.3f, 2.0f);
  EXPECT_TRUE(check(shorter));
}

// HF extended masks: (1 - m) * finfo.min. A fully masked row is uniform (not NaN) unfused, and a
// finfo.min bias plus a finfo.min causal mask overflows to -inf exactly as the float32 graph does.
TEST(LowerAttention, FinfoMinMaskRowsStayFinite) {
  Case c;
  c.b = 1, c.sq = c.skv = 66;
  c.mask_dims = {1, 1, 66, 66};
  for (int i = 0; i < 66; ++i)
    for (int t = 0; t < 66; ++t) c.mask.push_back(i == 3 || t >= 60 ? kFloatMin : 0.0f);
  Built m = attention_model(c, false);
  auto out = compile_and_run(m.model, m.inputs, "attention_min")[0].values<float>();
  auto ref = reference(c, m.q, m.k, m.v, m.pk, m.pv);
  for (float x : out) ASSERT_TRUE(std::isfinite(x));
  EXPECT_TRUE(all_close(out, ref, 1e-4, 2e-5));
  c.causal = true;  // causal positions add -inf on top: still a finite, well-defined row
  EXPECT_TRUE(check(c));
}

TEST(LowerAttention, PastAndPresentKeyValue) {
  Case c;
  c.hq = 4, c.hkv = 2, c.sq = c.skv = 2, c.past = 7;
  Built m = attention_model(c, false, true);
  auto out = compile_and_run(m.model, m.inputs, "attention_past");
  EXPECT_TRUE(all_close(out[0].values<float>(), reference(c, m.q, m.k, m.v, m.pk, m.pv), 1e-4, 2e-5));
  for (int which = 0; which < 2; ++which) {
    const auto& past = which ? m.pv : m.pk;
    const auto& cur = which ? m.v : m.k;
    std::vector<float> expect;
    int d = which ? c.dv : c.dk;
    for (int h = 0; h < c.hkv; ++h) {
      expect.insert(expect.end(), past.begin() + h * c.past * d, past.begin() + (h + 1) * c.past * d);
      expect.insert(expect.end(), cur.begin() + h * c.skv * d, cur.begin() + (h + 1) * c.skv * d);
    }
    EXPECT_EQ(out[1 + which].values<float>(), expect) << (which ? "present_value" : "present_key");
  }
}

// An empty past (shape [b, kv_heads, 0, d], the first step of a generation) is the same as no past:
// known empty when compiling (one query row and tiles, causal or not, GQA, present = the new keys)
// and empty at run time, in the streaming kernel and in the materialized one (qk_matmul_output).
TEST(LowerAttention, EmptyPastIsNoPast) {
  for (int sq : {1, 5}) {
    for (bool causal : {false, true}) {
      Case c;
      c.hq = 4, c.hkv = 2, c.sq = c.skv = sq, c.causal = causal, c.past_inputs = true;
      Built m = attention_model(c, false, true);
      auto out = compile_and_run(m.model, m.inputs, "attention_empty_past");
      EXPECT_TRUE(all_close(out[0].values<float>(), reference(c, m.q, m.k, m.v, m.pk, m.pv), 1e-4, 2e-5))
          << sq << " rows" << (causal ? ", causal" : "");
      EXPECT_EQ(out[1].values<float>(), m.k) << "present_key";
      EXPECT_EQ(out[2].values<float>(), m.v) << "present_value";
    }
  }
  // A symbolic past, with qk_matmul_output (the materialized stages): empty, then 3 rows.
  const int hq = 4, hkv = 2, d = 8, s = 6;
  ModelBuilder mb(23);
  Dim p = Dim::symbol("p");
  auto* q = mb.input("q", DType::Float32, {1, hq, s, d});
  auto* k = mb.input("k", DType::Float32, {1, hkv, s, d});
  auto* v = mb.input("v", DType::Float32, {1, hkv, s, d});
  auto* pk = mb.input("past_key", DType::Float32, {1, hkv, p, d});
  auto* pv = mb.input("past_value", DType::Float32, {1, hkv, p, d});
  ir::Node* n = mb.node("Attention", {q, k, v, nullptr, pk, pv},
                        {{"y", ir::Type::tensor(DType::Float32, Shape{1, hq, s, d})},
                         {"", ir::Type()},
                         {"", ir::Type()},
                         {"qk", ir::Type::tensor(DType::Float32, Shape{1, hq, s, p + Dim(s)})}});
  n->set_attr_int("is_causal", 1);
  n->set_attr_int("qk_matmul_output_mode", 3);
  mb.output(n->output(0));
  mb.output(n->output(3));
  LoadedModel lib(compile(mb.model(), "attention_sym_past_qk").so_path);
  for (int past : {0, 3}) {
    Case c;
    c.hq = hq, c.hkv = hkv, c.sq = c.skv = s, c.past = past, c.dk = c.dv = d, c.causal = true, c.past_inputs = true;
    Built m = attention_model(c, false);
    auto out = lib.run(m.inputs);
    std::vector<float> qk;
    auto y = reference(c, m.q, m.k, m.v, m.pk, m.pv, &qk, 3);
    EXPECT_TRUE(all_close(out[0].values<float>(), y, 1e-4, 2e-5)) << "past " << past;
    EXPECT_TRUE(all_close(out[1].values<float>(), qk, 1e-4, 2e-6)) << "qk_matmul_output, past " << past;
  }
}

// qk_matmul_output: the softmax weights (mode 3, what Luong's fused `align` reads), the scaled
// scores (mode 0), after softcap (1) and after softcap and mask (2), with Y from the same kernel;
// masks, causal rows, GQA, 3-D and past included.
TEST(LowerAttention, QkMatmulOutputModes) {
  Case c;
  c.b = 2, c.hq = 4, c.hkv = 2, c.sq = 6, c.skv = 9, c.causal = true;
  c.mask_dims = {2, 1, 1, 9};
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 9; ++t) c.mask.push_back(t == 7 - b ? kFloatMin : 0.1f * t);
  Case past = c;
  past.b = 1, past.mask_dims = {1, 1, 1, 12}, past.past = 3, past.sq = past.skv = 9;
  past.mask = wave(12, 0.5f);
  Case capped = c;
  capped.softcap = 0.8f;
  for (auto [cs, mode, three_d] : {std::tuple{c, 3, false}, {c, 0, false}, {c, 3, true}, {past, 3, false},
                                   {capped, 0, false}, {capped, 1, false}, {capped, 2, false}, {past, 2, true}}) {
    Built m = attention_model(cs, three_d, cs.past > 0, mode);
    auto out = compile_and_run(m.model, m.inputs, "attention_qk" + std::to_string(mode));
    std::vector<float> qk;
    auto y = reference(cs, m.q, m.k, m.v, m.pk, m.pv, &qk, mode);
    if (three_d) y = to_3d(y, cs.b, cs.hq, cs.sq, cs.dv);
    EXPECT_TRUE(all_close(out[0].values<float>(), y, 1e-4, 2e-5)) << "Y, mode " << mode;
    EXPECT_TRUE(all_close(out.back().values<float>(), qk, 1e-4, 2e-6)) << "qk_matmul_output, mode " << mode;
  }
  // A mode ONNX does not define is refused with the node named.
  Built m = attention_model(c, false, false, 4);
  EXPECT_THROW(compile(m.model, "attention_qk4"), onnxc::UserError);
}

TEST(LowerAttention, ScaleAndSoftcapAttributes) {
  Case c;
  c.sq = c.skv = 9, c.scale = 0.7f, c.softcap = 2.5f;
  EXPECT_TRUE(check(c));
}

// One library for every length: across the 32-query and 64-key tile boundaries, self and cross.
TEST(LowerAttention, SymbolicLengthsAcrossTileBoundaries) {
  ModelBuilder mb(23);
  Dim s = Dim::symbol("s"), t = Dim::symbol("t");
  auto* q = mb.input("q", DType::Float32, {1, 2, s, 8});
  auto* k = mb.input("k", DType::Float32, {1, 2, t, 8});
  auto* v = mb.input("v", DType::Float32, {1, 2, t, 8});
  mb.output(mb.op("Attention", {q, k, v}, "y", DType::Float32, {1, 2, s, 8}));
  auto r = compile(mb.model(), "attention_sym");
  LoadedModel lib(r.so_path);
  for (auto [sq, skv] : {std::pair{1, 1}, {5, 5}, {33, 33}, {70, 70}, {3, 70}, {65, 2}}) {
    Case c;
    c.sq = sq, c.skv = skv;
    Built m = attention_model(c, false);
    auto out = lib.run(m.inputs);
    EXPECT_TRUE(all_close(out[0].values<float>(), reference(c, m.q, m.k, m.v, m.pk, m.pv), 1e-4, 2e-5))
        << sq << "x" << skv;
  }
}

// The kernel merges its running state once per block of key tiles (4 tiles of 64 keys at head size
// 64): several blocks, a partial last one, whole blocks masked with -inf (they must add nothing,
// first or last), a row all finfo.min (uniform), and causal rows ending in different blocks.
TEST(LowerAttention, SeveralKeyBlocks) {
  Case c;
  c.hq = c.hkv = 1, c.sq = 3, c.skv = 600, c.dk = c.dv = 64;
  EXPECT_TRUE(check(c));
  Case masked = c;
  masked.mask_dims = {1, 1, 3, 600};
  for (int i = 0; i < 3; ++i)
    for (int t = 0; t < 600; ++t)
      masked.mask.push_back(i == 0 ? (t < 256 || t >= 520 ? kNegInf : 0.0f) : i == 1 ? kFloatMin : (t < 512 ? kNegInf : 0.0f));
  EXPECT_TRUE(check(masked));
  Case causal = c;
  causal.causal = true, causal.sq = causal.skv = 300;
  EXPECT_TRUE(check(causal));
}

// The probs · V blocks take as many query rows as the target's registers hold (AVX-512 at head size
// 64: 4 rows of 4 zmm; AVX2: 1 row of 8 ymm): every runnable ISA, head sizes around a register
// multiple, several key blocks and a causal mask.
TEST(LowerAttention, EveryRunnableIsa) {
  for (const std::string& target : runnable_targets()) {
    SCOPED_TRACE(target);
    for (int d : {16, 40, 64, 80}) {
      Case c;
      c.hq = c.hkv = 2, c.sq = 9, c.skv = 300, c.dk = c.dv = d;
      EXPECT_TRUE(check(c, false, 2e-5, target)) << "head size " << d;
    }
    Case causal;
    causal.hq = causal.hkv = 1, causal.sq = causal.skv = 130, causal.dk = causal.dv = 64, causal.causal = true;
    EXPECT_TRUE(check(causal, false, 2e-5, target));
  }
}

// A decoding step: one query row, static, gets tiles of one row (the scores vectorized over keys, not
// rows): every runnable ISA, head sizes around a register multiple, pasts within one key tile and
// over several blocks, causal or not, GQA, a float mask, the 3-D form, and K and V given whole.
TEST(LowerAttention, OneQueryRowDecodeStep) {
  for (const std::string& target : runnable_targets()) {
    SCOPED_TRACE(target);
    for (int d : {40, 64, 80}) {  // AVX-512: 40 sums K rows by keys, 64 and 80 by vectors of the row
      for (int past : {0, 5, 127, 600}) {
        Case c;
        c.hq = 4, c.hkv = 2, c.sq = c.skv = 1, c.past = past, c.dk = c.dv = d, c.causal = past % 2 == 1;
        EXPECT_TRUE(check(c, false, 2e-5, target)) << "head size " << d << ", past " << past;
      }
    }
    Case whole;  // keys and values already hold the past (the KV cache form): no past inputs
    whole.hq = whole.hkv = 3, whole.sq = 1, whole.skv = 300, whole.dk = whole.dv = 64;
    EXPECT_TRUE(check(whole, true, 2e-5, target));
    Case masked = whole;
    masked.mask_dims = {1, 1, 1, 300};
    for (int t = 0; t < 300; ++t) masked.mask.push_back(t % 7 == 3 ? kNegInf : 0.01f * static_cast<float>(t % 11));
    EXPECT_TRUE(check(masked, false, 2e-5, target));
  }
}

// A query length known only at run time, as exporters write decoders: the kernel holds a one-row
// copy of its stages for calls with one query row (a decoding step) and the tiled stages otherwise.
// Every runnable ISA, 4-D and 3-D Q, GQA over a symbolic past: one row against the reference, and
// against the tiled stages of the same library given the row twice (rows do not depend on each
// other without a causal mask, so both rows of that call are the one-row result computed by tiles).
TEST(LowerAttention, SymbolicQueryLengthOneRowMatchesTiles) {
  for (const std::string& target : runnable_targets()) {
    for (bool three_d : {false, true}) {
      for (bool causal : {false, true}) {
        SCOPED_TRACE(target + (three_d ? " 3-D" : " 4-D") + (causal ? " causal" : ""));
        const int hq = 4, hkv = 2, d = 64;
        ModelBuilder mb(23);
        Dim s = Dim::symbol("s"), t = Dim::symbol("t"), p = Dim::symbol("p");
        Shape qs = three_d ? Shape{1, s, hq * d} : Shape{1, hq, s, d};
        auto* q = mb.input("q", DType::Float32, qs);
        auto* k = mb.input("k", DType::Float32, {1, hkv, t, d});
        auto* v = mb.input("v", DType::Float32, {1, hkv, t, d});
        auto* pk = mb.input("past_key", DType::Float32, {1, hkv, p, d});
        auto* pv = mb.input("past_value", DType::Float32, {1, hkv, p, d});
        ir::Node* n = mb.node("Attention", {q, k, v, nullptr, pk, pv}, {{"y", ir::Type::tensor(DType::Float32, qs)}});
        n->set_attr_int("q_num_heads", hq);
        n->set_attr_int("kv_num_heads", hkv);
        if (causal) n->set_attr_int("is_causal", 1);
        mb.output(n->output(0));
        auto r = compile(mb.model(), "attention_sym_row", target);
        LoadedModel lib(r.so_path);
        // Past 0 is the first step of a generation: an input of no rows (never read).
        for (int past : {0, 1, 5, 127, 600}) {
          Case c;
          c.hq = hq, c.hkv = hkv, c.sq = c.skv = 1, c.past = past, c.dk = c.dv = d, c.causal = causal;
          Built m = attention_model(c, false);
          // attention_model gives q, k, v, [mask or none], past_key, past_value: bind them by name.
          std::vector<HostTensor> in = {three_d ? HostTensor::f32({1, 1, hq * d}, m.q) : m.inputs[0], m.inputs[1],
                                        m.inputs[2], HostTensor::f32({1, hkv, past, d}, m.pk),
                                        HostTensor::f32({1, hkv, past, d}, m.pv)};
          std::vector<float> one = lib.run(in)[0].values<float>();
          std::vector<float> ref = reference(c, m.q, m.k, m.v, m.pk, m.pv);
          EXPECT_TRUE(all_close(one, ref, 1e-4, 2e-5)) << "past " << past;
          if (causal) continue;  // a causal mask gives the two rows different keys
          // The row twice: [h][2][d] in 4-D, [2][h·d] in 3-D.
          std::vector<float> twice;
          std::vector<int64_t> dims = three_d ? std::vector<int64_t>{1, 2, hq * d} : std::vector<int64_t>{1, hq, 2, d};
          if (three_d) {
            twice = m.q;
            twice.insert(twice.end(), m.q.begin(), m.q.end());
          } else {
            for (int h = 0; h < hq; ++h)
              for (int rep = 0; rep < 2; ++rep) twice.insert(twice.end(), m.q.begin() + h * d, m.q.begin() + (h + 1) * d);
          }
          in[0] = HostTensor::f32(dims, twice);
          std::vector<float> tiled = lib.run(in)[0].values<float>();
          std::vector<float> first;  // row 0 of each head
          for (int h = 0; h < hq; ++h)
            for (int e = 0; e < d; ++e) first.push_back(three_d ? tiled[h * d + e] : tiled[(h * 2) * d + e]);
          EXPECT_TRUE(all_close(first, ref, 1e-4, 2e-5)) << "past " << past << ": tiles";
          EXPECT_TRUE(all_close(one, first, 1e-5, 1e-6)) << "past " << past << ": one-row stages against tiles";
        }
      }
    }
  }
}

// The same attention written in plain ops, compiled without fusion, with an HF finfo.min mask: the
// fused kernel must give what the unfused graph gives (rows of finfo.min are uniform, not NaN).
TEST(LowerAttention, MatchesUnfusedPlainOpGraph) {
  Case c;
  c.hq = c.hkv = 2, c.sq = c.skv = 40;
  c.mask_dims = {1, 1, 1, 40};
  for (int t = 0; t < 40; ++t) c.mask.push_back(t % 7 == 3 ? kFloatMin : 0.0f);
  Built fused = attention_model(c, false);
  ModelBuilder mb(17);
  Shape qs{1, 2, 40, 8};
  auto* q = mb.input("q", DType::Float32, qs);
  auto* k = mb.input("k", DType::Float32, qs);
  auto* v = mb.input("v", DType::Float32, qs);
  auto* mask = mb.input("mask", DType::Float32, {1, 1, 1, 40});
  ir::Node* tr = mb.node("Transpose", {k}, {{"kt", ir::Type::tensor(DType::Float32, Shape{1, 2, 8, 40})}});
  tr->set_attr_ints("perm", {0, 1, 3, 2});
  Shape ss{1, 2, 40, 40};
  auto* qk = mb.op("MatMul", {q, tr->output()}, "qk", DType::Float32, ss);
  auto* scaled = mb.op("Div", {qk, mb.const_f32("sqrt_d", {}, {std::sqrt(8.0f)})}, "scaled", DType::Float32, ss);
  auto* masked = mb.op("Add", {scaled, mask}, "masked", DType::Float32, ss);
  auto* p = mb.op("Softmax", {masked}, "p", DType::Float32, ss);
  mb.output(mb.op("MatMul", {p, v}, "y", DType::Float32, qs));
  auto unfused = compile_and_run(mb.model(), fused.inputs, "attention_plain")[0].values<float>();
  auto out = compile_and_run(fused.model, fused.inputs, "attention_fused")[0].values<float>();
  EXPECT_TRUE(all_close(out, unfused, 1e-4, 2e-5));
}

// Q, K and V split from one packed projection, as exporters write the head split: torch's
// nn.MultiheadAttention ([s, b, 3·h·d] -> Slice -> Reshape [s, b·h, d] -> Transpose -> Unsqueeze)
// and GPT-2's ([b, s, 3·h·d] -> Split -> Reshape [b, s, h, d] -> Transpose(0, 2, 1, 3)), with
// symbolic lengths. The head split joins the attention kernel, which reads the projection in place:
// one kernel, no Transpose, Slice or Split of its own, and the values of the reference.
TEST(LowerAttention, HeadSplitOfAPackedProjectionIsReadInPlace) {
  const int h = 2, d = 8, e = h * d, S = 37, B = 2;
  for (bool torch : {true, false}) {
    SCOPED_TRACE(torch ? "torch [s, b, 3e]" : "gpt2 [b, s, 3e]");
    ModelBuilder mb(23);
    Dim s = Dim::symbol("s"), b = Dim::symbol("b");
    Shape qkv_shape = torch ? Shape{s, b, 3 * e} : Shape{b, s, 3 * e};
    auto* qkv = mb.input("qkv", DType::Float32, qkv_shape);
    Shape head = torch ? Shape{b * h, Dim(1), s, d} : Shape{b, h, s, d};
    Shape part = torch ? Shape{s, b, e} : Shape{b, s, e};
    ir::Node* split = nullptr;  // the GPT-2 form splits in one node; torch's slices three times
    if (!torch) {
      auto t = ir::Type::tensor(DType::Float32, part);
      split = mb.node("Split", {qkv, mb.const_i64("sizes", {e, e, e})}, {{"q_part", t}, {"k_part", t}, {"v_part", t}});
      split->set_attr_int("axis", 2);
    }
    std::vector<ir::Value*> qkv_heads;
    for (int i = 0; i < 3; ++i) {
      std::string n = std::string(1, "qkv"[i]);
      ir::Value* sl = split ? split->output(i)
                            : mb.op("Slice", {qkv, mb.const_i64(n + "_start", {i * e}), mb.const_i64(n + "_end", {(i + 1) * e}),
                                              mb.const_i64(n + "_axes", {2})},
                                    n + "_part", DType::Float32, part);
      Shape split = torch ? Shape{s, b * h, d} : Shape{b, s, h, d};
      auto* rs = mb.op("Reshape", {sl, mb.const_i64(n + "_shape", torch ? std::vector<int64_t>{0, -1, d}
                                                                       : std::vector<int64_t>{0, 0, h, d})},
                       n + "_split", DType::Float32, split);
      Shape moved = torch ? Shape{b * h, s, d} : head;
      ir::Node* tr = mb.node("Transpose", {rs}, {{n + "_heads", ir::Type::tensor(DType::Float32, moved)}});
      tr->set_attr_ints("perm", torch ? std::vector<int64_t>{1, 0, 2} : std::vector<int64_t>{0, 2, 1, 3});
      ir::Value* x = tr->output();
      if (torch) x = mb.op("Unsqueeze", {x, mb.const_i64(n + "_axis", {1})}, n + "_4d", DType::Float32, head);
      qkv_heads.push_back(x);
    }
    mb.output(mb.node("Attention", qkv_heads, {{"y", ir::Type::tensor(DType::Float32, head)}})->output());

    codegen::Partition p = codegen::partition_model(mb.model());
    ASSERT_EQ(p.steps.size(), 1u);
    ASSERT_TRUE(p.steps[0].kernel());
    EXPECT_EQ(p.steps[0].kernel()->kclass, codegen::KernelClass::Attention);

    std::vector<float> packed = wave(static_cast<size_t>(S) * B * 3 * e, 0.29f);
    auto in = [&](int which, int bb, int hh, int ss, int dd) {  // the packed projection's element
      int64_t row = torch ? static_cast<int64_t>(ss) * B + bb : static_cast<int64_t>(bb) * S + ss;
      return packed[static_cast<size_t>(row * 3 * e + which * e + hh * d + dd)];
    };
    std::vector<float> q4, k4, v4;  // [b·h, s, d], as the reference reads them
    for (int bb = 0; bb < B; ++bb)
      for (int hh = 0; hh < h; ++hh)
        for (int ss = 0; ss < S; ++ss)
          for (int dd = 0; dd < d; ++dd) {
            q4.push_back(in(0, bb, hh, ss, dd));
            k4.push_back(in(1, bb, hh, ss, dd));
            v4.push_back(in(2, bb, hh, ss, dd));
          }
    Case c;
    c.b = B * h, c.hq = c.hkv = 1, c.sq = c.skv = S, c.dk = c.dv = d;
    std::vector<int64_t> dims = torch ? std::vector<int64_t>{S, B, 3 * e} : std::vector<int64_t>{B, S, 3 * e};
    auto out = compile_and_run(mb.model(), {HostTensor::f32(dims, packed)}, torch ? "head_split_torch" : "head_split_gpt2");
    EXPECT_TRUE(all_close(out[0].values<float>(), reference(c, q4, k4, v4, {}, {}), 1e-4, 2e-5));
    // The GPU form (scores materialized) reads the same inline head split.
    if (torch) {
      EXPECT_NO_THROW(compile(mb.model(), "head_split_cuda", "cuda"));
    }
  }
}

// A Transpose that moves the last axis (V given as [b, h, d, s]) stays a kernel of its own: inline,
// the attention kernel's vector loads along V's head dim would become gathers.
TEST(LowerAttention, TransposeOfTheHeadDimIsNotInlined) {
  Case c;
  c.sq = c.skv = 9;
  Built m = attention_model(c, false);
  ir::Graph& g = *m.model.graph;
  ir::Value* v = g.inputs()[2];
  ir::Value* vt = g.add_input("vt", ir::Type::tensor(DType::Float32, Shape{c.b, c.hkv, c.dv, c.skv}));
  ir::Node* tr = g.add_node("Transpose", {vt}, {"v_from_vt"});
  tr->set_attr_ints("perm", {0, 1, 3, 2});
  tr->output()->set_type(v->type());
  for (ir::Node* n : g.nodes())
    if (n->op_type() == "Attention") n->set_input(2, tr->output());
  g.topological_sort();
  codegen::Partition p = codegen::partition_model(m.model);
  ASSERT_EQ(p.steps.size(), 2u);
  ASSERT_TRUE(p.steps[0].kernel());
  EXPECT_EQ(p.steps[0].kernel()->kclass, codegen::KernelClass::DataMovement);
  std::vector<float> vt_data(m.v.size());  // [b, h, s, d] -> [b, h, d, s]
  for (int bh = 0; bh < c.b * c.hkv; ++bh)
    for (int t = 0; t < c.skv; ++t)
      for (int d = 0; d < c.dv; ++d) vt_data[(bh * c.dv + d) * c.skv + t] = m.v[(bh * c.skv + t) * c.dv + d];
  std::vector<HostTensor> in = m.inputs;
  in.push_back(HostTensor::f32({c.b, c.hkv, c.dv, c.skv}, vt_data));
  auto out = compile_and_run(m.model, in, "attention_vt");
  EXPECT_TRUE(all_close(out[0].values<float>(), reference(c, m.q, m.k, m.v, m.pk, m.pv), 1e-4, 2e-5));
}

// GPU targets take the materialized form (scores stored, as unfused); it must lower and schedule
// (compiled here without a GPU; run where one is present).
TEST(LowerAttention, CompilesForCuda) {
  Case c;
  c.causal = true, c.mask_dims = {1, 1, 5, 5}, c.mask = wave(25, 0.4f);
  Built m = attention_model(c, false);
  EXPECT_NO_THROW(compile(m.model, "attention_cuda", "cuda"));
}

}  // namespace
}  // namespace onnxc::test
