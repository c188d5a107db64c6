// Reduction lowerings: axes as input (opset 13+) and attribute, keepdims, symbolic extents, ArgMax
// with first and last index.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

// x: [n, 3, 4] with x[i][j][k] = i*12 + j*4 + k - 10.
std::vector<float> iota3(int n) {
  std::vector<float> v;
  for (int i = 0; i < n * 12; ++i) v.push_back(float(i - 10));
  return v;
}

TEST(LowerReduce, SumMeanMaxOverAxes) {
  ModelBuilder b(18);
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n, 3, 4});
  auto* last = b.const_i64("last", {-1});
  auto* mid = b.const_i64("mid", {1});
  b.output(b.op("ReduceSum", {x, last}, "sum_last", DType::Float32, {n, 3, 1}));
  ir::Node* mean = b.node("ReduceMean", {x, mid}, {{"mean_mid", ir::Type::tensor(DType::Float32, ir::Shape{n, 4})}});
  mean->set_attr_int("keepdims", 0);
  b.output(mean->output());
  ir::Node* mx = b.node("ReduceMax", {x}, {{"max_all", ir::Type::tensor(DType::Float32, ir::Shape{})}});
  mx->set_attr_int("keepdims", 0);
  b.output(mx->output());
  b.output(b.op("ReduceL2", {x, last}, "l2_last", DType::Float32, {n, 3, 1}));
  auto r = compile(b.model(), "reduce");
  LoadedModel lib(r.so_path);
  for (int rows : {1, 2}) {
    auto xv = iota3(rows);
    auto out = lib.run({HostTensor::f32({rows, 3, 4}, xv)});
    std::vector<float> sum_last, mean_mid, l2;
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < 3; ++j) {
        float s = 0, q = 0;
        for (int k = 0; k < 4; ++k) s += xv[i * 12 + j * 4 + k], q += xv[i * 12 + j * 4 + k] * xv[i * 12 + j * 4 + k];
        sum_last.push_back(s);
        l2.push_back(std::sqrt(q));
      }
    for (int i = 0; i < rows; ++i)
      for (int k = 0; k < 4; ++k) {
        float s = 0;
        for (int j = 0; j < 3; ++j) s += xv[i * 12 + j * 4 + k];
        mean_mid.push_back(s / 3);
      }
    EXPECT_EQ(out[0].dims, (std::vector<int64_t>{rows, 3, 1}));
    EXPECT_TRUE(all_close(out[0].values<float>(), sum_last));
    EXPECT_EQ(out[1].dims, (std::vector<int64_t>{rows, 4}));
    EXPECT_TRUE(all_close(out[1].values<float>(), mean_mid));
    EXPECT_TRUE(all_close(out[2].values<float>(), {float(rows * 12 - 11)}));
    EXPECT_TRUE(all_close(out[3].values<float>(), l2));
  }
}

TEST(LowerReduce, AxesAttributeBeforeOpset18) {
  ModelBuilder b(13);
  auto* x = b.input("x", DType::Float32, {2, 3});
  ir::Node* m = b.node("ReduceMin", {x}, {{"min0", ir::Type::tensor(DType::Float32, ir::Shape{3})}});
  m->set_attr_ints("axes", {0});
  m->set_attr_int("keepdims", 0);
  b.output(m->output());
  ir::Node* p = b.node("ReduceProd", {x}, {{"prod1", ir::Type::tensor(DType::Float32, ir::Shape{2, 1})}});
  p->set_attr_ints("axes", {-1});
  b.output(p->output());
  auto out = compile_and_run(b.model(), {HostTensor::f32({2, 3}, {3, -1, 2, 0.5f, 4, -6})});
  EXPECT_TRUE(all_close(out[0].values<float>(), {0.5f, -1, -6}));
  EXPECT_TRUE(all_close(out[1].values<float>(), {-6, -12}));
}

