// Data-dependent indexing and losses: GatherND, ScatterElements with add, ScatterND, OneHot, CumSum
// (exclusive, reverse), NegativeLogLikelihoodLoss with weights and ignore_index, TopK.
#include <gtest/gtest.h>

#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;

TEST(LowerGatherScatter, GatherScatterOneHotCumSum) {
  ModelBuilder b(16);
  auto* x = b.input("x", DType::Float32, {2, 3});
  auto* gi = b.constant("gi", ir::Tensor::from_vector<int64_t>(DType::Int64, {2, 2}, {1, 2, 0, -1}));
  b.output(b.op("GatherND", {x, gi}, "gnd", DType::Float32, {2}));
  auto* si = b.constant("si", ir::Tensor::from_vector<int64_t>(DType::Int64, {2, 2}, {0, 0, 2, 2}));
  auto* su = b.const_f32("su", {2, 2}, {10, 20, 30, 40});
  ir::Node* se = b.node("ScatterElements", {x, si, su}, {{"se", ir::Type::tensor(DType::Float32, ir::Shape{2, 3})}});
  se->set_attr_int("axis", 1);
  se->set_attr_string("reduction", "add");
  b.output(se->output());
  auto* ni = b.constant("ni", ir::Tensor::from_vector<int64_t>(DType::Int64, {1, 1}, {1}));
  auto* nu = b.const_f32("nu", {1, 3}, {-1, -2, -3});
  b.output(b.op("ScatterND", {x, ni, nu}, "snd", DType::Float32, {2, 3}));
  auto* hot = b.constant("hot", ir::Tensor::from_vector<int64_t>(DType::Int64, {3}, {0, 2, -1}));
  auto* depth = b.constant("depth", ir::Tensor::scalar<int64_t>(DType::Int64, 3));
  auto* vals = b.const_f32("vals", {2}, {0, 5});
  b.output(b.op("OneHot", {hot, depth, vals}, "oh", DType::Float32, {3, 3}));
  auto* axis = b.constant("axis", ir::Tensor::scalar<int64_t>(DType::Int64, 1));
  ir::Node* cs = b.node("CumSum", {x, axis}, {{"cs", ir::Type::tensor(DType::Float32, ir::Shape{2, 3})}});
  cs->set_attr_int("exclusive", 1);
  cs->set_attr_int("reverse", 1);
  b.output(cs->output());
  auto out = compile_and_run(b.model(), {HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_TRUE(all_close(out[0].values<float>(), {6, 3}));
  EXPECT_TRUE(all_close(out[1].values<float>(), {31, 2, 3, 4, 5, 76}));
  EXPECT_TRUE(all_close(out[2].values<float>(), {1, 2, 3, -1, -2, -3}));
  EXPECT_TRUE(all_close(out[3].values<float>(), {5, 0, 0, 0, 0, 5, 0, 0, 5}));
  EXPECT_TRUE(all_close(out[4].values<float>(), {5, 3, 0, 11, 6, 0}));
}

TEST(LowerGatherScatter, NllLossAndTopK) {
  ModelBuilder b(13);
  auto* logp = b.input("logp", DType::Float32, {3, 2});
  auto* target = b.input("target", DType::Int64, {3});
  auto* w = b.const_f32("w", {2}, {1, 3});
  ir::Node* nll = b.node("NegativeLogLikelihoodLoss", {logp, target, w}, {{"loss", ir::Type::tensor(DType::Float32, ir::Shape{})}});
  nll->set_attr_int("ignore_index", 5);
  b.output(nll->output());
  auto* k = b.const_i64("k", {2});
  ir::Node* tk = b.node("TopK", {logp, k}, {{"vals", ir::Type::tensor(DType::Float32, ir::Shape{2, 2})},
                                            {"idx", ir::Type::tensor(DType::Int64, ir::Shape{2, 2})}});
  tk->set_attr_int("axis", 0);
  b.output(tk->output(0));
  b.output(tk->output(1));
  auto out = compile_and_run(b.model(), {HostTensor::f32({3, 2}, {-1, -2, -3, -4, -5, -6}), HostTensor::i64({3}, {1, 0, 5})});
  // weighted mean: (2*3 + 3*1) / (3 + 1); the third target is ignored.
  EXPECT_TRUE(all_close(out[0].values<float>(), {9.0f / 4}));
  EXPECT_TRUE(all_close(out[1].values<float>(), {-1, -2, -3, -4}));
  EXPECT_EQ(out[2].values<int64_t>(), (std::vector<int64_t>{0, 0, 1, 1}));
}

}  // namespace
}  // namespace onnxc::test
