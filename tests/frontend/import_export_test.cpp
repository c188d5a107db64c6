// Import and export of hand-built models: Constant forms, subgraphs with outer-scope references,
// IR < 4 initializers-as-inputs, symbolic dims and container types, model fields, ONNX inference.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/onnx_export.h"
#include "frontend/onnx_import.h"
#include "ir/error.h"
#include "ir/printer.h"
#include "ir/verify.h"
#include "test_util.h"

namespace onnxc::frontend {
namespace {

using test::TempDir;
using ::testing::HasSubstr;

ImportOptions no_inference() {
  ImportOptions o;
  o.onnx_shape_inference = false;
  return o;
}

ir::Model import(const onnx::ModelProto& p, const ImportOptions& opt = no_inference()) {
  return import_model(p, "test.onnx", "/nonexistent", opt);
}

// export -> import gives the same IR text, and exporting again gives the same bytes.
void expect_round_trip(const ir::Model& m) {
  ir::VerifyOptions untyped;
  untyped.require_types = false;
  ir::verify(m, untyped);
  onnx::ModelProto p1 = export_model(m);
  ir::Model back = import(p1);
  ir::verify(back, untyped);
  EXPECT_EQ(ir::to_string(back), ir::to_string(m));
  EXPECT_EQ(export_model(back).SerializeAsString(), p1.SerializeAsString());
}

onnx::AttributeProto* attr(onnx::NodeProto* n, const std::string& name, onnx::AttributeProto::AttributeType t) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(t);
  return a;
}

TEST(FrontendImport, ConstantForms) {
  using A = onnx::AttributeProto;
  auto m = test::new_model(13);
  auto* g = m.mutable_graph();
  *attr(test::add_node(g, "Constant", {}, {"c_tensor"}), "value", A::TENSOR)->mutable_t() =
      test::float_tensor("", {2}, {1.5f, -2.f});
  attr(test::add_node(g, "Constant", {}, {"c_float"}), "value_float", A::FLOAT)->set_f(0.5f);
  auto* fs = attr(test::add_node(g, "Constant", {}, {"c_floats"}), "value_floats", A::FLOATS);
  fs->add_floats(1.f);
  fs->add_floats(2.f);
  attr(test::add_node(g, "Constant", {}, {"c_int"}), "value_int", A::INT)->set_i(7);
  auto* is = attr(test::add_node(g, "Constant", {}, {"c_ints"}), "value_ints", A::INTS);
  is->add_ints(3);
  is->add_ints(-4);
  attr(test::add_node(g, "Constant", {}, {"c_string"}), "value_string", A::STRING)->set_s("hi");
  auto* ss = attr(test::add_node(g, "Constant", {}, {"c_strings"}), "value_strings", A::STRINGS);
  ss->add_strings("a");
  ss->add_strings("b");
  auto* sp = attr(test::add_node(g, "Constant", {}, {"c_sparse"}), "sparse_value", A::SPARSE_TENSOR)
                 ->mutable_sparse_tensor();
  *sp->mutable_values() = test::float_tensor("", {1}, {9.f});
  sp->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  sp->mutable_indices()->add_dims(1);
  sp->mutable_indices()->add_int64_data(2);
  sp->add_dims(4);
  for (const char* o : {"c_tensor", "c_float", "c_floats", "c_int", "c_ints", "c_string", "c_strings", "c_sparse"})
    g->add_output()->set_name(o);

  ir::Model im = import(m, {});  // with ONNX inference: Constant outputs get their types
  auto nodes = im.graph->nodes();
  ASSERT_EQ(nodes.size(), 8u);
  for (ir::Node* n : nodes) EXPECT_EQ(n->op_type(), "Constant");  // kept, not folded
  using K = ir::Attribute::Kind;
  EXPECT_EQ(nodes[0]->attr("value")->kind, K::Tensor);
  EXPECT_EQ(nodes[0]->attr("value")->t.get_f64(1), -2.0);
  EXPECT_EQ(nodes[1]->attr_float("value_float", 0), 0.5f);
  EXPECT_EQ(nodes[2]->attr_floats("value_floats"), (std::vector<float>{1.f, 2.f}));
  EXPECT_EQ(nodes[3]->attr_int("value_int", 0), 7);
  EXPECT_EQ(nodes[4]->attr_ints("value_ints"), (std::vector<int64_t>{3, -4}));
  EXPECT_EQ(nodes[5]->attr_string("value_string", ""), "hi");
  EXPECT_EQ(nodes[6]->attr("value_strings")->strings, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(nodes[7]->attr("sparse_value")->kind, K::SparseTensor);
  EXPECT_EQ(nodes[0]->output()->type().str(), "f32[2]");
  EXPECT_EQ(nodes[4]->output()->type().str(), "i64[2]");
  EXPECT_EQ(nodes[7]->output()->type().str(), "f32[4]");
  expect_round_trip(im);
}

// main: Neg(x) -> nx; If(cond) { then: Add(nx, x)  else: Identity(nx) }. The If node is listed
// before Neg: the subgraph's capture of nx must still order Neg first.
onnx::ModelProto if_model(const std::string& captured = "nx") {
  auto m = test::new_model(16);
  auto* g = m.mutable_graph();
  *g->add_input() = test::tensor_info("cond", onnx::TensorProto::BOOL, {});
  *g->add_input() = test::tensor_info("x", onnx::TensorProto::FLOAT, {"2"});
  auto* node = test::add_node(g, "If", {"cond"}, {"y"}, "branch");
  test::add_node(g, "Neg", {"x"}, {"nx"}, "neg");
  *g->add_output() = test::tensor_info("y", onnx::TensorProto::FLOAT, {"2"});
  auto branch = [&](const char* name, const char* op, std::vector<std::string> in) {
    auto* a = attr(node, name, onnx::AttributeProto::GRAPH);
    auto* sg = a->mutable_g();
    sg->set_name(std::string(name) + "_graph");
    std::string out = std::string(name) + "_out";
    test::add_node(sg, op, in, {out}, std::string(name) + "_op");
    *sg->add_output() = test::tensor_info(out, onnx::TensorProto::FLOAT, {"2"});
  };
  branch("then_branch", "Add", {captured, "x"});
  branch("else_branch", "Identity", {"nx"});
  return m;
}

TEST(FrontendImport, SubgraphOuterScopeReferences) {
  ir::Model m = import(if_model());
  auto nodes = m.graph->nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0]->op_type(), "Neg");  // sorted before the If that captures its output
  ir::Node* if_node = nodes[1];
  ir::Value* nx = m.graph->find_value("nx");
  ir::Value* x = m.graph->find_value("x");
  ir::Graph* then_g = if_node->attr("then_branch")->g.get();
  ASSERT_NE(then_g, nullptr);
  EXPECT_EQ(then_g->parent(), m.graph.get());
  ir::Node* add = then_g->nodes().at(0);
  EXPECT_EQ(add->input(0), nx);  // the enclosing graph's Value itself
  EXPECT_EQ(add->input(1), x);
  EXPECT_EQ(nx->uses().size(), 2u);  // Add in then, Identity in else
  expect_round_trip(m);
}

