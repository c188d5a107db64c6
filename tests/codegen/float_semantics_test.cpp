// IEEE float semantics through fused kernels: ±finfo.max, ±inf, NaN and -0 operands through
// elementwise chains, a MatMul epilogue and a masked softmax give what the ops compute one at a time
// in IEEE single precision (as ONNX Runtime does), bit for bit: no reassociation, no x*0 -> 0.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

constexpr float kMax = std::numeric_limits<float>::max();
constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// Same value: equal bits, or both NaN (payloads may differ).
bool same(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  uint32_t ua, ub;
  std::memcpy(&ua, &a, 4);
  std::memcpy(&ub, &b, 4);
  return ua == ub;
}

::testing::AssertionResult all_same(const std::vector<float>& got, const std::vector<float>& want,
                                    const std::vector<float>& x, const std::vector<float>& y) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " vs " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (!same(got[i], want[i]))
      return ::testing::AssertionFailure() << "element " << i << " (x=" << x[i] << ", y=" << y[i] << "): got "
                                           << got[i] << ", IEEE gives " << want[i];
  return ::testing::AssertionSuccess();
}

// Inputs x and y of length n and (x + y) - y, which IEEE arithmetic does not fold to x.
std::tuple<ir::Value*, ir::Value*, ir::Value*> round_trip(ModelBuilder& b, const Dim& n) {
  auto* x = b.input("x", DType::Float32, {n});
  auto* y = b.input("y", DType::Float32, {n});
  return {x, y, b.op("Sub", {b.op("Add", {x, y}, "xy", DType::Float32, {n}), y}, "back", DType::Float32, {n})};
}

// HF BERT's extended mask added to a position bias: where the mask is 1, (1 - m) * finfo.min is -0
// and the bias comes through unchanged. Reassociated as bias + min - m*min it would be 0.
TEST(FloatSemantics, HfExtendedMaskKeepsBias) {
  ModelBuilder b;
  Dim n = Dim::symbol("batch"), s = Dim::symbol("seq");
  auto* bias = b.input("bias", DType::Float32, {n, 2, s, s});
  auto* mask = b.input("mask", DType::Int64, {n, s});
  auto* mu = b.op("Unsqueeze", {mask, b.const_i64("axes", {1, 2})}, "mu", DType::Int64, {n, 1, 1, s});
  auto* cast = b.node("Cast", {mu}, {{"mf", ir::Type::tensor(DType::Float32, ir::Shape{n, 1, 1, s})}});
  cast->set_attr_int("to", static_cast<int64_t>(DType::Float32));
  auto* inv = b.op("Sub", {b.const_f32("one", {}, {1.0f}), cast->output(0)}, "inv", DType::Float32, {n, 1, 1, s});
  auto* ext = b.op("Mul", {inv, b.const_f32("min", {}, {-kMax})}, "ext", DType::Float32, {n, 1, 1, s});
  b.output(b.op("Add", {bias, ext}, "y", DType::Float32, {n, 2, s, s}));

  const int bn = 2, sn = 5;
  std::vector<float> bv(bn * 2 * sn * sn);
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = std::sin(float(i) * 0.7f);
  std::vector<int64_t> mv = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
  std::vector<float> want(bv.size()), xs(bv.size()), ys(bv.size());
  for (int i = 0; i < bn; ++i)
    for (int k = 0; k < 2 * sn * sn; ++k) {
      int idx = i * 2 * sn * sn + k, col = k % sn;
      float m = float(mv[i * sn + col]);
      want[idx] = bv[idx] + (1.0f - m) * -kMax;
      xs[idx] = bv[idx];
      ys[idx] = m;
    }
  auto out = compile_and_run(b.model(), {HostTensor::f32({bn, 2, sn, sn}, bv), HostTensor::i64({bn, sn}, mv)}, "hf_mask");
  EXPECT_TRUE(all_same(out[0].values<float>(), want, xs, ys));
  EXPECT_EQ(out[0].values<float>()[0], bv[0]);  // the bias itself, not 0
}

