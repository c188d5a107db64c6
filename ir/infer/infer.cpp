// The inference driver: visits nodes in order, runs each op's rule from the op table and merges
// the results into the graph.
#include "ir/infer/infer.h"

#include "ir/infer/context.h"

namespace onnxc::ir {
namespace {

void run_rule(Node& n, InferState& st) {
  int64_t opset = opset_of(st.opsets, n.domain());
  const OpInfo* info = find_op(n.domain(), n.op_type(), opset);
  if (!info || !info->infer) {
    std::string d = n.domain().empty() ? "" : n.domain() + ".";
    st.result.missing_rules.insert(d + n.op_type() + "@" + std::to_string(opset));
    return;
  }
  InferContext ctx(n, opset, st);
  info->infer(ctx);
  ctx.commit();
}

}  // namespace

void infer_graph_nodes(Graph& g, InferState& st) {
  for (Node* n : g.nodes()) run_rule(*n, st);
}

InferenceResult infer_graph(Graph& g, const OpsetMap& opsets) {
  InferenceResult r;
  InferState st{r, opsets, std::nullopt, {}};
  infer_graph_nodes(g, st);
  return r;
}

InferenceResult infer_shapes(Model& m) {
  OpsetMap opsets = opset_map(m);
  return infer_graph(*m.graph, opsets);
}

void infer_node(Node& n, const OpsetMap& opsets, InferenceResult& result) {
  InferState st{result, opsets, std::nullopt, {}};
  run_rule(n, st);
}

}  // namespace onnxc::ir
