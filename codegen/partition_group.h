// Grouping the nodes of one graph into kernels, the first half of partitioning (partition.cpp turns
// each group into a kernel). Each MatMul first takes its chain of single-use, same-shape elementwise
// consumers as an epilogue; then, in reverse topological order, an elementwise or data-movement node
// joins the kernel of its consumers when every use of its output lies in that one kernel (and the
// output is not a graph output); a residual sum read by a norm and by later nodes joins the norm's
// kernel. Each kernel is a convex set (one root plus the trees that feed only it), so no path leaves
// a kernel and comes back. Shape-only nodes are left out, to be copied into their readers. Groups
// may hold views (see group_nodes); such a view runs in its kernel as onnxc.Copy.
#pragma once

#include <functional>
#include <set>
#include <vector>

#include "codegen/lower/lower.h"
#include "ir/graph.h"

namespace onnxc::codegen {

struct NodeGroups {
  std::vector<std::vector<const ir::Node*>> groups;  // in execution order; members in topological order
  std::vector<KernelClass> classes;                  // the class of each group's root
  std::set<const ir::Node*> shape_only;              // copied into the kernels that read them
};

// `nodes`: the graph's nodes in topological order. `needs_kernel`: the ones that run in a kernel (live,
// not constants, not views). `is_view`: live views (Reshape, Squeeze...: no kernel of their own,
// new dims over their input's bytes). A view normally stays one, but one between producers that an
// Attention kernel takes in (the head split of Q, K and V) joins that kernel, computed inline, so
// the kernel reads the projection's output in place. `live`: the nodes graph outputs depend on.
// `read_by_subgraphs`: values that nodes inside subgraphs read (their producers cannot be fused away).
using NodePredicate = std::function<bool(const ir::Node*)>;
// `opsets`: the model's, for the lowering (and kernel class) of each node.
NodeGroups group_nodes(const std::vector<ir::Node*>& nodes, const NodePredicate& needs_kernel, const NodePredicate& is_view,
                       const std::set<const ir::Node*>& live, const std::set<const ir::Value*>& read_by_subgraphs,
                       const ir::OpsetMap& opsets);

// The kernel class of a node's lowering at its domain's opset (Other when it has none).
KernelClass class_of(const ir::Node& n, const ir::OpsetMap& opsets);

// Ops that run subgraphs (the op table's kControlFlow: If, Loop, Scan, SequenceMap); those with an
// entry in partition.cpp's table of control ops become control steps, the others are unsupported.
bool is_control_flow(const ir::Node& n);

// Ops computed from shapes alone, no input data read (kShapeOnly: Shape, Size, onnxc.SymbolicShape):
// copied into every kernel that reads them rather than run as kernels of their own; a consumer that
// never loads the value drops it.
bool is_shape_only(const ir::Node& n);

}  // namespace onnxc::codegen