// Every pair of special operands through one fused elementwise kernel; scalar constants are baked
// into the kernel as literals, where the simplifier sees them.
TEST(FloatSemantics, SpecialOperandsThroughFusedChain) {
  const std::vector<float> special = {0.0f, -0.0f, 1.0f, -2.5f, 3e38f, kMax, -kMax, kInf, -kInf, kNaN, 1e-45f};
  std::vector<float> xs, ys;
  for (float a : special)
    for (float c : special) xs.push_back(a), ys.push_back(c);
  const int64_t len = static_cast<int64_t>(xs.size());

  ModelBuilder b;
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n});
  auto* y = b.input("y", DType::Float32, {n});
  auto f = [&](const std::string& op, ir::Value* p, ir::Value* q, const std::string& name) {
    return b.op(op, {p, q}, name, DType::Float32, {n});
  };
  auto* zero = b.const_f32("zero", {}, {0.0f});
  auto* one = b.const_f32("one", {}, {1.0f});
  auto* fmin = b.const_f32("fmin", {}, {-kMax});
  b.output(f("Sub", f("Add", x, y, "xy"), y, "o_reassoc"));                      // (x + y) - y
  b.output(f("Mul", x, zero, "o_times_zero"));                                    // x * 0
  b.output(f("Sub", x, x, "o_self_sub"));                                         // x - x
  b.output(f("Mul", f("Div", x, y, "xdy"), y, "o_div_mul"));                      // (x / y) * y
  b.output(f("Add", f("Mul", f("Sub", one, y, "omy"), fmin, "ext"), x, "o_mask"));  // (1 - y) * min + x
  b.output(f("Add", x, zero, "o_plus_zero"));                                     // x + 0 (-0 + 0 = +0)

  std::vector<std::vector<float>> want(6, std::vector<float>(xs.size()));
  for (size_t i = 0; i < xs.size(); ++i) {
    float a = xs[i], c = ys[i];
    float s = a + c;
    want[0][i] = s - c;
    want[1][i] = a * 0.0f;
    want[2][i] = a - a;
    float q = a / c;
    want[3][i] = q * c;
    float e = (1.0f - c) * -kMax;
    want[4][i] = e + a;
    want[5][i] = a + 0.0f;
  }
  auto out = compile_and_run(b.model(), {HostTensor::f32({len}, xs), HostTensor::f32({len}, ys)}, "special_chain");
  ASSERT_EQ(out.size(), 6u);
  for (int k = 0; k < 6; ++k) EXPECT_TRUE(all_same(out[k].values<float>(), want[k], xs, ys)) << "output " << k;
}

// Float arithmetic feeding a non-float result (a bool comparison, an integer cast) in the same
// fused kernel keeps IEEE semantics too: (x + y) - y == x is false where x + y rounds.
TEST(FloatSemantics, FloatArithmeticUnderBoolAndIntResults) {
  const std::vector<float> xs = {1.0f, 5.0f, -3.0f, 0.5f, 1.0f, 2.0f, 7.0f};
  const std::vector<float> ys = {3e38f, 1e30f, 1e20f, 0.0f, 2.0f, -kMax, 1e8f};
  const int64_t len = static_cast<int64_t>(xs.size());
  ModelBuilder b;
  Dim n = Dim::symbol("n");
  auto [x, y, back] = round_trip(b, n);
  b.output(b.op("Equal", {back, x}, "o_eq", DType::Bool, {n}));
  auto* cast = b.node("Cast", {back}, {{"o_int", ir::Type::tensor(DType::Int32, ir::Shape{n})}});
  cast->set_attr_int("to", static_cast<int64_t>(DType::Int32));
  b.output(cast->output(0));

  auto out = compile_and_run(b.model(), {HostTensor::f32({len}, xs), HostTensor::f32({len}, ys)}, "float_under_bool");
  ASSERT_EQ(out.size(), 2u);
  std::vector<uint8_t> eq = out[0].values<uint8_t>();
  std::vector<int32_t> as_int = out[1].values<int32_t>();
  for (size_t i = 0; i < xs.size(); ++i) {
    volatile float s = xs[i] + ys[i];  // volatile: the test's own compiler must not fold it either
    float r = s - ys[i];
    EXPECT_EQ(eq[i] != 0, r == xs[i]) << "x=" << xs[i] << " y=" << ys[i];
    EXPECT_EQ(as_int[i], static_cast<int32_t>(r)) << "x=" << xs[i] << " y=" << ys[i];
  }
  EXPECT_EQ(eq[0], 0);  // 1 + 3e38 - 3e38 is 0, not 1
}