TEST(FrontendImport, SubgraphDanglingInput) {
  std::string e = test::user_error_of([&] { import(if_model("ghost")); });
  EXPECT_THAT(e, HasSubstr("test.onnx"));
  EXPECT_THAT(e, HasSubstr("Add node 'then_branch_op'"));
  EXPECT_THAT(e, HasSubstr("'ghost'"));
  EXPECT_THAT(e, HasSubstr("dangling input"));
}

// IR version 3: initializers are also listed among the inputs (an overridable default).
TEST(FrontendImport, InitializerAlsoInput) {
  auto m = test::new_model(8, 3);
  auto* g = m.mutable_graph();
  *g->add_input() = test::tensor_info("x", onnx::TensorProto::FLOAT, {"3"});
  *g->add_input() = test::tensor_info("w", onnx::TensorProto::FLOAT, {"3"});
  *g->add_initializer() = test::float_tensor("w", {3}, {1, 2, 3});
  test::add_node(g, "Add", {"x", "w"}, {"y"});
  *g->add_output() = test::tensor_info("y", onnx::TensorProto::FLOAT, {"3"});
  ir::Model im = import(m);
  ASSERT_EQ(im.graph->inputs().size(), 2u);
  ir::Value* w = im.graph->inputs()[1];
  EXPECT_EQ(w->name(), "w");
  EXPECT_TRUE(w->is_constant());
  EXPECT_EQ(im.graph->initializers().size(), 1u);
  EXPECT_THAT(ir::to_string(im), HasSubstr("%w: f32[3] = default"));
  onnx::ModelProto out = export_model(im);
  EXPECT_EQ(out.ir_version(), 3);
  EXPECT_EQ(out.graph().input_size(), 2);
  EXPECT_EQ(out.graph().initializer_size(), 1);
  expect_round_trip(im);
}

