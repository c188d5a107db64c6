// The verifier: a well-formed graph passes; each defect is reported by its message.
#include <gtest/gtest.h>

#include "builder.h"
#include "ir/error.h"
#include "ir/verify.h"

namespace onnxc::ir {
namespace {

using test::Builder;

template <class E>
std::string error_of(const Graph& g, const VerifyOptions& opt = {}) {
  try {
    verify(g, opt);
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(Verify, AcceptsAnInferredGraphWithSubgraphs) {
  Builder b;
  Value* x = b.input("x", DType::Float32, {2});
  Value* y = b.op("Relu", {x});
  Node* n = b.node("If", {b.input("c", DType::Bool, {})});
  for (const char* name : {"then_branch", "else_branch"}) {
    Attribute a;
    a.name = name;
    a.kind = Attribute::Kind::Graph;
    a.g = std::make_shared<Graph>(name, &b.g);
    a.g->add_output(a.g->add_node("Neg", {y}, {std::string(name) + "_y"})->output(0));  // outer-scope use
    n->set_attr(a);
  }
  b.g.add_output(n->output(0));
  b.infer();
  EXPECT_NO_THROW(verify(b.model));
}

TEST(Verify, UseBeforeDefinition) {
  Builder b;
  Value* x = b.input("x", DType::Float32, {2});
  Node* relu = b.g.add_node("Relu", {x}, {"a"});
  Node* neg = b.g.insert_node_before(relu, "Neg", {relu->output(0)}, {"b"});
  neg->set_name("early");
  EXPECT_EQ(
      error_of<UserError>(b.g, {.require_types = false}),
      "verify: graph 'main': Neg node 'early' uses 'a' before it is defined (nodes are not in topological order)");
}

TEST(Verify, UndefinedInputAndUnproducedOutput) {
  Builder b;
  Graph other("other");
  Value* stray = other.add_input("stray", Type::tensor(DType::Float32, Shape{1}));
  b.g.add_output(stray);
  EXPECT_EQ(error_of<UserError>(b.g),
            "verify: graph 'main': output 'stray' is not produced by any input, initializer or node");

  Builder c;
  Node* outer = c.node("If", {c.input("cond", DType::Bool, {})});
  Attribute a;
  a.name = "then_branch";
  a.kind = Attribute::Kind::Graph;
  a.g = std::make_shared<Graph>("then", &c.g);
  Value* late = c.op("Relu", {c.input("x", DType::Float32, {1})});  // defined after the If
  a.g->add_output(a.g->add_node("Neg", {late}, {"n"})->output(0));
  outer->set_attr(a);
  EXPECT_TRUE(contains(error_of<UserError>(c.g, {.require_types = false}),
                       "Neg node producing 'n' uses 'Relu', which is not defined before it"));
}

TEST(Verify, DuplicateNamesAndMissingTypes) {
  Builder b;
  Value* x = b.input("x", DType::Float32, {2});
  b.g.add_node("Relu", {x}, {"x"});
  EXPECT_EQ(error_of<UserError>(b.g, {.require_types = false}),
            "verify: graph 'main': value name 'x' is defined twice");

  Builder c;
  Node* n = c.g.add_node("Relu", {c.input("x", DType::Float32, {2})}, {"y"});
  EXPECT_EQ(error_of<UserError>(c.g),
            "verify: graph 'main': value 'y' (output of Relu node producing 'y') has no type");
  n->output(0)->set_type(Type::tensor(DType::Undefined, Shape{2}));
  EXPECT_EQ(error_of<UserError>(c.g),
            "verify: graph 'main': tensor 'y' (output of Relu node producing 'y') has no element type");
  EXPECT_EQ(error_of<UserError>(c.g, {.require_types = false}), "(no error)");
}

TEST(Verify, BrokenUseListsAreInternalErrors) {
  Builder b;
  Value* x = b.input("x", DType::Float32, {2});
  Node* n = b.g.add_node("Relu", {x}, {"y"});
  auto& uses = const_cast<std::vector<Use>&>(x->uses());
  uses.clear();
  EXPECT_TRUE(contains(error_of<InternalError>(b.g, {.require_types = false}),
                       "the use list of 'x' misses input 0 of Relu node producing 'y'"));
  uses.push_back({n, 0});
  uses.push_back({n, 1});
  EXPECT_TRUE(contains(error_of<InternalError>(b.g, {.require_types = false}),
                       "names input 1 of Relu node producing 'y', which reads another value"));
}

TEST(Verify, SubgraphWithWrongParentIsInternalError) {
  Builder b;
  Node* n = b.node("If", {b.input("cond", DType::Bool, {})});
  Attribute a;
  a.name = "then_branch";
  a.kind = Attribute::Kind::Graph;
  a.g = std::make_shared<Graph>("then", nullptr);
  n->set_attr(a);
  EXPECT_TRUE(contains(error_of<InternalError>(b.g, {.require_types = false}),
                       "subgraph 'then' of If node producing 'If' has another parent"));
}

}  // namespace
}  // namespace onnxc::ir
