// Ops that opsets 24-28 added or changed, each against values computed here by hand: Swish,
// SwiGLU, BitCast, BitShift on signed ints, Mod with fmod=0 on floats, CumProd, TensorScatter,
// SpaceToDepth mode=CRD, RotaryEmbedding (opset 23), and DFT's run-time axis with onesided (opset 20).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

TEST(LowerOpset24, SwishAndSwiGLU) {
  ModelBuilder b(28);
  auto* x = b.input("x", DType::Float32, {5});
  auto* g = b.input("g", DType::Float32, {5});
  auto* sw = b.op("Swish", {x}, "sw", DType::Float32, {5});
  sw->producer()->set_attr_float("alpha", 1.5f);
  auto* glu = b.op("SwiGLU", {x, g}, "glu", DType::Float32, {5});
  glu->producer()->set_attr_float("alpha", 0.5f);
  b.output(sw);
  b.output(glu);
  std::vector<float> xv = {-3, -0.5f, 0, 0.75f, 4}, gv = {1, 2, -1, 0.5f, -2}, e_sw, e_glu;
  for (int i = 0; i < 5; ++i) {
    e_sw.push_back(xv[i] * sigmoid(1.5f * xv[i]));
    e_glu.push_back(xv[i] * sigmoid(0.5f * xv[i]) * gv[i]);
  }
  auto out = compile_and_run(b.model(), {HostTensor::f32({5}, xv), HostTensor::f32({5}, gv)}, "swish");
  EXPECT_TRUE(all_close(out[0].values<float>(), e_sw));
  EXPECT_TRUE(all_close(out[1].values<float>(), e_glu));
}

TEST(LowerOpset24, BitCastKeepsTheBits) {
  ModelBuilder b(26);
  auto* x = b.input("x", DType::Float32, {3});
  auto* y = b.op("BitCast", {x}, "y", DType::Int32, {3});
  y->producer()->set_attr_int("to", static_cast<int64_t>(DType::Int32));
  b.output(y);
  std::vector<float> xv = {1.0f, -0.0f, std::nanf("")};
  auto out = compile_and_run(b.model(), {HostTensor::f32({3}, xv)}, "bitcast")[0].values<int32_t>();
  for (int i = 0; i < 3; ++i) {
    int32_t bits;
    std::memcpy(&bits, &xv[i], 4);
    EXPECT_EQ(out[i], bits) << i;
  }
}

// Opset 28: signed BitShift; amounts < 0 or >= the width give 0 (the sign for a right shift).
TEST(LowerOpset24, SignedBitShift) {
  for (const char* dir : {"LEFT", "RIGHT"}) {
    ModelBuilder b(28);
    auto* x = b.input("x", DType::Int8, {5});
    auto* s = b.input("s", DType::Int8, {5});
    auto* y = b.op("BitShift", {x, s}, "y", DType::Int8, {5});
    y->producer()->set_attr_string("direction", dir);
    b.output(y);
    std::vector<int8_t> xv = {-7, 100, -128, 5, -1}, sv = {1, 2, 8, -1, 7};
    auto out = compile_and_run(b.model(), {HostTensor::make(DType::Int8, {5}, xv), HostTensor::make(DType::Int8, {5}, sv)},
                               std::string("shift_") + dir)[0].values<int8_t>();
    std::vector<int8_t> expect = std::string(dir) == "LEFT" ? std::vector<int8_t>{-14, -112, 0, 0, -128}
                                                           : std::vector<int8_t>{-4, 25, -1, 0, -1};
    EXPECT_EQ(out, expect) << dir;
  }
}

// Opset 28: Mod with fmod=0 on floats floors the quotient; the result takes the divisor's sign.
TEST(LowerOpset24, FloatModFloors) {
  ModelBuilder b(28);
  auto* x = b.input("x", DType::Float32, {7});
  auto* y = b.input("y", DType::Float32, {7});
  b.output(b.op("Mod", {x, y}, "z", DType::Float32, {7}));
  const float inf = INFINITY;
  std::vector<float> xv = {5.5f, -5.5f, 5.5f, 0.0f, 3.0f, -3.0f, inf}, yv = {2, 2, -2, -4, inf, inf, 2};
  auto out = compile_and_run(b.model(), {HostTensor::f32({7}, xv), HostTensor::f32({7}, yv)}, "fmod0")[0].values<float>();
  std::vector<float> expect = {1.5f, 0.5f, -0.5f, -0.0f, 3.0f, inf, NAN};
  EXPECT_TRUE(all_close(out, expect));
  EXPECT_TRUE(std::signbit(out[3])) << "0 mod -4 is -0";
}