TEST(FrontendImport, SymbolicDimsAndContainerTypes) {
  auto m = test::new_model(17);
  auto* g = m.mutable_graph();
  *g->add_input() = test::tensor_info("x", onnx::TensorProto::FLOAT, {"batch", "", "3"});
  onnx::ValueInfoProto seq;
  seq.set_name("s");
  *seq.mutable_type()->mutable_sequence_type()->mutable_elem_type() =
      test::tensor_info("", onnx::TensorProto::INT64, {"n"}).type();
  *g->add_input() = seq;
  onnx::ValueInfoProto opt;
  opt.set_name("o");
  *opt.mutable_type()->mutable_optional_type()->mutable_elem_type() = seq.type();
  *g->add_input() = opt;
  onnx::ValueInfoProto map;
  map.set_name("m");
  map.mutable_type()->mutable_map_type()->set_key_type(onnx::TensorProto::STRING);
  *map.mutable_type()->mutable_map_type()->mutable_value_type() =
      test::tensor_info("", onnx::TensorProto::FLOAT, {}).type();
  *g->add_input() = map;
  onnx::ValueInfoProto sparse;
  sparse.set_name("sp");
  sparse.mutable_type()->mutable_sparse_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  sparse.mutable_type()->mutable_sparse_tensor_type()->mutable_shape()->add_dim()->set_dim_value(5);
  *g->add_input() = sparse;
  onnx::ValueInfoProto untyped;
  untyped.set_name("u");
  *g->add_input() = untyped;
  test::add_node(g, "Identity", {"x"}, {"y"});
  *g->add_output() = test::tensor_info("y", onnx::TensorProto::FLOAT, {"batch", "", "3"});

  ir::Model im = import(m);
  const auto& in = im.graph->inputs();
  const ir::Shape& xs = *in[0]->shape();
  EXPECT_TRUE(xs[0].is_symbol());
  EXPECT_EQ(xs[0].name(), "batch");
  EXPECT_TRUE(xs[1].is_unknown());
  EXPECT_EQ(xs[2], ir::Dim(3));
  EXPECT_EQ(in[0]->type().str(), "f32[batch,?,3]");
  EXPECT_EQ(in[1]->type().str(), "seq(i64[n])");
  EXPECT_EQ(in[2]->type().str(), "opt(seq(i64[n]))");
  EXPECT_EQ(in[3]->type().str(), "map(str,f32[])");
  EXPECT_EQ(in[4]->type().str(), "sparse f32[5]");
  EXPECT_EQ(in[5]->type().kind, ir::Type::Kind::Unknown);

  onnx::ModelProto out = export_model(im);
  const auto& dims = out.graph().input(0).type().tensor_type().shape().dim();
  EXPECT_EQ(dims[0].dim_param(), "batch");
  EXPECT_EQ(dims[1].value_case(), onnx::TensorShapeProto::Dimension::VALUE_NOT_SET);
  EXPECT_EQ(dims[2].dim_value(), 3);
  EXPECT_FALSE(out.graph().input(5).has_type());
  expect_round_trip(im);
}

TEST(FrontendImport, ModelFieldsSurvive) {
  auto m = test::new_model(17);
  auto* o = m.add_opset_import();
  o->set_domain("com.example");
  o->set_version(2);
  m.set_producer_name("unit");
  m.set_producer_version("1.0");
  m.set_domain("org.test");
  m.set_model_version(5);
  m.set_doc_string("model doc");
  auto* kv = m.add_metadata_props();
  kv->set_key("author");
  kv->set_value("me");
  auto* f = m.add_functions();
  f->set_name("MyOp");
  f->set_domain("com.example");
  f->add_input("a");
  f->add_output("b");
  auto* fn = f->add_node();
  fn->set_op_type("Relu");
  fn->add_input("a");
  fn->add_output("b");
  auto* g = m.mutable_graph();
  g->set_doc_string("graph doc");
  *g->add_input() = test::tensor_info("x", onnx::TensorProto::FLOAT, {"4"});
  g->mutable_input(0)->set_doc_string("input doc");
  auto* n = test::add_node(g, "MyOp", {"x"}, {"y"}, "custom");
  n->set_domain("com.example");
  n->set_doc_string("node doc");
  *g->add_output() = test::tensor_info("y", onnx::TensorProto::FLOAT, {"4"});

  ir::Model im = import(m);
  EXPECT_EQ(im.opset("com.example"), 2);
  EXPECT_EQ(im.graph->nodes()[0]->domain(), "com.example");
  ASSERT_EQ(im.functions.size(), 1u);
  onnx::ModelProto out = export_model(im);
  EXPECT_EQ(out.SerializeAsString(), m.SerializeAsString());  // nothing lost, nothing added
  expect_round_trip(im);
}

