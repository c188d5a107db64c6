// Elementwise lowerings: unary math against libm, broadcasting over static and symbolic dims, one
// library run with two input shapes, integer division and modulo, casts and bool values, fusion.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::Attribute;
using ir::DType;
using ir::Dim;

TEST(LowerElementwise, AddBroadcastDynamic) {
  ModelBuilder b;
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n, 3});
  auto* y = b.input("y", DType::Float32, {3});
  b.output(b.op("Add", {x, y}, "z", DType::Float32, {n, 3}));
  auto r = compile(b.model(), "add_bcast");
  EXPECT_EQ(r.kernels, 1);
  LoadedModel lib(r.so_path);
  for (int rows : {2, 5}) {  // one library, two shapes
    std::vector<float> xv(rows * 3), expect(rows * 3);
    for (int i = 0; i < rows * 3; ++i) xv[i] = float(i);
    for (int i = 0; i < rows * 3; ++i) expect[i] = xv[i] + float(10 * (i % 3 + 1));
    auto out = lib.run({HostTensor::f32({rows, 3}, xv), HostTensor::f32({3}, {10, 20, 30})});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dims, (std::vector<int64_t>{rows, 3}));
    EXPECT_TRUE(all_close(out[0].values<float>(), expect));
  }
}

TEST(LowerElementwise, MultidirectionalBroadcast) {
  ModelBuilder b;
  auto* x = b.input("x", DType::Float32, {2, 1, 3});
  auto* y = b.input("y", DType::Float32, {4, 1});
  b.output(b.op("Mul", {x, y}, "z", DType::Float32, {2, 4, 3}));
  std::vector<float> xv = {1, 2, 3, 4, 5, 6}, yv = {1, 10, 100, 1000}, expect;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) expect.push_back(xv[i * 3 + k] * yv[j]);
  auto out = compile_and_run(b.model(), {HostTensor::f32({2, 1, 3}, xv), HostTensor::f32({4, 1}, yv)});
  EXPECT_EQ(out[0].dims, (std::vector<int64_t>{2, 4, 3}));
  EXPECT_TRUE(all_close(out[0].values<float>(), expect));
}

// A symbolic dim that is 1 at run time broadcasts against a static one.
TEST(LowerElementwise, SymbolicDimBroadcastsWhenOne) {
  ModelBuilder b;
  Dim m = Dim::symbol("m");
  auto* x = b.input("x", DType::Float32, {m, 4});
  auto* y = b.input("y", DType::Float32, {3, 1});
  b.output(b.op("Sub", {x, y}, "z", DType::Float32, {3, 4}));
  auto out = compile_and_run(b.model(), {HostTensor::f32({1, 4}, {1, 2, 3, 4}), HostTensor::f32({3, 1}, {1, 2, 3})});
  EXPECT_TRUE(all_close(out[0].values<float>(), {0, 1, 2, 3, -1, 0, 1, 2, -2, -1, 0, 1}));
}

struct UnaryCase {
  std::string op;
  std::function<double(double)> ref;
  std::vector<std::pair<std::string, float>> attrs;
};

