// Small helpers the passes share for editing the graph: replacing values by constants while keeping
// their names, building constant tensors, and reading inferred shapes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace onnxc::passes {

// Replaces every output of `n` by a constant holding values[i] (same value names, so dumps and
// graph outputs keep their names) and removes `n`. Outputs that are omitted stay omitted.
void replace_outputs_with_constants(ir::Node& n, std::vector<ir::Tensor> values);

// Replaces `v` (a node output or graph value) by a constant holding `t` in v's graph and returns
// it. When v's producer has no other used output it is removed and the constant takes v's name;
// otherwise the constant gets a fresh name derived from v's.
ir::Value* replace_with_constant(ir::Value* v, ir::Tensor t);

// Builds `op_type(inputs)` just before `n`, with n's output names and types (no attributes), moves
// every use of n's outputs to it and removes `n`. For rewrites that swap one op for another.
ir::Node* replace_node(ir::Node& n, const std::string& op_type, const std::vector<ir::Value*>& inputs,
                       const std::string& domain = "");
// The same, leaving `n` in place and unread: for a rule on the fusion driver, which removes it.
ir::Node* respell_node(ir::Node& n, const std::string& op_type, const std::vector<ir::Value*>& inputs,
                       const std::string& domain = "");

// Graph::replace_all_uses, plus outputs of nested subgraphs that return `from` directly.
void replace_all_uses_everywhere(ir::Value* from, ir::Value* to);

// Copies the nodes and initializers of `body` (a subgraph with no nested subgraphs) into `into`,
// just before `before` (appended when null), reading `moved[v]` for each body value v found there
// (body inputs must be) and outer-scope values as they are; records each copy in `moved`. Copies keep
// the body's types when `keep_types` (else they are left for inference). For inlining a branch or a
// loop body, and for rebuilding a body.
void copy_graph_nodes(const ir::Graph& body, ir::Graph& into, ir::Node* before,
                      std::map<const ir::Value*, ir::Value*>& moved, bool keep_types);

// Whether `v` is used anywhere: by a node, as an output of its graph, or as an output of a subgraph
// that returns it directly.
bool is_used(const ir::Value& v);

// Whether node `n` is the only reader of `v` (one use, not a graph output, not returned by a subgraph):
// then `v` may be replaced for n's sake alone.
bool only_use_is(const ir::Value& v, const ir::Node& n);

// Whether `v` is the output of a default-domain node of type `op`.
inline bool produced_by_op(const ir::Value* v, const char* op) {
  return v && v->producer() && v->producer()->op_type() == op && v->producer()->domain().empty();
}

// The inferred shape of `v`, or null when `v` is null or its shape is unknown.
inline const ir::Shape* shape_of(const ir::Value* v) { return v && v->shape() ? &*v->shape() : nullptr; }

ir::Tensor i64_tensor(const std::vector<int64_t>& values);  // rank 1
ir::Tensor i64_scalar(int64_t v);                           // rank 0

}  // namespace onnxc::passes