TEST(FrontendImport, OnnxShapeInferenceRecordsTypes) {
  auto m = test::new_model(17);
  auto* g = m.mutable_graph();
  *g->add_input() = test::tensor_info("x", onnx::TensorProto::FLOAT, {"batch", "4"});
  test::add_node(g, "Relu", {"x"}, {"r"});
  test::add_node(g, "Shape", {"r"}, {"s"});
  test::add_node(g, "Reshape", {"x", "s"}, {"out"});
  g->add_output()->set_name("out");

  ir::Model with = import(m, {});
  EXPECT_EQ(with.graph->find_value("r")->type().str(), "f32[batch,4]");
  EXPECT_EQ(with.graph->find_value("s")->type().str(), "i64[2]");
  EXPECT_EQ(with.graph->find_value("out")->type().str(), "f32[batch,4]");  // via data propagation
  ir::Model without = import(m);
  EXPECT_EQ(without.graph->find_value("r")->type().kind, ir::Type::Kind::Unknown);
  expect_round_trip(with);

  // An op ONNX does not know is left out of ONNX's inference; the rest is still annotated. (A node
  // that fails its schema, such as Relu with two inputs, no longer gets this far: the validation
  // layer refuses the model, see validate_test.cpp.)
  test::add_node(g, "NoSuchOp", {"out"}, {"z"});
  test::add_node(g, "Abs", {"out"}, {"fine"});
  ir::Model odd = import(m, {});
  EXPECT_EQ(odd.graph->num_nodes(), 5u);
  EXPECT_EQ(odd.graph->find_value("r")->type().str(), "f32[batch,4]");
  EXPECT_EQ(odd.graph->find_value("z")->type().kind, ir::Type::Kind::Unknown);
  EXPECT_EQ(odd.graph->find_value("fine")->type().str(), "f32[batch,4]");
}

// ONNX names the dims it cannot tell "unk__N"; they import as unknown dims, equal where the names are.
TEST(FrontendImport, OnnxInventedDimsAreUnknown) {
  auto m = test::new_model(17);
  auto* g = m.mutable_graph();
  *g->add_input() = test::tensor_info("x", onnx::TensorProto::FLOAT, {"n", "4"});
  test::add_node(g, "NonZero", {"x"}, {"nz"});
  test::add_node(g, "Identity", {"nz"}, {"same"});
  g->add_output()->set_name("same");
  ir::Model im = import(m, {});
  const ir::Shape& a = *im.graph->find_value("nz")->shape();
  const ir::Shape& b = *im.graph->find_value("same")->shape();
  EXPECT_EQ(im.graph->find_value("nz")->type().str(), "i64[2,?]");
  EXPECT_TRUE(a[1].is_unknown());
  EXPECT_EQ(a[1], b[1]);
  EXPECT_NE(a[1], ir::Dim::unknown());
  expect_round_trip(im);
}

