// fold_constant_if: an If on a constant condition becomes the nodes of the branch it takes, with
// the If's output names kept and outer values read as before; a run-time condition, or a branch
// with nested control flow, leaves the If alone. Values are checked with the reference evaluator.
#include <gtest/gtest.h>

#include <algorithm>

#include "fusion_util.h"
#include "passes/pass.h"

namespace onnxc::testing {
namespace {

// y = If(cond) { then: t = Relu(x) * two; return t } else { return Neg(x) }; z = y + x.
std::unique_ptr<ir::Model> model_with_if(bool constant_cond, bool value) {
  auto m = std::make_unique<ir::Model>();
  m->opset_imports = {{"", 17}};
  ir::Graph& g = *m->graph;
  ir::Value* x = g.add_input("x", ir::Type::tensor(ir::DType::Float32, ir::Shape{4}));
  ir::Value* cond = constant_cond ? g.add_initializer("cond", ir::Tensor::scalar<uint8_t>(ir::DType::Bool, value))
                                  : g.add_input("cond", ir::Type::tensor(ir::DType::Bool, ir::Shape{}));
  auto then_g = std::make_shared<ir::Graph>("then", &g);
  ir::Value* two = then_g->add_initializer("two", ir::Tensor::scalar<float>(ir::DType::Float32, 2.0f));
  ir::Node* relu = then_g->add_node("Relu", {x}, {"r"});
  ir::Node* mul = then_g->add_node("Mul", {relu->output(0), two}, {"t"});
  then_g->add_output(mul->output(0));
  auto else_g = std::make_shared<ir::Graph>("else", &g);
  else_g->add_output(else_g->add_node("Neg", {x}, {"n"})->output(0));
  ir::Node* iff = g.add_node("If", {cond}, {"y"});
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::Graph;
  a.name = "then_branch", a.g = then_g;
  iff->set_attr(a);
  a.name = "else_branch", a.g = else_g;
  iff->set_attr(a);
  ir::Node* add = g.add_node("Add", {iff->output(0), x}, {"z"});
  g.add_output(iff->output(0));
  g.add_output(add->output(0));
  return m;
}

std::vector<std::string> ops(const ir::Model& m) {
  std::vector<std::string> r;
  for (const ir::Node* n : m.graph->nodes()) r.push_back(n->op_type());
  return r;
}

std::vector<float> values(const ir::Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

TEST(FoldConstantIf, TakesTheBranchTheConstantSelects) {
  ir::Tensor x = ir::Tensor::from_vector<float>(ir::DType::Float32, {4}, {-1.5f, 0.0f, 2.0f, 3.25f});
  for (bool value : {true, false}) {
    auto m = model_with_if(true, value);
    std::vector<float> y, z;  // what the If computes: Relu(x)·2 or -x; z = y + x
    for (float v : values(x)) y.push_back(value ? std::max(v, 0.0f) * 2.0f : -v), z.push_back(y.back() + v);
    ASSERT_TRUE(passes::find_pass("fold_constant_if")->make()->run(*m));
    std::vector<std::string> o = ops(*m);
    EXPECT_EQ(std::count(o.begin(), o.end(), "If"), 0);
    EXPECT_EQ(m->graph->outputs()[0]->name(), "y");  // the interface keeps its names
    auto got = eval_graph(*m, {{"x", x}});
    EXPECT_EQ(values(got.at("y")), y) << (value ? "then" : "else");
    EXPECT_EQ(values(got.at("z")), z);
  }
}

TEST(FoldConstantIf, RunTimeConditionStays) {
  auto m = model_with_if(false, false);
  EXPECT_FALSE(passes::find_pass("fold_constant_if")->make()->run(*m));
  std::vector<std::string> o = ops(*m);
  EXPECT_EQ(std::count(o.begin(), o.end(), "If"), 1);
  // Drop the If while the outer values it reads are alive (see dce_test.cpp).
  m->graph->clear_outputs();
  std::vector<ir::Node*> nodes = m->graph->nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) m->graph->remove_node(*it);
}

}  // namespace
}  // namespace onnxc::testing
