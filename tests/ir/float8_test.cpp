// The scalar float8 conversions (ir/float8.h): decoding against each layout's known extremes, and
// encoding every float16 value (as float32: every rounding boundary of an 8-bit float is a float16)
// against a brute-force search for the nearest float8, ties to even. The NaN, overflow and signed
// zero conventions are ml_dtypes' (what ONNX's reference computes with), spot-checked by value.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ir/float8.h"
#include "ir/tensor.h"

namespace onnxc::ir {
namespace {

constexpr DType kLayouts[] = {DType::Float8E4M3FN, DType::Float8E4M3FNUZ, DType::Float8E5M2, DType::Float8E5M2FNUZ};

struct Extremes {
  DType t;
  float max, smallest_normal, smallest_subnormal;
};

TEST(Float8, DecodesTheExtremesOfEachLayout) {
  const Extremes cases[] = {{DType::Float8E4M3FN, 448, 0.015625f, 0.001953125f},
                            {DType::Float8E4M3FNUZ, 240, 0.0078125f, 0.0009765625f},
                            {DType::Float8E5M2, 57344, 6.103515625e-05f, 1.52587890625e-05f},
                            {DType::Float8E5M2FNUZ, 57344, 3.0517578125e-05f, 7.62939453125e-06f}};
  for (const auto& c : cases) {
    const Float8Layout& l = *float8_layout(c.t);
    EXPECT_EQ(float8_to_f32(l.max_code, c.t), c.max) << dtype_name(c.t);
    EXPECT_EQ(float8_to_f32(static_cast<uint8_t>(0x80 | l.max_code), c.t), -c.max) << dtype_name(c.t);
    EXPECT_EQ(float8_to_f32(static_cast<uint8_t>(1 << l.man_bits), c.t), c.smallest_normal) << dtype_name(c.t);
    EXPECT_EQ(float8_to_f32(1, c.t), c.smallest_subnormal) << dtype_name(c.t);
    EXPECT_EQ(float8_to_f32(0, c.t), 0.0f);
  }
  EXPECT_TRUE(std::isnan(float8_to_f32(0x7f, DType::Float8E4M3FN)));
  EXPECT_TRUE(std::isnan(float8_to_f32(0xff, DType::Float8E4M3FN)));
  EXPECT_TRUE(std::signbit(float8_to_f32(0x80, DType::Float8E4M3FN)));  // -0
  EXPECT_TRUE(std::isnan(float8_to_f32(0x80, DType::Float8E4M3FNUZ)));
  EXPECT_TRUE(std::isnan(float8_to_f32(0x80, DType::Float8E5M2FNUZ)));
  EXPECT_EQ(float8_to_f32(0x7c, DType::Float8E5M2), std::numeric_limits<float>::infinity());
  EXPECT_EQ(float8_to_f32(0xfc, DType::Float8E5M2), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(float8_to_f32(0x7d, DType::Float8E5M2)));
  EXPECT_EQ(float8_to_f32(127, DType::Float8E8M0), 1.0f);
  EXPECT_EQ(float8_to_f32(0, DType::Float8E8M0), std::ldexp(1.0f, -127));
  EXPECT_EQ(float8_to_f32(254, DType::Float8E8M0), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(float8_to_f32(255, DType::Float8E8M0)));
}

// The code of the finite float8 nearest to x (ties to the even code), or -1 when x lies beyond the
// largest finite value by half a step or more. Codes with the sign bit clear only: x >= 0.
int nearest_code(float x, DType t) {
  const Float8Layout& l = *float8_layout(t);
  int best = -1;
  double best_err = 0;
  for (int c = 0; c <= l.max_code; ++c) {
    double err = std::fabs(static_cast<double>(float8_to_f32(static_cast<uint8_t>(c), t)) - x);
    if (best < 0 || err < best_err || (err == best_err && c % 2 == 0)) best = c, best_err = err;
  }
  // Half a step above the largest value: the next code up would have been as near, or nearer.
  double max = float8_to_f32(l.max_code, t);
  double step = max - float8_to_f32(static_cast<uint8_t>(l.max_code - 1), t);
  if (x > max + step / 2 || (x == max + step / 2 && l.max_code % 2 == 1)) return -1;
  return best;
}

TEST(Float8, EncodesEveryFloat16ToTheNearestTiesToEven) {
  for (DType t : kLayouts) {
    const Float8Layout& l = *float8_layout(t);
    for (uint32_t h = 0; h < 0x7c00; ++h) {  // the finite non-negative float16s
      float x = f16_to_f32(static_cast<uint16_t>(h));
      int want = nearest_code(x, t);
      uint8_t sat = f32_to_float8(x, t, true), nosat = f32_to_float8(x, t, false);
      if (want < 0) {
        EXPECT_EQ(sat, l.max_code) << dtype_name(t) << " " << x;
        EXPECT_TRUE(std::isinf(float8_to_f32(nosat, t)) || std::isnan(float8_to_f32(nosat, t))) << dtype_name(t) << " " << x;
      } else {
        ASSERT_EQ(sat, want) << dtype_name(t) << " " << x;
        ASSERT_EQ(nosat, want) << dtype_name(t) << " " << x;
      }
      // The negative is the same code with the sign bit, except that FNUZ has no -0.
      uint8_t neg = f32_to_float8(-x, t, true);
      if (l.fnuz && sat == 0) EXPECT_EQ(neg, 0) << dtype_name(t) << " " << -x;
      else EXPECT_EQ(neg, sat | 0x80) << dtype_name(t) << " " << -x;
    }
  }
}

// ml_dtypes' conventions, which ONNX 1.23's test data follows.
TEST(Float8, NanOverflowAndZeroConventions) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(f32_to_float8(nan, DType::Float8E4M3FN, true), 0x7f);
  EXPECT_EQ(f32_to_float8(-nan, DType::Float8E4M3FN, true), 0xff);
  EXPECT_EQ(f32_to_float8(inf, DType::Float8E4M3FN, false), 0x7f);
  EXPECT_EQ(f32_to_float8(-inf, DType::Float8E4M3FN, true), 0xfe);
  EXPECT_EQ(f32_to_float8(464, DType::Float8E4M3FN, false), 0x7e);  // the tie rounds to even: 448
  EXPECT_EQ(f32_to_float8(465, DType::Float8E4M3FN, false), 0x7f);
  EXPECT_EQ(f32_to_float8(-0.0f, DType::Float8E4M3FN, true), 0x80);
  EXPECT_EQ(f32_to_float8(nan, DType::Float8E5M2, true), 0x7e);
  EXPECT_EQ(f32_to_float8(inf, DType::Float8E5M2, false), 0x7c);
  EXPECT_EQ(f32_to_float8(61440, DType::Float8E5M2, false), 0x7c);  // the tie above the max: inf
  EXPECT_EQ(f32_to_float8(1e9f, DType::Float8E5M2, true), 0x7b);
  for (DType t : {DType::Float8E4M3FNUZ, DType::Float8E5M2FNUZ}) {
    EXPECT_EQ(f32_to_float8(nan, t, true), 0x80);
    EXPECT_EQ(f32_to_float8(-inf, t, false), 0x80);
    EXPECT_EQ(f32_to_float8(-0.0f, t, true), 0x00);
    EXPECT_EQ(f32_to_float8(-1e-30f, t, true), 0x00);
  }
  EXPECT_EQ(f32_to_float8(1.0f, DType::Float8E4M3FN, true), 0x38);
  EXPECT_EQ(f32_to_float8(1.0f, DType::Float8E5M2FNUZ, true), 0x40);
}

// ONNX's reference (numpy_helper.to_float8e8m0) for each rounding mode.
TEST(Float8, E8M0RoundingModes) {
  EXPECT_EQ(f32_to_e8m0(1.0f, true, E8M0Round::Up), 127);
  EXPECT_EQ(f32_to_e8m0(1.5f, true, E8M0Round::Up), 128);
  EXPECT_EQ(f32_to_e8m0(1.5f, true, E8M0Round::Down), 127);
  EXPECT_EQ(f32_to_e8m0(1.5f, true, E8M0Round::Nearest), 128);
  EXPECT_EQ(f32_to_e8m0(1.25f, true, E8M0Round::Nearest), 127);
  EXPECT_EQ(f32_to_e8m0(-4.0f, true, E8M0Round::Up), 129);  // the sign is dropped
  EXPECT_EQ(f32_to_e8m0(3e38f, true, E8M0Round::Up), 254);   // saturates at 2^127
  EXPECT_EQ(f32_to_e8m0(3e38f, false, E8M0Round::Up), 255);
  EXPECT_EQ(f32_to_e8m0(std::numeric_limits<float>::infinity(), true, E8M0Round::Up), 255);
}

// float4e2m1: the 16 codes, sign in bit 3; no infinity, no NaN.
TEST(Float4E2M1, DecodesEveryCode) {
  const float values[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(float8_to_f32(static_cast<uint8_t>(c), DType::Float4E2M1), values[c]) << c;
    float neg = float8_to_f32(static_cast<uint8_t>(c | 8), DType::Float4E2M1);
    EXPECT_EQ(neg, -values[c]) << (c | 8);
    EXPECT_TRUE(std::signbit(neg)) << (c | 8);
  }
  EXPECT_TRUE(dtype_is_narrow_float(DType::Float4E2M1));
  EXPECT_EQ(dtype_packed_bits(DType::Float4E2M1), 4);
}

// The nearest of the eight magnitudes, ties to the even code; above 6 the largest (E2M1 saturates).
int nearest_e2m1(float x) {
  int best = 0;
  double best_err = std::fabs(static_cast<double>(x));
  for (int c = 1; c < 8; ++c) {
    double err = std::fabs(static_cast<double>(float8_to_f32(static_cast<uint8_t>(c), DType::Float4E2M1)) - x);
    if (err < best_err || (err == best_err && c % 2 == 0)) best = c, best_err = err;
  }
  return best;
}

// Every float16 (every rounding boundary of E2M1 is one) and the float32s either side of it, both
// signs, saturate on and off.
TEST(Float4E2M1, EncodesEveryFloat16AndItsNeighboursToTheNearestTiesToEven) {
  const float inf = std::numeric_limits<float>::infinity();
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    float base = f16_to_f32(static_cast<uint16_t>(h));
    for (float x : {base, std::nextafter(base, inf), std::nextafter(base, 0.0f)}) {
      int want = nearest_e2m1(x);
      for (bool sat : {true, false}) {
        ASSERT_EQ(f32_to_float8(x, DType::Float4E2M1, sat), want) << x << " saturate=" << sat;
        ASSERT_EQ(f32_to_float8(-x, DType::Float4E2M1, sat), want | 8) << -x << " saturate=" << sat;
      }
    }
  }
}

// ml_dtypes' conventions (ONNX 1.23's test data): infinities saturate, NaN becomes a zero of the
// opposite sign.
TEST(Float4E2M1, InfinityNanAndZeroConventions) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(f32_to_float8(inf, DType::Float4E2M1, false), 0x7);
  EXPECT_EQ(f32_to_float8(-inf, DType::Float4E2M1, true), 0xf);
  EXPECT_EQ(f32_to_float8(nan, DType::Float4E2M1, true), 0x8);
  EXPECT_EQ(f32_to_float8(-nan, DType::Float4E2M1, true), 0x0);
  EXPECT_EQ(f32_to_float8(-0.0f, DType::Float4E2M1, true), 0x8);
  EXPECT_EQ(f32_to_float8(-1e-40f, DType::Float4E2M1, true), 0x8);
  EXPECT_EQ(f32_to_float8(5.0f, DType::Float4E2M1, true), 0x6);   // the tie between 4 and 6: 4 (even code)
  EXPECT_EQ(f32_to_float8(0.25f, DType::Float4E2M1, true), 0x0);  // between 0 and 0.5: 0
  EXPECT_EQ(f32_to_float8(1e30f, DType::Float4E2M1, false), 0x7);
}

}  // namespace
}  // namespace onnxc::ir