// Sparse initializers import as dense constants; indices may be linear [NNZ] or [NNZ, rank].
TEST(FrontendImport, SparseInitializers) {
  auto m = test::new_model(17);
  auto* g = m.mutable_graph();
  auto sparse = [&](const std::string& name, std::vector<int64_t> idx, std::vector<int64_t> idx_dims) {
    auto* s = g->add_sparse_initializer();
    *s->mutable_values() = test::float_tensor(name, {2}, {5.f, 7.f});
    auto* i = s->mutable_indices();
    i->set_data_type(onnx::TensorProto::INT64);
    for (auto d : idx_dims) i->add_dims(d);
    for (auto v : idx) i->add_int64_data(v);
    s->add_dims(2);
    s->add_dims(3);
    g->add_output()->set_name(name);
  };
  sparse("linear", {1, 5}, {2});
  sparse("coords", {0, 1, 1, 2}, {2, 2});
  ir::Model im = import(m);
  for (const char* name : {"linear", "coords"}) {
    const ir::Tensor& t = im.graph->find_value(name)->constant();
    EXPECT_EQ(t.dims(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(t.get_f64(1), 5.0);
    EXPECT_EQ(t.get_f64(5), 7.0);
    EXPECT_EQ(t.get_f64(0), 0.0);
  }
  g->mutable_sparse_initializer(0)->mutable_indices()->set_int64_data(1, 6);
  EXPECT_THAT(test::user_error_of([&] { import(m); }), HasSubstr("initializer 'linear': sparse index 6 out of range"));
}

TEST(FrontendImport, NodesOutOfOrder) {
  auto m = test::new_model(17);
  auto* g = m.mutable_graph();
  *g->add_input() = test::tensor_info("x", onnx::TensorProto::FLOAT, {"4"});
  test::add_node(g, "Neg", {"b"}, {"c"}, "third");
  test::add_node(g, "Abs", {"a"}, {"b"}, "second");
  test::add_node(g, "Relu", {"x"}, {"a"}, "first");
  *g->add_output() = test::tensor_info("c", onnx::TensorProto::FLOAT, {"4"});
  ir::Model im = import(m);
  auto nodes = im.graph->nodes();
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0]->name(), "first");
  EXPECT_EQ(nodes[2]->name(), "third");
}

TEST(FrontendExport, SaveIsAtomic) {
  TempDir d;
  ir::Model good = import(if_model());
  save_model(good, d.file("model.onnx"));
  std::string before = test::read_bytes(d.file("model.onnx"));
  EXPECT_EQ(ir::to_string(load_model(d.file("model.onnx"), no_inference())), ir::to_string(good));

  // A model that cannot be written (a tensor without data) leaves the old file as it was.
  ir::Model bad;
  bad.graph->add_initializer("w", ir::Tensor::view(ir::DType::Float32, {4}, nullptr, nullptr));
  EXPECT_THAT(test::user_error_of([&] { save_model(bad, d.file("model.onnx")); }), HasSubstr("'w' has no data"));
  EXPECT_EQ(test::read_bytes(d.file("model.onnx")), before);
  EXPECT_EQ(d.list(), std::vector<std::string>{"model.onnx"});

  std::string e = test::user_error_of([&] { save_model(good, d.file("no/such/dir/model.onnx")); });
  EXPECT_THAT(e, HasSubstr("no/such/dir/model.onnx"));
  EXPECT_THAT(e, HasSubstr("cannot create"));
}

// A pass may add ops of a domain the model never imported (onnxc.SymbolicShape); the written
// model must import that domain, or ONNX's checker and other runtimes reject it.
TEST(FrontendExport, ImportsDomainsThatNodesUse) {
  ir::Model m;
  m.opset_imports = {{"", 17}};
  ir::Value* x = m.graph->add_input("x", ir::Type::tensor(ir::DType::Float32, ir::Shape{ir::Dim::symbol("n")}));
  ir::Node* n = m.graph->add_node("SymbolicShape", {x}, {"s"}, "onnxc");
  n->output()->set_type(ir::Type::tensor(ir::DType::Int64, ir::Shape{1}));
  m.graph->add_output(n->output());
  onnx::ModelProto p = export_model(m);
  ASSERT_EQ(p.opset_import_size(), 2);
  EXPECT_EQ(p.opset_import(1).domain(), "onnxc");
  EXPECT_EQ(p.opset_import(1).version(), 1);
}

TEST(FrontendImport, BundledTransformerModels) {
  for (const char* name : {"encoder_layer", "decoder_prelayer_causal", "mha_cross_attention"}) {
    SCOPED_TRACE(name);
    std::string path = test::source_dir() + "/tests/models/" + name + "/model.onnx";
    ir::Model m = load_model(path);
    EXPECT_GT(m.graph->num_nodes(), 10u);
    EXPECT_EQ(m.opset(), 17);
    EXPECT_EQ(m.graph->inputs()[0]->shape()->at(0).str(), "batch") << ir::to_string(*m.graph);
    expect_round_trip(m);
  }
}

}  // namespace
}  // namespace onnxc::frontend