TEST(LowerElementwise, UnaryMathMatchesLibm) {
  auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
  std::vector<UnaryCase> cases = {
      {"Exp", [](double x) { return std::exp(x); }, {}},
      {"Tanh", [](double x) { return std::tanh(x); }, {}},
      {"Erf", [](double x) { return std::erf(x); }, {}},
      {"Sigmoid", sigmoid, {}},
      {"Relu", [](double x) { return std::max(x, 0.0); }, {}},
      {"Neg", [](double x) { return -x; }, {}},
      {"Abs", [](double x) { return std::fabs(x); }, {}},
      {"Floor", [](double x) { return std::floor(x); }, {}},
      {"Ceil", [](double x) { return std::ceil(x); }, {}},
      {"Round", [](double x) { return std::nearbyint(x); }, {}},  // ties to even
      {"Sign", [](double x) { return double((x > 0) - (x < 0)); }, {}},
      {"Sin", [](double x) { return std::sin(x); }, {}},
      {"Cos", [](double x) { return std::cos(x); }, {}},
      {"Softplus", [](double x) { return std::log1p(std::exp(x)); }, {}},
      {"LeakyRelu", [](double x) { return x < 0 ? 0.2 * x : x; }, {{"alpha", 0.2f}}},
      {"Elu", [](double x) { return x < 0 ? 0.5 * (std::exp(x) - 1) : x; }, {{"alpha", 0.5f}}},
      {"HardSigmoid", [](double x) { return std::clamp(0.2 * x + 0.5, 0.0, 1.0); }, {}},
      {"Gelu", [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, {}},
      {"Softsign", [](double x) { return x / (1 + std::fabs(x)); }, {}},
  };
  ModelBuilder b(20);  // Gelu is opset 20
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n});
  for (const auto& c : cases) {
    ir::Node* node = b.node(c.op, {x}, {{c.op + "_out", ir::Type::tensor(DType::Float32, ir::Shape{n})}});
    for (const auto& [name, v] : c.attrs) node->set_attr_float(name, v);
    b.output(node->output());
  }
  std::vector<float> xv;
  for (int i = -40; i <= 40; ++i) xv.push_back(i * 0.125f);
  xv.push_back(2.5f);
  xv.push_back(-0.5f);
  auto out = compile_and_run(b.model(), {HostTensor::f32({int64_t(xv.size())}, xv)}, "unary");
  ASSERT_EQ(out.size(), cases.size());
  for (size_t k = 0; k < cases.size(); ++k) {
    std::vector<float> expect;
    for (float v : xv) expect.push_back(static_cast<float>(cases[k].ref(v)));
    EXPECT_TRUE(all_close(out[k].values<float>(), expect, 1e-5, 1e-6)) << cases[k].op;
  }
}

TEST(LowerElementwise, SqrtLogReciprocalPowOnPositives) {
  ModelBuilder b;
  auto* x = b.input("x", DType::Float32, {4});
  auto* e = b.input("e", DType::Float32, {4});
  auto* two = b.constant("two", ir::Tensor::scalar<float>(DType::Float32, 2.0f));
  b.output(b.op("Sqrt", {x}, "sqrt", DType::Float32, {4}));
  b.output(b.op("Log", {x}, "log", DType::Float32, {4}));
  b.output(b.op("Reciprocal", {x}, "recip", DType::Float32, {4}));
  b.output(b.op("Pow", {x, two}, "sq", DType::Float32, {4}));
  b.output(b.op("Pow", {x, e}, "pow", DType::Float32, {4}));
  std::vector<float> xv = {0.5f, 1, 2, 9}, ev = {3, 0.5f, -1, 1.5f};
  auto out = compile_and_run(b.model(), {HostTensor::f32({4}, xv), HostTensor::f32({4}, ev)});
  std::vector<std::vector<float>> expect(5);
  for (int i = 0; i < 4; ++i) {
    expect[0].push_back(std::sqrt(xv[i]));
    expect[1].push_back(std::log(xv[i]));
    expect[2].push_back(1 / xv[i]);
    expect[3].push_back(xv[i] * xv[i]);
    expect[4].push_back(std::pow(xv[i], ev[i]));
  }
  for (int k = 0; k < 5; ++k) EXPECT_TRUE(all_close(out[k].values<float>(), expect[k])) << k;
}

TEST(LowerElementwise, IntegerDivAndModFollowOnnx) {
  ModelBuilder b;
  auto* a = b.input("a", DType::Int64, {4});
  auto* d = b.input("d", DType::Int64, {4});
  b.output(b.op("Div", {a, d}, "div", DType::Int64, {4}));
  b.output(b.op("Mod", {a, d}, "mod", DType::Int64, {4}));
  ir::Node* fm = b.node("Mod", {a, d}, {{"fmod", ir::Type::tensor(DType::Int64, ir::Shape{4})}});
  fm->set_attr_int("fmod", 1);
  b.output(fm->output());
  auto out = compile_and_run(b.model(), {HostTensor::i64({4}, {7, -7, 7, -7}), HostTensor::i64({4}, {2, 2, -2, -2})});
  EXPECT_EQ(out[0].values<int64_t>(), (std::vector<int64_t>{3, -3, -3, 3}));   // truncates
  EXPECT_EQ(out[1].values<int64_t>(), (std::vector<int64_t>{1, 1, -1, -1}));   // divisor's sign
  EXPECT_EQ(out[2].values<int64_t>(), (std::vector<int64_t>{1, -1, 1, -1}));   // dividend's sign
}

