// The fused Attention kernel's forms and targets: every runnable ISA, a decoding step's one query row,
// the same computation written in plain ops and compiled unfused, head splits read in place, and the
// CUDA form compiling. Cases and the reference are in attention_cases.h.
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
