// com.microsoft.MatMulNBits (the fused block-quantized weight kernel): against the weight dequantized
// here and multiplied in double precision, for bits 4 and 8, block sizes 16..256, with and without
// zero points, K not a multiple of the block, N not a multiple of the column panel, M of 1 (the
// decode specialization), several row blocks, 16 rows or more (the dequantized-panel kernel), A of
// rank 3, a bias, and every ISA this machine runs.
// Against ONNX Runtime's own MatMulNBits: tests/python/check_nbits_ort.py.
#include <gtest/gtest.h>

#include <cmath>

#include <algorithm>

#include "codegen/schedule/gemm_nbits.h"
#include "codegen/target.h"
#include "ir/error.h"
#include "runnable_targets.h"
#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

struct Case {
  int bits;
  int64_t block, k, n;
  bool zero_points, bias = false;
  int64_t accuracy_level = 0;  // 4: int8 activations in the one-row kernel (where the target has them)
};

// The weight as ONNX Runtime stores it, and its dequantized [K, N] float form.
struct NBits {
  ir::Tensor b, scales, zp;
  std::vector<double> w;     // dequantized, [K, N]
  std::vector<int> centred;  // code - zero point, [K, N]
};

NBits make_weight(const Case& c) {
  const int64_t kb = (c.k + c.block - 1) / c.block, blob = c.block * c.bits / 8, per_byte = 8 / c.bits;
  const int levels = 1 << c.bits;
  NBits r;
  r.b = ir::Tensor(DType::UInt8, {c.n, kb, blob});
  r.scales = ir::Tensor(DType::Float32, {c.n * kb});
  const int64_t zrow = (kb * c.bits + 7) / 8;
  r.zp = ir::Tensor(DType::UInt8, {c.n * zrow});
  r.w.assign(c.k * c.n, 0.0);
  r.centred.assign(c.k * c.n, 0);
  uint32_t seed = 12345;
  auto next = [&] { return seed = seed * 1664525u + 1013904223u, seed >> 8; };
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t b = 0; b < kb; ++b) {
      const float s = 0.01f + 0.001f * float(next() % 100);
      r.scales.mutable_data<float>()[n * kb + b] = s;
      int z = c.zero_points ? int(next() % levels) : levels / 2;
      if (c.zero_points) r.zp.mutable_data<uint8_t>()[n * zrow + b / per_byte] |= uint8_t(z << ((b % per_byte) * c.bits));
      for (int64_t i = 0; i < c.block; ++i) {
        const int64_t k = b * c.block + i;
        const unsigned code = next() % levels;
        r.b.mutable_data<uint8_t>()[(n * kb + b) * blob + i / per_byte] |= uint8_t(code << ((i % per_byte) * c.bits));
        if (k < c.k) r.w[k * c.n + n] = (double(code) - z) * s, r.centred[k * c.n + n] = int(code) - z;
      }
    }
  return r;
}

ir::Model nbits_model(const Case& c, const NBits& w, const ir::Shape& a_shape, const std::vector<float>& bias) {
  ModelBuilder mb(21);
  mb.model().opset_imports.push_back({"com.microsoft", 1});
  auto* a = mb.input("a", DType::Float32, a_shape);
  std::vector<ir::Value*> ins = {a, mb.constant("B", w.b), mb.constant("scales", w.scales)};
  ins.push_back(c.zero_points ? mb.constant("zero_points", w.zp) : nullptr);
  if (c.bias) {
    ins.push_back(nullptr);  // g_idx
    ins.push_back(mb.const_f32("bias", {c.n}, bias));
  }
  ir::Shape y_shape = a_shape;
  y_shape.back() = Dim(c.n);
  ir::Node* node = mb.node("MatMulNBits", ins, {{"y", ir::Type::tensor(DType::Float32, y_shape)}}, "com.microsoft");
  node->set_attr_int("K", c.k);
  node->set_attr_int("N", c.n);
  node->set_attr_int("bits", c.bits);
  node->set_attr_int("block_size", c.block);
  if (c.accuracy_level) node->set_attr_int("accuracy_level", c.accuracy_level);
  mb.output(node->output(0));
  return std::move(mb.model());
}