// A select (Where) of IEEE arithmetic inside more arithmetic: the select is kept as a choice among
// bit patterns while Halide lowers (codegen/emit/strict_float.h); what it chooses, and what is
// computed from it, is still the IEEE value, for NaN, ±inf, -0 and values that a reassociated
// (x + y) - y would turn into x.
TEST(FloatSemantics, SelectAmongStrictValues) {
  const std::vector<float> xs = {1.0f, -0.0f, kNaN, kInf, 5.0f, -kInf, 2.0f, 0.0f, 3.0f};
  const std::vector<float> ys = {3e38f, 0.0f, 1.0f, 1.0f, kNaN, -kMax, -3e38f, -0.0f, -kInf};
  const int64_t len = static_cast<int64_t>(xs.size());
  ModelBuilder b;
  Dim n = Dim::symbol("n");
  auto [x, y, back] = round_trip(b, n);
  auto* gt = b.op("Greater", {x, y}, "gt", DType::Bool, {n});
  auto* w = b.op("Where", {gt, back, y}, "w", DType::Float32, {n});
  b.output(w);
  b.output(b.op("Mul", {w, x}, "wx", DType::Float32, {n}));

  auto out = compile_and_run(b.model(), {HostTensor::f32({len}, xs), HostTensor::f32({len}, ys)}, "select_strict");
  ASSERT_EQ(out.size(), 2u);
  std::vector<float> want_w, want_wx;
  for (size_t i = 0; i < xs.size(); ++i) {
    volatile float s = xs[i] + ys[i];
    float r = s - ys[i];
    const float c = xs[i] > ys[i] ? r : ys[i];
    want_w.push_back(c);
    want_wx.push_back(c * xs[i]);
  }
  EXPECT_TRUE(all_same(out[0].values<float>(), want_w, xs, ys));
  EXPECT_TRUE(all_same(out[1].values<float>(), want_wx, xs, ys));
}

// Transcendental ops on special operands give what libm gives (NaN stays NaN, ±inf saturate).
TEST(FloatSemantics, TranscendentalsOfSpecialOperands) {
  const std::vector<float> xs = {0.0f, -0.0f, 1.0f, -2.5f, 30.0f, -30.0f, 100.0f, -100.0f, kMax, -kMax, kInf, -kInf, kNaN};
  const int64_t len = static_cast<int64_t>(xs.size());
  struct Op {
    const char* name;
    float (*f)(float);
  };
  const std::vector<Op> ops = {{"Exp", [](float x) { return std::exp(x); }},
                               {"Tanh", [](float x) { return std::tanh(x); }},
                               {"Sigmoid", [](float x) { return 1.0f / (1.0f + std::exp(-x)); }},
                               {"Erf", [](float x) { return std::erf(x); }},
                               {"Sqrt", [](float x) { return std::sqrt(x); }},
                               {"Log", [](float x) { return std::log(x); }},
                               {"Elu", [](float x) { return x < 0 ? std::exp(x) - 1.0f : x; }}};
  ModelBuilder b;
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n});
  for (const Op& o : ops) b.output(b.op(o.name, {x}, std::string("y_") + o.name, DType::Float32, {n}));
  auto out = compile_and_run(b.model(), {HostTensor::f32({len}, xs)}, "special_math");
  ASSERT_EQ(out.size(), ops.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    std::vector<float> got = out[k].values<float>();
    for (size_t i = 0; i < xs.size(); ++i) {
      float want = ops[k].f(xs[i]);
      bool ok = std::isnan(want) ? std::isnan(got[i])
                                 : (std::isinf(want) ? got[i] == want : std::fabs(got[i] - want) <= 2e-6f * std::fabs(want) + 1e-7f);
      EXPECT_TRUE(ok) << ops[k].name << "(" << xs[i] << ") = " << got[i] << ", libm gives " << want;
    }
  }
}

