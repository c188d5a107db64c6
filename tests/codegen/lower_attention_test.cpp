// The fused Attention kernel (opset 23) against a direct reference of the ONNX function and against
// the same computation written in plain ops (MatMul/Softmax...) and compiled unfused: 4-D and 3-D,
// GQA/MQA, causal (with past), bool/float/finfo.min masks, fully masked rows, past/present, cross
// attention, one-token sequences, lengths that are not multiples of the tiles.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

#include "attention_cases.h"
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
using namespace attention_cases;

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

}  // namespace
}  // namespace onnxc::test
