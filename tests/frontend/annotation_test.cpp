// A value_info type of an intermediate value is an annotation: where it contradicts what the node
// computes (ORT GenAI's model builder declares a Constant's i64[1] output as i64[]), inference keeps
// the computed type and warns once, naming the value, the node and both types. Graph inputs and
// outputs stay contracts: a wrong declaration there is still a clear error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/onnx_import.h"
#include "ir/error.h"
#include "ir/eval/eval.h"
#include "ir/infer/infer.h"
#include "test_util.h"

namespace onnxc::frontend {
namespace {

using test::TempDir;
using test::user_error_of;
using ::testing::HasSubstr;

// x:f32[2,3] -> Unsqueeze(x, c) -> t -> Relu -> y:f32[1,2,3], with c = Constant i64 dims [1] {0}.
// value_info declares c as i64[] (GenAI's mistake) and t as f32[2,3] (a wrong rank).
onnx::ModelProto wrong_value_info_model(const std::vector<std::string>& y_dims = {"1", "2", "3"}) {
  auto m = test::new_model(22, 10);
  auto* g = m.mutable_graph();
  *g->add_input() = test::tensor_info("x", onnx::TensorProto::FLOAT, {"2", "3"});
  *g->add_output() = test::tensor_info("y", onnx::TensorProto::FLOAT, y_dims);
  auto* c = test::add_node(g, "Constant", {}, {"c"}, "const_axes");
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(1);
  t->add_int64_data(0);
  test::add_node(g, "Unsqueeze", {"x", "c"}, {"t"}, "unsq");
  test::add_node(g, "Relu", {"t"}, {"y"}, "relu");
  *g->add_value_info() = test::tensor_info("c", onnx::TensorProto::INT64, {});
  *g->add_value_info() = test::tensor_info("t", onnx::TensorProto::FLOAT, {"2", "3"});
  return m;
}

ir::Model load(const onnx::ModelProto& m, const TempDir& d) {
  test::write_model(m, d.file("m.onnx"));
  return load_model(d.file("m.onnx"));
}

TEST(ValueInfoAnnotation, WrongIntermediateTypesWarnAndInferredWins) {
  TempDir d;
  ir::Model m = load(wrong_value_info_model(), d);
  ir::InferenceResult r = ir::infer_shapes(m);
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_THAT(r.warnings[0], HasSubstr("Constant node 'const_axes'"));
  EXPECT_THAT(r.warnings[0], HasSubstr("output 'c': value_info declares i64[], but the node produces i64[1]"));
  EXPECT_THAT(r.warnings[1], HasSubstr("Unsqueeze node 'unsq'"));
  EXPECT_THAT(r.warnings[1], HasSubstr("output 't': value_info declares f32[2,3], but the node produces f32[1,2,3]"));
  EXPECT_EQ(m.graph->find_value("c")->type().str(), "i64[1]");
  EXPECT_EQ(m.graph->find_value("t")->type().str(), "f32[1,2,3]");
  EXPECT_EQ(m.graph->find_value("y")->type().str(), "f32[1,2,3]");
  // Once checked, the types are the inferred ones: a second run has nothing to say.
  EXPECT_TRUE(ir::infer_shapes(m).warnings.empty());

  // The graph computes what its nodes say, not what value_info said: run it node by node.
  std::map<const ir::Value*, ir::Tensor> vals;
  ir::Tensor x(ir::DType::Float32, {2, 3});
  for (int i = 0; i < 6; ++i) static_cast<float*>(x.mutable_raw())[i] = static_cast<float>(i % 2 ? i : -i);
  vals.emplace(m.graph->inputs()[0], x);
  for (const ir::Node* n : m.graph->nodes()) {
    std::vector<const ir::Tensor*> in;
    for (const ir::Value* v : n->inputs()) in.push_back(&vals.at(v));
    auto out = ir::evaluate(*n, in);
    ASSERT_TRUE(out.has_value()) << n->op_type();
    for (size_t k = 0; k < out->size(); ++k) {
      // What ran has the shape inference kept (the declared one would be wrong).
      std::vector<int64_t> inferred;
      for (const ir::Dim& dim : *n->output(k)->shape()) inferred.push_back(dim.value());
      EXPECT_EQ((*out)[k].dims(), inferred) << n->output(k)->name();
      vals.emplace(n->output(k), (*out)[k]);
    }
  }
  const ir::Tensor& y = vals.at(m.graph->outputs()[0]);
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{1, 2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(static_cast<const float*>(y.raw())[i], i % 2 ? static_cast<float>(i) : 0.f);
}

TEST(ValueInfoAnnotation, WrongGraphOutputStillErrors) {
  TempDir d;
  ir::Model m = load(wrong_value_info_model({"2", "3"}), d);
  std::string e = user_error_of([&] { ir::infer_shapes(m); });
  EXPECT_THAT(e, HasSubstr("Relu node 'relu'"));
  EXPECT_THAT(e, HasSubstr("output 'y': inferred f32[1,2,3], but it has f32[2,3]"));
}

TEST(ValueInfoAnnotation, WrongGraphInputStillErrors) {
  // x declared f32[4,3] cannot be added to a [2,3] weight: the input's type is the contract.
  auto pm = test::new_model(17);
  auto* g = pm.mutable_graph();
  *g->add_input() = test::tensor_info("x", onnx::TensorProto::FLOAT, {"4", "3"});
  *g->add_output() = test::tensor_info("y", onnx::TensorProto::FLOAT, {});
  *g->add_initializer() = test::float_tensor("w", {2, 3}, {1, 2, 3, 4, 5, 6});
  test::add_node(g, "Add", {"x", "w"}, {"y"}, "add");
  TempDir d;
  ir::Model m = load(pm, d);
  std::string e = user_error_of([&] { ir::infer_shapes(m); });
  EXPECT_THAT(e, HasSubstr("Add node 'add'"));
  EXPECT_FALSE(e.empty());
}

}  // namespace
}  // namespace onnxc::frontend