// A MatMul with an epilogue that adds and subtracts finfo.max: IEEE gives exactly 0 where
// |A·B| is far below max's ulp; a reassociated epilogue would give A·B.
TEST(FloatSemantics, MatMulEpilogueIsNotReassociated) {
  ModelBuilder b;
  Dim m = Dim::symbol("m");
  auto* a = b.input("a", DType::Float32, {m, 3});
  auto* w = b.const_f32("w", {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  auto* big = b.const_f32("big", {4}, {kMax, kMax, -kMax, kMax});
  auto* mm = b.op("MatMul", {a, w}, "mm", DType::Float32, {m, 4});
  auto* up = b.op("Add", {mm, big}, "up", DType::Float32, {m, 4});
  b.output(b.op("Sub", {up, big}, "y", DType::Float32, {m, 4}));
  auto out = compile_and_run(b.model(), {HostTensor::f32({2, 3}, {1, -2, 0.5f, 3, 0.25f, -1})}, "mm_epilogue");
  for (float v : out[0].values<float>()) EXPECT_TRUE(same(v, 0.0f)) << v;
}

// Softmax over scores masked the HF way: a fully masked row is uniform (every score rounds to
// finfo.min), a row with +inf or NaN is NaN, and masked entries of a partly masked row are 0.
TEST(FloatSemantics, MaskedSoftmaxWithSpecialScores) {
  ModelBuilder b(13);
  Dim r = Dim::symbol("rows");
  auto* x = b.input("x", DType::Float32, {r, 4});
  auto* mask = b.input("m", DType::Float32, {r, 4});
  auto* inv = b.op("Sub", {b.const_f32("one", {}, {1.0f}), mask}, "inv", DType::Float32, {r, 4});
  auto* ext = b.op("Mul", {inv, b.const_f32("min", {}, {-kMax})}, "ext", DType::Float32, {r, 4});
  auto* sc = b.op("Add", {x, ext}, "scores", DType::Float32, {r, 4});
  b.output(b.op("Softmax", {sc}, "p", DType::Float32, {r, 4}));
  std::vector<float> xv = {0.5f, -1, 2, 0.25f,   0.5f, -1, 2, 0.25f,   1, kInf, 0, 0,   1, kNaN, 0, 0};
  std::vector<float> mv = {1, 1, 0, 0,            0, 0, 0, 0,           1, 1, 1, 1,      1, 1, 1, 1};
  auto out = compile_and_run(b.model(), {HostTensor::f32({4, 4}, xv), HostTensor::f32({4, 4}, mv)}, "masked_softmax");
  std::vector<float> p = out[0].values<float>();
  double e0 = std::exp(0.5), e1 = std::exp(-1.0);
  EXPECT_NEAR(p[0], e0 / (e0 + e1), 1e-6);
  EXPECT_NEAR(p[1], e1 / (e0 + e1), 1e-6);
  EXPECT_TRUE(same(p[2], 0.0f) && same(p[3], 0.0f)) << p[2] << " " << p[3];
  for (int k = 4; k < 8; ++k) EXPECT_NEAR(p[k], 0.25f, 1e-6) << k;
  for (int k = 8; k < 16; ++k) EXPECT_TRUE(std::isnan(p[k])) << "element " << k << " = " << p[k];
}

}  // namespace
}  // namespace onnxc::test