TEST(LowerOpset24, CumProdForms) {
  std::vector<float> xv = {2, 3, 0, 5, 1, 4};
  struct Form {
    int exclusive, reverse;
    std::vector<float> expect;
  };
  for (const Form& f : {Form{0, 0, {2, 6, 0, 5, 5, 20}}, Form{1, 0, {1, 2, 6, 1, 5, 5}}, Form{0, 1, {0, 0, 0, 20, 4, 4}},
                        Form{1, 1, {0, 0, 1, 4, 4, 1}}}) {
    ModelBuilder b(26);
    auto* x = b.input("x", DType::Float32, {2, 3});
    auto* y = b.op("CumProd", {x, b.const_i64("axis", {1})}, "y", DType::Float32, {2, 3});
    y->producer()->set_attr_int("exclusive", f.exclusive);
    y->producer()->set_attr_int("reverse", f.reverse);
    b.output(y);
    auto out = compile_and_run(b.model(), {HostTensor::f32({2, 3}, xv)}, "cumprod");
    EXPECT_TRUE(all_close(out[0].values<float>(), f.expect)) << f.exclusive << f.reverse;
  }
}

// A [2, 4, 1] cache along axis 1 with a 2-long update at write_indices {1, 3}: linear writes
// positions 1-2 of entry 0 and 3 (then past the end, dropped) of entry 1; circular wraps to 0.
TEST(LowerOpset24, TensorScatterLinearAndCircular) {
  for (const char* mode : {"linear", "circular"}) {
    ModelBuilder b(24);
    auto* past = b.input("past", DType::Float32, {2, 4, 1});
    auto* upd = b.input("upd", DType::Float32, {2, 2, 1});
    auto* idx = b.input("idx", DType::Int64, {2});
    auto* y = b.op("TensorScatter", {past, upd, idx}, "y", DType::Float32, {2, 4, 1});
    y->producer()->set_attr_int("axis", 1);
    y->producer()->set_attr_string("mode", mode);
    b.output(y);
    bool circ = std::string(mode) == "circular";
    auto out = compile_and_run(b.model(), {HostTensor::f32({2, 4, 1}, {0, 0, 0, 0, 0, 0, 0, 0}),
                                           HostTensor::f32({2, 2, 1}, {1, 2, 3, 4}), HostTensor::i64({2}, {1, 3})},
                               std::string("tscatter_") + mode);
    std::vector<float> expect = {0, 1, 2, 0, circ ? 4.0f : 0.0f, 0, 0, 3};
    EXPECT_TRUE(all_close(out[0].values<float>(), expect)) << mode;
  }
}

// SpaceToDepth on [1, 2, 2, 2] with block 2: DCR orders channels (block, c), CRD (opset 28) (c, block).
TEST(LowerOpset24, SpaceToDepthModes) {
  std::vector<float> xv = {0, 1, 2, 3, 10, 11, 12, 13};
  for (const char* mode : {"DCR", "CRD"}) {
    ModelBuilder b(28);
    auto* x = b.input("x", DType::Float32, {1, 2, 2, 2});
    auto* y = b.op("SpaceToDepth", {x}, "y", DType::Float32, {1, 8, 1, 1});
    y->producer()->set_attr_int("blocksize", 2);
    y->producer()->set_attr_string("mode", mode);
    b.output(y);
    auto out = compile_and_run(b.model(), {HostTensor::f32({1, 2, 2, 2}, xv)}, std::string("s2d_") + mode);
    std::vector<float> expect = std::string(mode) == "DCR" ? std::vector<float>{0, 10, 1, 11, 2, 12, 3, 13} : xv;
    EXPECT_TRUE(all_close(out[0].values<float>(), expect)) << mode;
  }
}