TEST(LowerElementwise, ComparisonsWhereAndCasts) {
  ModelBuilder b;
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n});
  auto* y = b.input("y", DType::Float32, {n});
  auto* less = b.op("Less", {x, y}, "less", DType::Bool, {n});
  auto* eq = b.op("Equal", {x, y}, "eq", DType::Bool, {n});
  auto* both = b.op("Or", {less, eq}, "le", DType::Bool, {n});
  b.output(both);
  b.output(b.op("Where", {less, x, y}, "min", DType::Float32, {n}));
  ir::Node* c = b.node("Cast", {x}, {{"as_i64", ir::Type::tensor(DType::Int64, ir::Shape{n})}});
  c->set_attr_int("to", 7);
  b.output(c->output());
  ir::Node* nb = b.node("Not", {both}, {{"gt", ir::Type::tensor(DType::Bool, ir::Shape{n})}});
  b.output(nb->output());
  auto out = compile_and_run(b.model(), {HostTensor::f32({4}, {1.5f, -2.7f, 3, 4}), HostTensor::f32({4}, {2, -3, 3, 0})});
  EXPECT_EQ(out[0].values<uint8_t>(), (std::vector<uint8_t>{1, 0, 1, 0}));
  EXPECT_TRUE(all_close(out[1].values<float>(), {1.5f, -3, 3, 0}));
  EXPECT_EQ(out[2].values<int64_t>(), (std::vector<int64_t>{1, -2, 3, 4}));  // truncation
  EXPECT_EQ(out[3].values<uint8_t>(), (std::vector<uint8_t>{0, 1, 0, 1}));
}

TEST(LowerElementwise, ClipWithOptionalBounds) {
  ModelBuilder b(13);
  auto* x = b.input("x", DType::Float32, {5});
  auto* lo = b.constant("lo", ir::Tensor::scalar<float>(DType::Float32, -1.0f));
  auto* hi = b.constant("hi", ir::Tensor::scalar<float>(DType::Float32, 2.0f));
  b.output(b.op("Clip", {x, lo, hi}, "both", DType::Float32, {5}));
  b.output(b.op("Clip", {x, nullptr, hi}, "upper", DType::Float32, {5}));
  auto out = compile_and_run(b.model(), {HostTensor::f32({5}, {-3, -0.5f, 0, 1.5f, 7})});
  EXPECT_TRUE(all_close(out[0].values<float>(), {-1, -0.5f, 0, 1.5f, 2}));
  EXPECT_TRUE(all_close(out[1].values<float>(), {-3, -0.5f, 0, 1.5f, 2}));
}

// Mul -> Add -> Relu chain (with a broadcast bias) is one kernel.
TEST(LowerElementwise, ChainFusesIntoOneKernel) {
  ModelBuilder b;
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n, 2});
  auto* s = b.const_f32("s", {}, {2.0f});
  auto* bias = b.const_f32("bias", {2}, {-1, 1});
  auto* m = b.op("Mul", {x, s}, "m", DType::Float32, {n, 2});
  auto* a = b.op("Add", {m, bias}, "a", DType::Float32, {n, 2});
  b.output(b.op("Relu", {a}, "y", DType::Float32, {n, 2}));
  auto r = compile(b.model(), "chain");
  EXPECT_EQ(r.kernels, 1);
  LoadedModel lib(r.so_path);
  auto out = lib.run({HostTensor::f32({2, 2}, {0.25f, -1, 1, 3})});
  EXPECT_TRUE(all_close(out[0].values<float>(), {0, 0, 1, 7}));
}

}  // namespace
}  // namespace onnxc::test