TEST(LowerReduce, ArgMaxFirstAndLast) {
  ModelBuilder b(13);
  auto* x = b.input("x", DType::Float32, {2, 4});
  ir::Node* first = b.node("ArgMax", {x}, {{"first", ir::Type::tensor(DType::Int64, ir::Shape{2, 1})}});
  first->set_attr_int("axis", 1);
  b.output(first->output());
  ir::Node* last = b.node("ArgMax", {x}, {{"last", ir::Type::tensor(DType::Int64, ir::Shape{2})}});
  last->set_attr_int("axis", 1);
  last->set_attr_int("keepdims", 0);
  last->set_attr_int("select_last_index", 1);
  b.output(last->output());
  ir::Node* amin = b.node("ArgMin", {x}, {{"amin", ir::Type::tensor(DType::Int64, ir::Shape{1, 4})}});
  b.output(amin->output());
  auto out = compile_and_run(b.model(), {HostTensor::f32({2, 4}, {1, 5, 5, 2, 7, 0, 7, -1})});
  EXPECT_EQ(out[0].values<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(out[1].values<int64_t>(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(out[2].values<int64_t>(), (std::vector<int64_t>{0, 1, 0, 1}));
}


// NaN-aware equality within a relative tolerance (infinities must match exactly).
bool same_ieee(const std::vector<float>& got, const std::vector<double>& want, double rtol = 2e-6) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    if (std::isnan(w) ? !std::isnan(g) : std::isinf(w) ? g != w : std::fabs(g - w) > rtol * std::fabs(w) + 1e-30) {
      ADD_FAILURE() << "element " << i << ": got " << g << ", want " << w;
      return false;
    }
  }
  return true;
}

// ReduceLogSum and ReduceLogSumExp over rows holding NaN, ±inf and large finite values, against the
// formulas in double: Halide's log polynomial gave log(inf) = 88.7 and a finite log(NaN), and
// log(sum(exp(x))) computed directly overflowed from x = 88.7 (a row of 1e30 gave 1.69).
TEST(LowerReduce, LogSumAndLogSumExpKeepIeeeValues) {
  const float inf = INFINITY, nan = NAN;
  const std::vector<std::vector<float>> rows = {
      {nan, 1, 2, 3},    {inf, 1, 2, 3},      {-inf, 1, 2, 3},   {-inf, -inf, -inf, -inf}, {inf, -inf, 0, 0},
      {1e30f, 1e30f, 1, 1}, {-3e38f, 3e38f, -3e38f, 1}, {0, 0, 0, 0}, {-1, -2, 0.5f, 3}, {nan, inf, -inf, 1},
      {100, 99, -50, 0}, {-100, -101, -200, -300}};
  std::vector<float> xv;
  std::vector<double> lse, logsum;
  for (const auto& r : rows) {
    xv.insert(xv.end(), r.begin(), r.end());
    double top = -INFINITY, sum = 0;
    bool any_nan = false;
    for (float v : r) any_nan |= std::isnan(v), top = std::isfinite(v) ? std::max(top, double(v)) : top, sum += v;
    double m = std::isfinite(top) ? top : 0, e = 0;
    for (float v : r) e += std::exp(double(v) - m);
    lse.push_back(any_nan ? NAN : std::log(e) + m);
    logsum.push_back(std::log(sum));
  }
  const int n = static_cast<int>(rows.size());
  ModelBuilder b(18);
  auto* x = b.input("x", DType::Float32, {n, 4});
  auto* axis = b.const_i64("axis", {1});
  b.output(b.op("ReduceLogSumExp", {x, axis}, "lse", DType::Float32, {n, 1}));
  b.output(b.op("ReduceLogSum", {x, axis}, "logsum", DType::Float32, {n, 1}));
  auto out = compile_and_run(b.model(), {HostTensor::f32({n, 4}, xv)});
  EXPECT_TRUE(same_ieee(out[0].values<float>(), lse));
  EXPECT_TRUE(same_ieee(out[1].values<float>(), logsum));
}

// Inputs that are empty at run time (a symbolic dim of 0): a reduced axis of length 0 gives each
// reduction's identity as ONNX defines it (sum 0, mean NaN, max -inf, min +inf, prod 1, log-sum-exp
// -inf), a kept axis of length 0 an empty output; ArgMax over an empty kept axis is empty too.
TEST(LowerReduce, EmptyReducedAndKeptAxes) {
  ModelBuilder b(18);
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n, 3});
  auto* first = b.const_i64("first", {0});
  auto* last = b.const_i64("last", {1});
  const std::vector<std::pair<std::string, double>> ops = {{"ReduceSum", 0.0},         {"ReduceMean", NAN},
                                                           {"ReduceMax", -INFINITY},   {"ReduceMin", INFINITY},
                                                           {"ReduceProd", 1.0},        {"ReduceLogSumExp", -INFINITY},
                                                           {"ReduceL2", 0.0},          {"ReduceLogSum", -INFINITY}};
  for (const auto& [op, id] : ops) b.output(b.op(op, {x, first}, op + "_0", DType::Float32, {1, 3}));
  for (const auto& [op, id] : ops) b.output(b.op(op, {x, last}, op + "_1", DType::Float32, {n, 1}));
  ir::Node* am = b.node("ArgMax", {x}, {{"argmax", ir::Type::tensor(DType::Int64, ir::Shape{n, 1})}});
  am->set_attr_int("axis", 1);
  b.output(am->output());
  LoadedModel lib(compile(b.model(), "reduce_empty").so_path);
  for (int rows : {0, 2}) {
    std::vector<float> xv = {1, -2, 3, 4, 0.5f, -6};
    xv.resize(rows * 3);
    auto out = lib.run({HostTensor::f32({rows, 3}, xv)});
    ASSERT_EQ(out.size(), 2 * ops.size() + 1);
    for (size_t k = 0; k < ops.size(); ++k) {
      EXPECT_EQ(out[k].dims, (std::vector<int64_t>{1, 3})) << ops[k].first;
      EXPECT_EQ(out[ops.size() + k].dims, (std::vector<int64_t>{rows, 1})) << ops[k].first;
      if (rows == 0) {
        EXPECT_TRUE(same_ieee(out[k].values<float>(), std::vector<double>(3, ops[k].second))) << ops[k].first;
      }
    }
    if (rows == 2) {
      EXPECT_TRUE(same_ieee(out[0].values<float>(), {5, -1.5, -3}));
      EXPECT_TRUE(same_ieee(out[2].values<float>(), {4, 0.5, 3}));
      EXPECT_TRUE(same_ieee(out[ops.size()].values<float>(), {2, -1.5}));
    }
    EXPECT_EQ(out.back().dims, (std::vector<int64_t>{rows, 1}));
    if (rows == 2) {
      EXPECT_EQ(out.back().values<int64_t>(), (std::vector<int64_t>{2, 0}));
    }
  }
}