// RotaryEmbedding on [b=1, h=1, s=2, d=4] with position_ids, halves and interleaved.
TEST(LowerOpset24, RotaryEmbedding) {
  std::vector<float> xv = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> cosv = {1, 1, 0.5f, 0.25f, 0, -1}, sinv = {0, 0, 0.75f, 0.5f, 1, 0};  // [3, 2]
  struct Form {
    int interleaved;
    std::vector<float> expect;
  };
  // position ids {2, 1}: token 0 reads cos {0, -1}, sin {1, 0}; token 1 cos {0.5, 0.25}, sin {0.75, 0.5}.
  std::vector<Form> forms = {
      {0, {0 * 1 - 1 * 3, -1 * 2 - 0 * 4, 1 * 1 + 0 * 3, 0 * 2 + -1 * 4,
              0.5f * 5 - 0.75f * 7, 0.25f * 6 - 0.5f * 8, 0.75f * 5 + 0.5f * 7, 0.5f * 6 + 0.25f * 8}},
      {1, {0 * 1 - 1 * 2, 1 * 1 + 0 * 2, -1 * 3 - 0 * 4, 0 * 3 + -1 * 4,
              0.5f * 5 - 0.75f * 6, 0.75f * 5 + 0.5f * 6, 0.25f * 7 - 0.5f * 8, 0.5f * 7 + 0.25f * 8}},
  };
  for (const Form& f : forms) {
    ModelBuilder b(23);
    auto* x = b.input("x", DType::Float32, {1, 1, 2, 4});
    auto* c = b.input("cos", DType::Float32, {3, 2});
    auto* s = b.input("sin", DType::Float32, {3, 2});
    auto* p = b.input("pos", DType::Int64, {1, 2});
    auto* y = b.op("RotaryEmbedding", {x, c, s, p}, "y", DType::Float32, {1, 1, 2, 4});
    y->producer()->set_attr_int("interleaved", f.interleaved);
    b.output(y);
    auto out = compile_and_run(b.model(), {HostTensor::f32({1, 1, 2, 4}, xv), HostTensor::f32({3, 2}, cosv),
                                           HostTensor::f32({3, 2}, sinv), HostTensor::i64({1, 2}, {2, 1})},
                               "rotary");
    EXPECT_TRUE(all_close(out[0].values<float>(), f.expect)) << "interleaved " << f.interleaved;
  }
}

// DFT with onesided and the axis given at run time (test_dft_rfft's shapes): the output [1, 6, 10, 2]
// fixes the axis to 1 (axis 2 would give [1, 10, 6, 2]); the bins against a direct sum here, and an
// axis that does not give the declared shape fails the run.
TEST(LowerOpset24, DftOnesidedWithRunTimeAxis) {
  ModelBuilder b(20);
  auto* x = b.input("x", DType::Float32, {1, 10, 10, 1});
  auto* axis = b.input("axis", DType::Int64, {});
  ir::Node* d = b.node("DFT", {x, nullptr, axis}, {{"y", ir::Type::tensor(DType::Float32, ir::Shape{1, 6, 10, 2})}});
  d->set_attr_int("onesided", 1);
  b.output(d->output());
  std::vector<float> xv(100);
  for (int i = 0; i < 100; ++i) xv[i] = static_cast<float>((i * 7) % 13) - 6.0f;
  std::vector<float> want;
  for (int k = 0; k < 6; ++k)
    for (int c = 0; c < 10; ++c) {
      double re = 0, im = 0;
      for (int j = 0; j < 10; ++j) {
        double th = -2 * M_PI * ((j * k) % 10) / 10.0;
        re += xv[j * 10 + c] * std::cos(th);
        im += xv[j * 10 + c] * std::sin(th);
      }
      want.push_back(static_cast<float>(re));
      want.push_back(static_cast<float>(im));
    }
  auto lib = compile(b.model(), "dft_runtime_axis");
  LoadedModel m(lib.so_path);
  HostTensor xt = HostTensor::f32({1, 10, 10, 1}, xv);
  for (int64_t a : {int64_t{1}, int64_t{-3}}) {
    auto out = m.run({xt, HostTensor::i64({}, {a})});
    EXPECT_TRUE(all_close(out[0].values<float>(), want, 1e-5, 1e-4)) << a;
  }
  EXPECT_THROW(m.run({xt, HostTensor::i64({}, {2})}), std::runtime_error);
}

}  // namespace
}  // namespace onnxc::test
