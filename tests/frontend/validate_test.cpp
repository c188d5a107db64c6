// The validation layer: each way a model can be invalid is refused with one line naming the file,
// the node and op (with its opset) and what is wrong; valid variants still import.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "frontend/onnx_import.h"
#include "frontend/tensor_io.h"
#include "ir/error.h"
#include "test_util.h"

namespace onnxc::frontend {
namespace {

using test::TempDir;
using ::testing::HasSubstr;

// x -> Softmax -> y
onnx::ModelProto softmax_model(int64_t opset = 13) {
  auto m = test::new_model(opset);
  auto* g = m.mutable_graph();
  *g->add_input() = test::tensor_info("x", onnx::TensorProto::FLOAT, {"2", "3"});
  *g->add_output() = test::tensor_info("y", onnx::TensorProto::FLOAT, {"2", "3"});
  test::add_node(g, "Softmax", {"x"}, {"y"}, "sm");
  return m;
}

std::string error_of(const onnx::ModelProto& m) {
  TempDir d;
  test::write_model(m, d.file("model.onnx"));
  std::string e = test::user_error_of([&] { load_model(d.file("model.onnx")); });
  EXPECT_THAT(e, HasSubstr(d.file("model.onnx")));
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  return e;
}

TEST(FrontendValidate, ValidModelImports) {
  TempDir d;
  test::write_model(softmax_model(), d.file("model.onnx"));
  EXPECT_NO_THROW(load_model(d.file("model.onnx")));
}

TEST(FrontendValidate, Opsets) {
  EXPECT_THAT(error_of(softmax_model(99)), HasSubstr("opset_import gives domain 'ai.onnx' version 99; onnxc knows "
                                                     "versions 1 to 28"));
  EXPECT_THAT(error_of(softmax_model(0)), HasSubstr("gives domain 'ai.onnx' version 0; versions start at 1"));
  EXPECT_THAT(error_of(softmax_model(-3)), HasSubstr("version -3; versions start at 1"));
  auto none = softmax_model();
  none.clear_opset_import();
  EXPECT_THAT(error_of(none), HasSubstr("the model has no opset_import"));
  auto twice = softmax_model();
  *twice.add_opset_import() = twice.opset_import(0);
  EXPECT_THAT(error_of(twice), HasSubstr("opset_import lists domain 'ai.onnx' twice"));
  auto ml = softmax_model();
  ml.mutable_opset_import(0)->set_domain("com.example");
  EXPECT_THAT(error_of(ml), HasSubstr("Softmax node 'sm' is of domain 'ai.onnx', which the model's opset_import "
                                      "does not list"));
}

TEST(FrontendValidate, AttributeOfTheWrongType) {
  auto m = softmax_model();
  auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("abc");
  EXPECT_THAT(error_of(m), HasSubstr("Softmax node 'sm' (opset 13): attribute 'axis' is STRING; the schema wants INT"));
  a->set_type(onnx::AttributeProto::INT);  // declared INT, the value in `s`: still wrong
  EXPECT_THAT(error_of(m), HasSubstr("attribute 'axis' is INT but holds a value of another type"));
  a->clear_type();  // untyped (old models): the field that is set decides
  EXPECT_THAT(error_of(m), HasSubstr("attribute 'axis' is STRING"));
}

TEST(FrontendValidate, InputAndOutputCounts) {
  auto m = test::new_model(14);
  auto* g = m.mutable_graph();
  *g->add_input() = test::tensor_info("x", onnx::TensorProto::FLOAT, {"2"});
  *g->add_output() = test::tensor_info("y", onnx::TensorProto::FLOAT, {"2"});
  test::add_node(g, "Add", {"x"}, {"y"}, "add1");
  EXPECT_THAT(error_of(m), HasSubstr("Add node 'add1' (opset 14): has 1 input; Add takes 2"));
  g->mutable_node(0)->add_input("");
  EXPECT_THAT(error_of(m), HasSubstr("input 1 ('B') is required but left empty"));
  g->mutable_node(0)->set_input(1, "x");
  g->mutable_node(0)->add_output("z");
  EXPECT_THAT(error_of(m), HasSubstr("has 2 outputs; Add gives 1"));
}

// Opsets newer than Debian's ONNX library (1.12) are checked against the generated schema facts
// (frontend/newer_schemas.cpp): an op that changed after opset 17, and an unchanged one through
// the library's newest schema.
TEST(FrontendValidate, OpsetsNewerThanTheLibrary) {
  auto m = test::new_model(24);
  auto* g = m.mutable_graph();
  *g->add_input() = test::tensor_info("x", onnx::TensorProto::FLOAT, {"2"});
  *g->add_output() = test::tensor_info("y", onnx::TensorProto::FLOAT, {"2"});
  auto* sw = test::add_node(g, "Swish", {"x"}, {"y"}, "sw");
  auto* a = sw->add_attribute();
  a->set_name("alpha");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("one");
  EXPECT_THAT(error_of(m), HasSubstr("Swish node 'sw' (opset 24): attribute 'alpha' is STRING; the schema wants FLOAT"));
  sw->clear_attribute();
  sw->add_input("x");
  EXPECT_THAT(error_of(m), HasSubstr("Swish node 'sw' (opset 24): has 2 inputs; Swish takes 1"));
  sw->set_op_type("Add");  // unchanged since opset 14: the library's schema
  sw->set_input(1, "");
  EXPECT_THAT(error_of(m), HasSubstr("Add node 'sw' (opset 24): input 1 ('B') is required but left empty"));
  sw->set_input(1, "x");
  TempDir d;
  test::write_model(m, d.file("model.onnx"));
  EXPECT_NO_THROW(load_model(d.file("model.onnx")));
}

TEST(FrontendValidate, RequiredAttributeMissing) {
  auto m = test::new_model(13);
  auto* g = m.mutable_graph();
  *g->add_input() = test::tensor_info("x", onnx::TensorProto::FLOAT, {"2"});
  *g->add_output() = test::tensor_info("y", onnx::TensorProto::INT32, {"2"});
  test::add_node(g, "Cast", {"x"}, {"y"}, "c");
  EXPECT_THAT(error_of(m), HasSubstr("Cast node 'c' (opset 13): required attribute 'to' is missing"));
}

TEST(FrontendValidate, NegativeDims) {
  auto m = softmax_model();
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(-4);
  EXPECT_THAT(error_of(m), HasSubstr("value 'x' in graph 'main' declares dim 1 as -4; dims must be >= 0"));
}

TEST(FrontendValidate, AbsurdConstantSizeIsASizeErrorNotOutOfMemory) {
  auto m = softmax_model();
  auto* t = m.mutable_graph()->add_initializer();
  *t = test::float_tensor("big", {1}, {0});
  t->clear_dims();
  t->add_dims(int64_t(1) << 31);
  t->add_dims(int64_t(1) << 31);
  EXPECT_THAT(error_of(m), HasSubstr("initializer 'big'"));
}

TEST(FrontendValidate, NestingDepthIsNamed) {
  // If nodes nested inside each other's then_branch, deeper than protobuf's limit of 100.
  onnx::GraphProto inner;
  inner.set_name("leaf");
  for (int depth = 0; depth < 40; ++depth) {
    onnx::GraphProto outer;
    outer.set_name("g" + std::to_string(depth));
    auto* n = outer.add_node();
    n->set_op_type("If");
    n->add_input("c");
    auto* a = n->add_attribute();
    a->set_name("then_branch");
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = inner;
    inner = outer;
  }
  auto m = test::new_model();
  *m.mutable_graph() = inner;
  std::string e = error_of(m);
  EXPECT_THAT(e, HasSubstr("nests messages more than 100 levels deep"));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("corrupt")));
}

TEST(FrontendValidate, NonRegularModelFilesAreRefused) {
  std::string e = test::user_error_of([] { load_model("/dev/zero"); });
  EXPECT_THAT(e, HasSubstr("/dev/zero: is a character device; onnxc reads models and tensors only from regular files"));
  TempDir d;
  ASSERT_EQ(::mkfifo(d.file("fifo.onnx").c_str(), 0600), 0);
  e = test::user_error_of([&] { load_model(d.file("fifo.onnx")); });  // must not block waiting for a writer
  EXPECT_THAT(e, HasSubstr("fifo.onnx: is a FIFO"));
  e = test::user_error_of([] { load_tensor_pb("/dev/zero"); });
  EXPECT_THAT(e, HasSubstr("/dev/zero: is a character device"));
}

}  // namespace
}  // namespace onnxc::frontend
