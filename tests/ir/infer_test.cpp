// Shape inference: the driver, the merge rules, shape values and the op table.
#include <gtest/gtest.h>

#include "builder.h"
#include "ir/error.h"
#include "ir/op_registry.h"

namespace onnxc::ir {
namespace {

using test::Builder;
using test::sym;
using test::type_of;

// x[batch,seq,64] -> Reshape(x, Concat(Shape(x)[0], Shape(x)[1], 4, 16)): what torch.onnx emits for
// splitting heads.
TEST(Infer, ReshapeThroughShapeChain) {
  Builder b;
  Value* x = b.input("x", DType::Float32, {sym("batch"), sym("seq"), 64});
  Value* shape = b.op("Shape", {x});
  Value* d0 = b.op("Unsqueeze", {b.op("Gather", {shape, b.ints({0}, true)}), b.ints({0})});
  Value* d1 = b.op("Unsqueeze", {b.op("Gather", {shape, b.ints({1}, true)}), b.ints({0})});
  Value* target = b.op("Concat", {d0, d1, b.ints({4}), b.ints({16})});
  b.g.nodes().back()->set_attr_int("axis", 0);
  Value* y = b.op("Reshape", {x, target});
  InferenceResult r = b.infer();
  EXPECT_EQ(type_of(y), "f32[batch,seq,4,16]");
  auto v = shape_value(r, target);
  ASSERT_TRUE(v);
  EXPECT_EQ(shape_str(*v), "[batch,seq,4,16]");
  EXPECT_EQ(shape_str(*shape_value(r, shape)), "[batch,seq,64]");
}

TEST(Infer, ShapeValueArithmetic) {
  Builder b;
  Value* x = b.input("x", DType::Float32, {sym("batch"), sym("seq"), 64});
  Value* shape = b.op("Shape", {x});
  Value* n = b.op("Mul", {b.op("Gather", {shape, b.ints({0}, true)}), b.op("Gather", {shape, b.ints({1}, true)})});
  Value* heads = b.op("Div", {b.op("Gather", {shape, b.ints({2}, true)}), b.ints({4}, true)});
  Value* target =
      b.op("Concat", {b.op("Unsqueeze", {n, b.ints({0})}), b.op("Unsqueeze", {heads, b.ints({0})}), b.ints({-1})});
  Value* y = b.op("Reshape", {x, target});
  Value* size = b.op("Size", {x});
  InferenceResult r = b.infer();
  EXPECT_EQ(shape_str(*shape_value(r, n)), "[batch*seq]");
  EXPECT_EQ(shape_str(*shape_value(r, heads)), "[16]");
  EXPECT_EQ(type_of(y), "f32[batch*seq,16,4]");
  EXPECT_EQ(shape_str(*shape_value(r, size)), "[64*batch*seq]");
}

TEST(Infer, ReshapeZeroCopiesAndMinusOneInfers) {
  Builder b;
  Value* x = b.input("x", DType::Float32, {sym("batch"), sym("seq"), 64});
  Value* a = b.op("Reshape", {x, b.ints({0, 0, 4, -1})});
  Value* c = b.op("Reshape", {x, b.ints({-1, 64})});
  Value* d = b.op("Flatten", {x});
  b.infer();
  EXPECT_EQ(type_of(a), "f32[batch,seq,4,16]");
  EXPECT_EQ(type_of(c), "f32[batch*seq,64]");
  EXPECT_EQ(type_of(d), "f32[batch,64*seq]");
}

TEST(Infer, ShapeArgumentsFromShapeValues) {
  Builder b;
  Value* x = b.input("x", DType::Float32, {sym("batch"), sym("seq")});
  Value* shape = b.op("Shape", {x});
  Value* seq = b.op("Gather", {shape, b.ints({1}, true)});
  Value* zeros = b.op("ConstantOfShape", {shape});
  Value* range = b.op("Range", {b.ints({0}, true), seq, b.ints({1}, true)});
  Value* mask = b.op("Trilu", {b.op("ConstantOfShape", {b.op("Concat", {b.op("Unsqueeze", {seq, b.ints({0})}),
                                                                        b.op("Unsqueeze", {seq, b.ints({0})})})})});
  Value* expanded = b.op("Expand", {b.input("row", DType::Float32, {1, sym("seq")}), shape});
  b.infer();
  EXPECT_EQ(type_of(zeros), "f32[batch,seq]");
  EXPECT_EQ(type_of(range), "i64[seq]");
  EXPECT_EQ(type_of(mask), "f32[seq,seq]");
  EXPECT_EQ(type_of(expanded), "f32[batch,seq]");
}

// The pattern torch exports for expand(-1, 4, -1, -1): Where(Equal(shape, -1), ones, shape).
TEST(Infer, EqualAndWhereOnShapeValues) {
  Builder b;
  Value* x = b.input("x", DType::Float32, {sym("batch"), 1, 1, sym("seq")});
  Value* target = b.ints({-1, 4, -1, -1});
  Value* ones = b.op("ConstantOfShape", {b.ints({4})});
  Builder::set_tensor_attr(Builder::attrs(ones), "value", Tensor::from_vector<int64_t>(DType::Int64, {1}, {1}));
  Value* minus_ones = b.op("Mul", {ones, b.ints({-1}, true)});
  Value* where = b.op("Where", {b.op("Equal", {target, minus_ones}), ones, target});
  Value* y = b.op("Expand", {x, where});
  InferenceResult r = b.infer();
  EXPECT_EQ(shape_str(*shape_value(r, where)), "[1,4,1,1]");
  EXPECT_EQ(type_of(y), "f32[batch,4,1,seq]");
}

TEST(Infer, KeepsExistingTypeWhenUndecided) {
  Builder b;
  Value* x = b.input("x", DType::Float32, {sym("batch"), 14});
  Value* y = b.op("Reshape", {x, b.input("shape", DType::Int64, {2})});
  y->set_type(Type::tensor(DType::Float32, Shape{sym("batch"), 7}));
  b.infer();
  EXPECT_EQ(type_of(y), "f32[batch,7]");
}

TEST(Infer, MorePreciseResultReplacesUnknownDims) {
  Builder b;
  Value* x = b.input("x", DType::Float32, {sym("batch"), 14});
  Value* y = b.op("Relu", {x});
  y->set_type(Type::tensor(DType::Float32, Shape{Dim::unknown(), 14}));
  b.infer();
  EXPECT_EQ(type_of(y), "f32[batch,14]");
}

TEST(Infer, ConflictWithExistingTypeNamesTheNode) {
  Builder b;
  Value* x = b.input("x", DType::Float32, {2, 4});
  Node* n = b.node("Relu", {x});
  n->set_name("act");
  n->output(0)->set_type(Type::tensor(DType::Float32, Shape{2, 5}));
  try {
    b.infer();
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(),
                 "shape inference: Relu node 'act' (opset 17): output 'Relu': inferred f32[2,4], but it has f32[2,5]");
  }
}

TEST(Infer, BadModelsAreUserErrors) {
  Builder b;
  Value* x = b.input("x", DType::Float32, {2, 3});
  b.op("Reshape", {x, b.ints({4, -1})});
  EXPECT_THROW(b.infer(), UserError);
  Builder c;
  c.op("Add", {c.input("a", DType::Float32, {3}), c.input("b", DType::Float32, {4})});
  try {
    c.infer();
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot broadcast dims 3 and 4"), std::string::npos) << e.what();
  }
}

TEST(Infer, OpsWithoutRuleAreRecordedAndKeepTheirTypes) {
  Builder b;
  Node* n = b.g.add_node("Frobnicate", {b.input("x", DType::Float32, {2})}, {"y"}, "com.example");
  n->output(0)->set_type(Type::tensor(DType::Float32, Shape{2}));
  InferenceResult r = b.infer();
  EXPECT_EQ(r.missing_rules, std::set<std::string>{"com.example.Frobnicate@2147483647"});
  EXPECT_EQ(type_of(n->output(0)), "f32[2]");
}

TEST(Infer, DataDependentSizesGetFreshSymbolsAndKeepThem) {
  Builder b;
  Value* x = b.input("x", DType::Float32, {3, sym("n")});
  Value* a = b.op("NonZero", {x});
  Value* c = b.op("NonZero", {x});
  b.infer();
  EXPECT_EQ(type_of(a), "i64[2,nonzero_0]");
  EXPECT_EQ(type_of(c), "i64[2,nonzero_1]");
  b.infer();  // a second run keeps the names
  EXPECT_EQ(type_of(a), "i64[2,nonzero_0]");
  Value* u = b.op("Unique", {x});
  b.infer();
  EXPECT_EQ(type_of(u), "f32[unique_0]");
}

TEST(Infer, IfJoinsBranchTypes) {
  Builder b;
  Value* x = b.input("x", DType::Float32, {2, sym("seq")});
  Value* y = b.input("y", DType::Float32, {3, sym("seq")});
  Node* n = b.node("If", {b.input("c", DType::Bool, {})});
  for (auto [name, v] : {std::pair{"then_branch", x}, std::pair{"else_branch", y}}) {
    Attribute a;
    a.name = name;
    a.kind = Attribute::Kind::Graph;
    a.g = std::make_shared<Graph>(name, &b.g);
    a.g->add_output(a.g->add_node("Identity", {v}, {std::string(name) + "_out"})->output(0));
    n->set_attr(a);
  }
  b.infer();
  EXPECT_EQ(type_of(n->output(0)), "f32[?,seq]");
}

TEST(Infer, LoopGeneralizesCarriedValuesThatGrow) {
  Builder b;
  Value* init = b.input("init", DType::Float32, {1, 4});
  Node* loop = b.g.add_node("Loop", {b.ints({3}, true), nullptr, init}, {"final", "scans"});
  Attribute a;
  a.name = "body";
  a.kind = Attribute::Kind::Graph;
  a.g = std::make_shared<Graph>("body", &b.g);
  Graph& body = *a.g;
  body.add_input("i", Type());
  Value* cond = body.add_input("cond", Type());
  Value* acc = body.add_input("acc", Type());
  Value* grown = body.add_node("Concat", {acc, init}, {"grown"})->output(0);
  body.nodes().back()->set_attr_int("axis", 0);
  Value* row = body.add_node("ReduceSum", {grown}, {"row"})->output(0);
  body.nodes().back()->set_attr_ints("axes", {0});
  body.add_output(body.add_node("Identity", {cond}, {"cond_out"})->output(0));
  body.add_output(grown);
  body.add_output(row);
  loop->set_attr(a);
  b.infer();
  EXPECT_EQ(type_of(acc), "f32[?,4]");
  EXPECT_EQ(type_of(grown), "f32[?+1,4]");  // one more row than the unknown it started from
  EXPECT_EQ(type_of(loop->output(0)), "f32[?,4]");
  EXPECT_EQ(type_of(loop->output(1)), "f32[3,1,4]");  // 3 trips: the condition passes through
}

TEST(Infer, InferNodeAfterARewrite) {
  Builder b;
  Value* x = b.input("x", DType::Float32, {sym("batch"), 8});
  Value* s = b.op("Shape", {x});
  InferenceResult r = b.infer();
  Node* n = b.g.add_node("Expand", {b.input("one", DType::Float32, {1}), s}, {"e"});
  infer_node(*n, opset_map(b.model), r);
  EXPECT_EQ(type_of(n->output(0)), "f32[batch,8]");
}

TEST(OpRegistry, FindsEntriesByDomainOpAndOpset) {
  const OpInfo* add = find_op("", "Add", 14);
  ASSERT_TRUE(add);
  EXPECT_TRUE(add->has(kElementwise | kCommutative));
  EXPECT_EQ(find_op("ai.onnx", "Add", 14), add);
  EXPECT_FALSE(find_op("", "Sub", 14)->has(kCommutative));
  EXPECT_TRUE(find_op("", "NonZero", 13)->has(kDataDependent));
  EXPECT_TRUE(find_op("", "Shape", 15)->has(kShapeOnly));
  EXPECT_TRUE(find_op("", "Loop", 16)->has(kControlFlow));
  // Ops whose inputs or semantics changed have one entry per opset range.
  EXPECT_NE(find_op("", "Scan", 8), find_op("", "Scan", 9));
  EXPECT_EQ(find_op("", "Scan", 9), find_op("", "Scan", 16));
  EXPECT_EQ(find_op("", "Scan", 7), nullptr);
  EXPECT_NE(find_op("", "Resize", 10), find_op("", "Resize", 13));
  EXPECT_NE(find_op("", "Split", 13), find_op("", "Split", 18));
  EXPECT_EQ(find_op("", "Split", 18)->since, 18);
  EXPECT_EQ(find_op("", "NoSuchOp", 17), nullptr);
  EXPECT_NE(find_op("ai.onnx.preview.training", "Adam", 1), nullptr);
  EXPECT_GT(all_ops().size(), 170u);
}

}  // namespace
}  // namespace onnxc::ir
