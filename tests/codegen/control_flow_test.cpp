// If end to end: models with run-time conditions compiled to a library (BRANCH / JUMP steps around the
// branches' kernels) and run through the runtime's C API on both branches, nested Ifs, branch results
// that are outer values, kernels after the If; and the shapes it refuses, by their message.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "ir/error.h"
#include "onnxc/runtime.h"
#include "opened_library.h"
#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;
using ir::Type;

using Branch = Subgraph;  // a branch graph inside `outer` that reads outer values directly

ir::Node* add_if(ModelBuilder& b, ir::Value* cond, Branch& then_b, Branch& else_b, const std::string& out, Type t) {
  ir::Node* n = b.node("If", {cond}, {{out, std::move(t)}});
  set_graph_attr(n, "then_branch", then_b);
  set_graph_attr(n, "else_branch", else_b);
  return n;
}

#ifdef HAVE_ONNXC_RUNTIME
struct Session : OpenedLibrary {
  using OpenedLibrary::OpenedLibrary;
  // Inputs x (float [n]) then the bool flags; returns every output.
  std::vector<std::vector<float>> run(std::vector<float> x, std::vector<uint8_t> flags) {
    int64_t n = static_cast<int64_t>(x.size());
    onnxc_tensor xt{1, 1, &n, x.data()};
    EXPECT_EQ(onnxc_session_set_input(s, 0, &xt), ONNXC_OK) << onnxc_session_last_error(s);
    for (size_t i = 0; i < flags.size(); ++i) {
      onnxc_tensor ft{9, 0, nullptr, &flags[i]};
      EXPECT_EQ(onnxc_session_set_input(s, i + 1, &ft), ONNXC_OK) << onnxc_session_last_error(s);
    }
    EXPECT_EQ(onnxc_session_run(s), ONNXC_OK) << onnxc_session_last_error(s);
    std::vector<std::vector<float>> r;
    for (size_t i = 0; i < onnxc_model_num_outputs(model); ++i) {
      onnxc_tensor o;
      EXPECT_EQ(onnxc_session_get_output(s, i, &o), ONNXC_OK) << onnxc_session_last_error(s);
      const float* p = static_cast<const float*>(o.data);
      r.emplace_back(p, p + o.dims[0]);
    }
    return r;
  }
};

// y = If(c, then: x * 2, else: -x); z = y + x after the If. Outputs z, y.
TEST(ControlFlow, IfChoosesItsBranchPerRunAndKernelsAfterItReadTheResult) {
  ModelBuilder b(17);
  Dim n = Dim::symbol("n");
  Type f = Type::tensor(DType::Float32, ir::Shape{n});
  auto* x = b.input("x", DType::Float32, {n});
  auto* c = b.input("c", DType::Bool, {});
  auto* two = b.const_f32("two", {}, {2});
  Branch t(b.model().graph.get(), "then"), e(b.model().graph.get(), "else");
  t.g->add_output(t.op("Mul", {x, two}, "twice", f));
  e.g->add_output(e.op("Neg", {x}, "neg", f));
  ir::Value* y = add_if(b, c, t, e, "y", f)->output();
  b.output(b.op("Add", {y, x}, "z", DType::Float32, {n}));
  b.output(y);
  auto r = compile(std::move(b.model()), "if_then_kernel");
  Session m(r.so_path);
  ASSERT_NE(m.s, nullptr);
  EXPECT_EQ(m.run({1, 2, 3}, {1}), (std::vector<std::vector<float>>{{3, 6, 9}, {2, 4, 6}}));
  EXPECT_EQ(m.run({1, 2, 3}, {0}), (std::vector<std::vector<float>>{{0, 0, 0}, {-1, -2, -3}}));
  EXPECT_EQ(m.run({5}, {1}), (std::vector<std::vector<float>>{{15}, {10}}));
}

