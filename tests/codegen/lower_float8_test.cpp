// 8-bit floats and float4e2m1 in kernels: Cast to each type (saturating and not) over every float16
// value, the specials and random float32 bits, and Cast back from every code (float4e2m1 reads the low
// 4 bits of each byte), element for element equal to
// the scalar conversions of ir/float8.h (tested there against a brute-force nearest search); and
// QuantizeLinear/DequantizeLinear with float8 against values computed here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "ir/float8.h"
#include "ir/tensor.h"
#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;

constexpr DType kTypes[] = {DType::Float8E4M3FN, DType::Float8E4M3FNUZ, DType::Float8E5M2, DType::Float8E5M2FNUZ,
                            DType::Float8E8M0,   DType::Float4E2M1};

std::vector<float> probe_values() {
  std::vector<float> v;
  for (uint32_t h = 0; h < 0x10000; ++h) v.push_back(ir::f16_to_f32(static_cast<uint16_t>(h)));
  const float inf = std::numeric_limits<float>::infinity();
  for (float s : {inf, -inf, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::denorm_min(), 1e-40f, -3e38f, 448.0f, 464.0f, 465.0f, 61440.0f})
    v.push_back(s);
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, 4);
    v.push_back(f);
  }
  return v;
}

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(LowerFloat8, CastToAndFromEveryTypeMatchesTheScalarConversions) {
  std::vector<float> xv = probe_values();
  const int64_t n = static_cast<int64_t>(xv.size());
  ModelBuilder b(26);  // BitCast is opset 26
  auto* x = b.input("x", DType::Float32, {n});
  auto* codes = b.input("codes", DType::UInt8, {256});
  for (DType t : kTypes) {
    std::string name(ir::dtype_name(t));
    for (int sat = 0; sat < 2; ++sat) {
      auto* y = b.op("Cast", {x}, name + (sat ? "_sat" : "_nosat"), t, {n});
      y->producer()->set_attr_int("to", static_cast<int64_t>(t));
      y->producer()->set_attr_int("saturate", sat);
      b.output(y);
    }
    // The 256 codes as this type (BitCast keeps the bytes), then back to float32.
    auto* as_t = b.op("BitCast", {codes}, name + "_bits", t, {256});
    as_t->producer()->set_attr_int("to", static_cast<int64_t>(t));
    auto* back = b.op("Cast", {as_t}, name + "_f32", DType::Float32, {256});
    back->producer()->set_attr_int("to", static_cast<int64_t>(DType::Float32));
    b.output(back);
  }
  std::vector<uint8_t> all_codes(256);
  for (int c = 0; c < 256; ++c) all_codes[c] = static_cast<uint8_t>(c);
  auto out = compile_and_run(b.model(), {HostTensor::f32({n}, xv), HostTensor::make(DType::UInt8, {256}, all_codes)},
                             "float8_cast");
  ASSERT_EQ(out.size(), 3 * std::size(kTypes));
  size_t k = 0;
  for (DType t : kTypes) {
    for (int sat = 0; sat < 2; ++sat) {
      auto got = out[k++].values<uint8_t>();
      int bad = 0;
      for (int64_t i = 0; i < n && bad < 5; ++i) {
        uint8_t want = ir::f32_to_float8(xv[i], t, sat);
        if (got[i] != want) {
          ADD_FAILURE() << ir::dtype_name(t) << " saturate=" << sat << ": " << xv[i] << " (0x" << std::hex
                        << bits_of(xv[i]) << ") gave 0x" << int(got[i]) << ", want 0x" << int(want);
          ++bad;
        }
      }
    }
    auto back = out[k++].values<float>();
    for (int c = 0; c < (t == DType::Float4E2M1 ? 16 : 256); ++c) {
      float want = ir::float8_to_f32(static_cast<uint8_t>(c), t);
      if (std::isnan(want)) EXPECT_TRUE(std::isnan(back[c])) << ir::dtype_name(t) << " code " << c;
      else EXPECT_EQ(bits_of(back[c]), bits_of(want)) << ir::dtype_name(t) << " code " << c << ": " << back[c];
    }
  }
}

// y = saturate(x / scale) as E4M3FN (no integer rounding), and back: (value - 0) * scale.
TEST(LowerFloat8, QuantizeAndDequantizeLinear) {
  ModelBuilder b(21);
  auto* x = b.input("x", DType::Float32, {6});
  auto* scale = b.const_f32("scale", {}, {2.0f});
  auto* zp = b.constant("zp", ir::Tensor::scalar<uint8_t>(DType::Float8E4M3FN, 0));
  auto* q = b.op("QuantizeLinear", {x, scale, zp}, "q", DType::Float8E4M3FN, {6});
  auto* d = b.op("DequantizeLinear", {q, scale, zp}, "d", DType::Float32, {6});
  b.output(q);
  b.output(d);
  std::vector<float> xv = {0.0f, 1.0f, -3.3f, 1000.0f, -1e6f, 0.01f};
  auto out = compile_and_run(b.model(), {HostTensor::f32({6}, xv)}, "float8_quant");
  auto qv = out[0].values<uint8_t>();
  auto dv = out[1].values<float>();
  for (int i = 0; i < 6; ++i) {
    uint8_t want = ir::f32_to_float8(xv[i] / 2.0f, DType::Float8E4M3FN, true);
    EXPECT_EQ(qv[i], want) << xv[i];
    EXPECT_EQ(dv[i], ir::float8_to_f32(want, DType::Float8E4M3FN) * 2.0f) << xv[i];
  }
  EXPECT_EQ(dv[3], 896.0f);   // 1000/2 = 500 saturates to 448
  EXPECT_EQ(dv[4], -896.0f);
}

// float4e2m1 (opset 23): x / scale + zero point, saturating at 6 (no infinity), and back.
TEST(LowerFloat8, QuantizeAndDequantizeLinearFloat4) {
  ModelBuilder b(23);
  auto* x = b.input("x", DType::Float32, {8});
  auto* scale = b.const_f32("scale", {}, {2.0f});
  auto* zp = b.constant("zp", ir::Tensor::scalar<uint8_t>(DType::Float4E2M1, 0));
  auto* q = b.op("QuantizeLinear", {x, scale, zp}, "q", DType::Float4E2M1, {8});
  auto* d = b.op("DequantizeLinear", {q, scale, zp}, "d", DType::Float32, {8});
  b.output(q);
  b.output(d);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> xv = {0.0f, 2.5f, 4.8f, 10.0f, -30.0f, 1e30f, -0.4f, nan};
  auto out = compile_and_run(b.model(), {HostTensor::f32({8}, xv)}, "float4_quant");
  auto qv = out[0].values<uint8_t>();
  auto dv = out[1].values<float>();
  const uint8_t want[8] = {0x0, 0x2, 0x4, 0x6, 0xf, 0x7, 0x8, 0x8};  // 0, 1, 2, 4 (tie 5 -> 4), -6, 6, -0, -0
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(qv[i], want[i]) << xv[i];
    EXPECT_EQ(qv[i], ir::f32_to_float8(xv[i] / 2.0f, DType::Float4E2M1, true)) << xv[i];
    EXPECT_EQ(dv[i], ir::float8_to_f32(want[i], DType::Float4E2M1) * 2.0f) << xv[i];
  }
}

}  // namespace
}  // namespace onnxc::test