// ArgMax/ArgMin along an axis that is empty at run time has no index to give (ONNX's reference
// raises): the run fails naming the node instead of answering 0; an empty kept axis is fine above.
TEST(LowerReduce, ArgMaxAlongAnEmptyAxisFailsTheRun) {
  ModelBuilder b(13);
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n, 3});
  ir::Node* am = b.node("ArgMin", {x}, {{"argmin", ir::Type::tensor(DType::Int64, ir::Shape{1, 3})}});
  am->set_attr_int("axis", 0);
  b.output(am->output());
  LoadedModel lib(compile(b.model(), "argmin_empty_axis").so_path);
  EXPECT_EQ(lib.run({HostTensor::f32({2, 3}, {1, -2, 3, 4, 0.5f, -6})})[0].values<int64_t>(), (std::vector<int64_t>{0, 0, 1}));
  try {
    lib.run({HostTensor::f32({0, 3}, {})});
    ADD_FAILURE() << "ArgMin over an empty axis ran";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ArgMin node"), std::string::npos) << what;
    EXPECT_NE(what.find("the axis to take the index along is empty"), std::string::npos) << what;
  }
}

// ArgMax/ArgMin with NaN: the first NaN is the extreme (the last with select_last_index), as
// NumPy and ONNX's reference answer and as ReduceMax/ReduceMin's NaN result says; before, the
// answer depended on how Halide rewrote the comparison (row 1 gave 3, a NaN after the 5).
TEST(LowerReduce, ArgMaxAndArgMinTakeNaN) {
  const float nan = NAN, inf = INFINITY;
  ModelBuilder b(13);
  auto* x = b.input("x", DType::Float32, {4, 4});
  for (const char* op : {"ArgMax", "ArgMin"})
    for (int last : {0, 1}) {
      const std::string name = std::string(op) + (last ? "_last" : "_first");
      ir::Node* n = b.node(op, {x}, {{name, ir::Type::tensor(DType::Int64, ir::Shape{4, 1})}});
      n->set_attr_int("axis", 1);
      n->set_attr_int("select_last_index", last);
      b.output(n->output());
    }
  auto out = compile_and_run(b.model(), {HostTensor::f32({4, 4}, {1, nan, 3, 2, nan, 5, nan, 1, 1, 2, inf, inf, -inf, -inf, 0, nan})});
  EXPECT_EQ(out[0].values<int64_t>(), (std::vector<int64_t>{1, 0, 2, 3}));  // ArgMax, first
  EXPECT_EQ(out[1].values<int64_t>(), (std::vector<int64_t>{1, 2, 3, 3}));  // ArgMax, last
  EXPECT_EQ(out[2].values<int64_t>(), (std::vector<int64_t>{1, 0, 0, 3}));  // ArgMin, first
  EXPECT_EQ(out[3].values<int64_t>(), (std::vector<int64_t>{1, 2, 0, 3}));  // ArgMin, last
}

}  // namespace
}  // namespace onnxc::test