void check_case(const Case& c, const std::vector<int64_t>& a_dims, const std::string& target, bool static_m = false) {
  SCOPED_TRACE("bits " + std::to_string(c.bits) + " block " + std::to_string(c.block) + " K " + std::to_string(c.k) +
               " N " + std::to_string(c.n) + (c.zero_points ? " zp" : "") + " target " + target);
  NBits w = make_weight(c);
  int64_t m_ext = 1;
  for (size_t i = 0; i + 1 < a_dims.size(); ++i) m_ext *= a_dims[i];
  std::vector<float> a(m_ext * c.k), bias(c.n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::sin(0.37f * float(i)) + 0.25f * std::cos(0.05f * float(i));
  for (int64_t n = 0; n < c.n; ++n) bias[n] = 0.1f * float(n % 5) - 0.2f;
  ir::Shape shape;
  for (size_t i = 0; i < a_dims.size(); ++i)
    shape.push_back(i + 2 == a_dims.size() && !static_m ? Dim::symbol("m") : Dim(a_dims[i]));  // a run-time M
  auto out = compile_and_run(nbits_model(c, w, shape, bias), {HostTensor::f32(a_dims, a)}, "nbits", target);
  std::vector<float> got = out[0].values<float>();
  ASSERT_EQ(got.size(), size_t(m_ext * c.n));
  // accuracy_level 4 with one row: A quantized to int8 per block as MLAS does, the sums exact.
  if (m_ext == 1 && c.accuracy_level == 4 && c.bits == 4 && codegen::nbits_int8_dot(codegen::parse_target(target))) {
    for (int64_t n = 0; n < c.n; ++n) {
      double want = c.bias ? bias[n] : 0.0, mag = std::fabs(want);
      const int64_t kb = (c.k + c.block - 1) / c.block;
      for (int64_t b = 0; b < kb; ++b) {
        const int64_t k0 = b * c.block, k1 = std::min(c.k, k0 + c.block);
        float amax = 0.0f;
        for (int64_t k = k0; k < k1; ++k) amax = std::max(amax, std::fabs(a[k]));
        const float inv = amax != 0.0f ? 127.0f / amax : 0.0f;
        int64_t sum = 0;
        for (int64_t k = k0; k < k1; ++k)
          sum += int64_t(std::clamp(std::nearbyint(a[k] * inv), -127.0f, 127.0f)) * w.centred[k * c.n + n];
        const double term = double(w.scales.data<float>()[n * kb + b]) * double(amax / 127.0f) * double(sum);
        want += term, mag += std::fabs(term);
      }
      ASSERT_NEAR(got[n], want, 1e-6 * (mag + 1.0)) << "int8 activations, n=" << n;
    }
    return;
  }
  for (int64_t m = 0; m < m_ext; ++m)
    for (int64_t n = 0; n < c.n; ++n) {
      double want = c.bias ? bias[n] : 0.0, mag = 0;
      for (int64_t k = 0; k < c.k; ++k) {
        want += double(a[m * c.k + k]) * w.w[k * c.n + n];
        mag += std::fabs(double(a[m * c.k + k]) * w.w[k * c.n + n]);
      }
      // float32 sums of K products reordered: within a few ulp of the sum of magnitudes.
      ASSERT_NEAR(got[m * c.n + n], want, 1e-5 * (mag + 1.0)) << "m=" << m << " n=" << n;
    }
}

TEST(LowerQuantNBits, BitsBlocksAndZeroPointsMatchTheDequantizedProduct) {
  const std::vector<Case> cases = {
      {4, 32, 96, 80, false}, {4, 32, 100, 70, true},   // K with a partial last block
      {4, 16, 64, 33, true},  {4, 64, 192, 130, false}, {4, 128, 256, 64, true},
      {4, 256, 300, 17, true}, {8, 32, 96, 40, true},  {8, 16, 50, 65, false}, {8, 128, 128, 24, true},
  };
  for (const std::string& target : runnable_targets())
    for (const Case& c : cases)
      for (int64_t m : {1, 7, 13}) check_case(c, {m, c.k}, target);
}

// From 16 rows each task dequantizes its column panel and runs the float32 register block over it
// (prefill): whole and partial row blocks and task groups, partial panels, K with a partial block,
// K in several chunks.
TEST(LowerQuantNBits, ManyRowsDequantizeThePanel) {
  const std::vector<Case> cases = {
      {4, 32, 100, 70, true}, {4, 16, 64, 33, false}, {4, 128, 256, 130, true}, {8, 32, 96, 40, true},
  };
  for (const std::string& target : runnable_targets())
    for (const Case& c : cases)
      for (int64_t m : {16, 23, 150}) check_case(c, {m, c.k}, target);
  // K of 66 blocks: tiles of several k chunks (22 blocks a chunk on AVX-512, 33 on AVX2).
  for (const std::string& target : runnable_targets()) check_case({4, 32, 2112, 70, true}, {37, 2112}, target);
  Case c{4, 32, 64, 48, true, /*bias=*/true};
  check_case(c, {2, 9, c.k}, "host");  // rank 3, 18 rows
  for (int64_t m : {1, 7, 20}) check_case(c, {m, c.k}, "host", /*static_m=*/true);  // one kernel, no run-time choice
}

// accuracy_level 4: one row (decode) runs on int8 activations where the target has a byte dot
// product (AVX-512 VNNI, ARM dotprod) or byte pairs (AVX2), against the integer sums computed
// here; more rows, other targets and 8-bit codes keep the float32 products over the same (re-laid)
// codes.
TEST(LowerQuantNBits, AccuracyLevel4QuantizesTheRowPerBlock) {
  const std::vector<Case> cases = {
      {4, 32, 96, 80, false, false, 4},  {4, 32, 100, 70, true, false, 4},  {4, 16, 64, 33, true, false, 4},
      {4, 64, 192, 130, false, true, 4}, {4, 128, 256, 64, true, false, 4}, {4, 256, 300, 17, true, false, 4},
      {8, 32, 96, 40, true, false, 4},
  };
  for (const std::string& target : runnable_targets())
    for (const Case& c : cases)
      for (int64_t m : {1, 7, 20}) check_case(c, {m, c.k}, target);
  Case c{4, 32, 64, 48, true, /*bias=*/true, 4};
  check_case(c, {1, 1, c.k}, "host");                   // rank 3, one row
  check_case(c, {1, c.k}, "host", /*static_m=*/true);  // M fixed to 1: the one-row kernel alone
}

// A NaN or inf in a block of the row makes the block's int8 scale inf: the whole output row is NaN
// (ONNX Runtime's MatMulNBits with accuracy_level 4 gives NaN there too: tests/python).
TEST(LowerQuantNBits, AccuracyLevel4NonFiniteRowsAreNaN) {
  if (!codegen::nbits_int8_dot(codegen::parse_target("host"))) GTEST_SKIP() << "no int8 one-row kernel on this CPU";
  // K of whole blocks, and K with a partial last block (where a NaN once slipped through: the
  // block maximum's finiteness test was compiled without IEEE semantics).
  for (const Case& c : {Case{4, 32, 96, 40, true, false, 4}, Case{4, 64, 300, 70, true, false, 4}}) {
    NBits w = make_weight(c);
    for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
      std::vector<float> a(c.k, 0.5f);
      a[37] = bad;
      auto out = compile_and_run(nbits_model(c, w, {Dim::symbol("m"), Dim(c.k)}, {}), {HostTensor::f32({1, c.k}, a)},
                                 "nbits_nan", "host");
      for (float y : out[0].values<float>()) ASSERT_TRUE(std::isnan(y)) << "A holding " << bad << ", K " << c.k;
    }
  }
}