// y = If(c, then: x itself, else: If(d, then: x + 1, else: x - 1)).
TEST(ControlFlow, NestedIfAndABranchThatReturnsAnOuterValue) {
  ModelBuilder b(17);
  Dim n = Dim::symbol("n");
  Type f = Type::tensor(DType::Float32, ir::Shape{n});
  auto* x = b.input("x", DType::Float32, {n});
  auto* c = b.input("c", DType::Bool, {});
  auto* d = b.input("d", DType::Bool, {});
  auto* one = b.const_f32("one", {}, {1});
  ir::Graph* main = b.model().graph.get();
  Branch t(main, "then"), e(main, "else");
  t.g->add_output(x);
  Branch et(e.g.get(), "else_then"), ee(e.g.get(), "else_else");
  et.g->add_output(et.op("Add", {x, one}, "plus", f));
  ee.g->add_output(ee.op("Sub", {x, one}, "minus", f));
  ir::Node* inner = e.g->add_node("If", {d}, {"inner"});
  inner->set_name("inner");
  inner->output()->set_type(f);
  set_graph_attr(inner, "then_branch", et);
  set_graph_attr(inner, "else_branch", ee);
  e.g->add_output(inner->output());
  b.output(add_if(b, c, t, e, "y", f)->output());
  auto r = compile(std::move(b.model()), "if_nested");
  Session m(r.so_path);
  ASSERT_NE(m.s, nullptr);
  EXPECT_EQ(m.run({1, 2}, {1, 0}), (std::vector<std::vector<float>>{{1, 2}}));
  EXPECT_EQ(m.run({1, 2}, {0, 1}), (std::vector<std::vector<float>>{{2, 3}}));
  EXPECT_EQ(m.run({1, 2}, {0, 0}), (std::vector<std::vector<float>>{{0, 1}}));
  EXPECT_EQ(m.run({7}, {1, 1}), (std::vector<std::vector<float>>{{7}}));
}
#endif

// Branches whose outputs have different shapes would need the If's output sized at run time: refused.
TEST(ControlFlow, BranchesOfDifferentShapesAreRefused) {
  ModelBuilder b(17);
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n});
  auto* c = b.input("c", DType::Bool, {});
  ir::Graph* main = b.model().graph.get();
  Branch t(main, "then"), e(main, "else");
  t.g->add_output(x);
  e.g->add_output(e.op("Constant", {}, "three", Type::tensor(DType::Float32, ir::Shape{3})));
  e.g->nodes().back()->set_attr([] {
    ir::Attribute a;
    a.name = "value";
    a.kind = ir::Attribute::Kind::Tensor;
    a.t = ir::Tensor::from_vector<float>(DType::Float32, {3}, {1, 2, 3});
    return a;
  }());
  b.output(add_if(b, c, t, e, "y", Type::tensor(DType::Float32, ir::Shape{n}))->output());
  try {
    compile(std::move(b.model()), "if_shapes");
    FAIL() << "expected a UserError";
  } catch (const UserError& err) {
    EXPECT_NE(std::string(err.what()).find("output 'y' is f32[n] but else_branch gives f32[3]; an If whose branches "
                                           "give outputs of different shapes is not supported yet"),
              std::string::npos)
        << err.what();
  }
}

TEST(ControlFlow, ANonBoolConditionIsRefused) {
  ModelBuilder b(17);
  auto* x = b.input("x", DType::Float32, {2});
  auto* c = b.input("c", DType::Float32, {});
  ir::Graph* main = b.model().graph.get();
  Branch t(main, "then"), e(main, "else");
  t.g->add_output(x);
  e.g->add_output(x);
  b.output(add_if(b, c, t, e, "y", Type::tensor(DType::Float32, ir::Shape{2}))->output());
  try {
    compile(std::move(b.model()), "if_float_cond");
    FAIL() << "expected a UserError";
  } catch (const UserError& err) {
    EXPECT_NE(std::string(err.what()).find(": the condition must be a bool tensor"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace onnxc::test
