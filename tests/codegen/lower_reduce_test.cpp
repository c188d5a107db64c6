// Reduction lowerings: axes as input (opset 13+) and attribute, keepdims, symbolic extents, ArgMax
// with first and last index.
#include <gtest/gtest.h>

#include <cmath>

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

}  // namespace
}  // namespace onnxc::test