// The largest sums the int8 kernels meet: every code 15 against a zero point of 0 and a row of one
// value (q = ±127 everywhere). AVX2 adds byte pairs in saturating int16 lanes (vpmaddubsw), 16
// products of 1905 (30480) per lane and sub-block of 32 k: a lane summing more would clip at 32767.
TEST(LowerQuantNBits, AccuracyLevel4LargestSumsStayExact) {
  for (const std::string& target : runnable_targets())
    for (const Case& c : {Case{4, 16, 48, 40, true, false, 4}, Case{4, 32, 96, 40, true, false, 4},
                          Case{4, 64, 300, 70, true, false, 4}, Case{4, 256, 512, 33, true, false, 4}}) {
      NBits w = make_weight(c);
      std::fill_n(w.b.mutable_data<uint8_t>(), w.b.numel(), uint8_t(0xff));
      std::fill_n(w.zp.mutable_data<uint8_t>(), w.zp.numel(), uint8_t(0));
      const int64_t kb = (c.k + c.block - 1) / c.block;
      for (float v : {0.75f, -0.75f}) {
        SCOPED_TRACE("block " + std::to_string(c.block) + " K " + std::to_string(c.k) + " A " + std::to_string(v) +
                     " target " + target);
        auto out = compile_and_run(nbits_model(c, w, {Dim::symbol("m"), Dim(c.k)}, {}),
                                   {HostTensor::f32({1, c.k}, std::vector<float>(c.k, v))}, "nbits_15", target);
        std::vector<float> got = out[0].values<float>();
        for (int64_t n = 0; n < c.n; ++n) {
          double want = 0.0;
          for (int64_t b = 0; b < kb; ++b)
            want += double(w.scales.data<float>()[n * kb + b]) * 15.0 * double(v) * double(std::min(c.k - b * c.block, c.block));
          ASSERT_NEAR(got[n], want, 1e-6 * std::fabs(want)) << "n=" << n;
        }
      }
    }
}

TEST(LowerQuantNBits, RankThreeActivationAndBias) {
  Case c{4, 32, 64, 48, true, /*bias=*/true};
  check_case(c, {2, 5, c.k}, "host");
  check_case(c, {1, 1, c.k}, "host");
}

TEST(LowerQuantNBits, UnsupportedLayoutsAreUserErrors) {
  Case c{4, 32, 64, 48, false};
  NBits w = make_weight(c);
  ir::Model m = nbits_model(c, w, {Dim(2), Dim(c.k)}, {});
  m.graph->nodes()[0]->set_attr_int("bits", 3);
  try {
    compile(m, "nbits_bad_bits");
    FAIL() << "bits 3 compiled";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("bits 3 is not supported"), std::string::npos) << e.what();
  }
  ir::Model m2 = nbits_model(c, w, {Dim(2), Dim(c.k)}, {});
  m2.graph->nodes()[0]->set_attr_int("block_size", 24);
  try {
    compile(m2, "nbits_bad_block");
    FAIL() << "block 24 compiled";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("block_size 24 must be a power of two"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onnxc::test
