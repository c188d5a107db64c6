// Grouping nodes into kernels (see partition_group.h).
#include "codegen/partition_group.h"

#include <algorithm>
#include <unordered_map>

#include "codegen/host_steps.h"

namespace onnxc::codegen {

KernelClass class_of(const ir::Node& n, const ir::OpsetMap& opsets) {
  const OpLowering* l = find_lowering(n.domain(), n.op_type(), ir::opset_of(opsets, n.domain()));
  return l ? l->kclass : KernelClass::Other;
}

bool is_control_flow(const ir::Node& n) { return ir::op_has(n.domain(), n.op_type(), ir::kControlFlow); }

bool is_shape_only(const ir::Node& n) { return ir::op_has(n.domain(), n.op_type(), ir::kShapeOnly); }

namespace {

// A Transpose that leaves the last axis in place: rows stay contiguous (vector loads of V's head dim).
bool keeps_last_axis(const ir::Node& n) {
  std::vector<int64_t> perm = n.attr_ints("perm");
  return !perm.empty() && perm.back() == static_cast<int64_t>(perm.size()) - 1;
}

// A Conv whose lowering copies its input X once into padded planes before its inner loops
// (lower/conv.cpp: float32 with a constant weight, one group or depthwise): an elementwise producer
// inlined there runs once per input element, as in a kernel of its own, without its pass over
// memory (squeeze-and-excitation's Mul by the channel scale before the projection; the Sigmoid and
// Mul of a SiLU before the next conv). A producer of an epilogue's operand runs once per output
// element, in the output's loop.
bool conv_copies_input(const ir::Node& conv) {
  if (!conv.domain().empty() || conv.op_type() != "Conv" || conv.num_inputs() < 2) return false;
  const ir::Value* x = conv.input(0);
  const ir::Value* w = conv.input(1);
  if (!x || !w || !w->is_constant() || x->dtype() != ir::DType::Float32) return false;
  int64_t group = conv.attr_int("group", 1);
  const auto& xs = x->shape();
  const auto& ws = w->shape();
  auto dim = [](const std::optional<ir::Shape>& s, size_t i) {
    return s && s->size() > i ? (*s)[i].as_const() : std::nullopt;
  };
  bool depthwise = dim(xs, 1) == group && dim(ws, 0) == group && dim(ws, 1) == int64_t{1};
  return group == 1 || depthwise;
}

// A Concat with a part whose length along the axis is known only at run time: the part may be
// empty, and only the default output schedule is specialized so as not to read it
// (LowerContext::empty_reads); stages a lowering schedules itself (a norm's statistics) would.
bool concat_of_runtime_lengths(const ir::Node& n) {
  if (!n.domain().empty() || n.op_type() != "Concat") return false;
  const ir::Value* out = n.num_outputs() ? n.output(0) : nullptr;
  if (!out || !out->shape() || out->shape()->empty()) return true;
  const int64_t r = static_cast<int64_t>(out->shape()->size());  // every input's rank too
  int64_t axis = n.attr_int("axis", 0);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return true;
  for (const ir::Value* in : n.inputs()) {
    if (!in) continue;
    const auto& s = in->shape();
    if (!s || static_cast<int64_t>(s->size()) != r || !(*s)[static_cast<size_t>(axis)].as_const()) return true;
  }
  return false;
}

// Whether a kernel rooted in class `k` (node `root`) may read producer `n` as an inline Func. A
// Concat with parts of run-time length joins elementwise kernels only (concat_of_runtime_lengths). GEMMs
// take none: their inner loops would recompute them; a convolution that copies its input once
// takes elementwise producers (conv_copies_input). Attention takes pure index maps only (the
// Slice or Split, Reshape and Transpose that split a projection into heads, and a Gather of one
// constant index: one layer of a stacked KV cache, passes/stacked_kv_cache): inline they cost address
// arithmetic, where an arithmetic producer of K or V would be recomputed for every query tile, and a
// Transpose that moves the last axis would turn V's row loads into gathers. Views join no other
// kernel, which reads them in place as they are.
bool accepts_fused_producer(KernelClass k, const ir::Node& root, const ir::Node& n, bool is_view,
                            const ir::OpsetMap& opsets) {
  if (k != KernelClass::Elementwise && concat_of_runtime_lengths(n)) return false;
  if (k == KernelClass::MatMul && !is_view && class_of(n, opsets) == KernelClass::Elementwise && conv_copies_input(root))
    return true;
  if (k == KernelClass::Attention) {
    if (is_view) return true;
    if (!n.domain().empty()) return false;
    return n.op_type() == "Slice" || n.op_type() == "Split" || (n.op_type() == "Transpose" && keeps_last_axis(n)) ||
           (n.op_type() == "Gather" && n.input(1) && n.input(1)->is_constant() && n.input(1)->constant().rank() == 0);
  }
  return !is_view && k != KernelClass::MatMul && k != KernelClass::Other;
}

// Producers that may be inlined into their consumer's kernel: pure index maps of their inputs. One
// output each, but for Split, whose parts (GPT-2's Q, K and V) may all be read by one kernel.
bool is_fusible_producer(const ir::Node& n, const ir::OpsetMap& opsets) {
  KernelClass k = class_of(n, opsets);  // a host step (a Cast to or from strings) is no kernel to inline
  bool split = n.domain().empty() && n.op_type() == "Split";
  return (k == KernelClass::Elementwise || k == KernelClass::DataMovement) && (n.num_outputs() == 1 || split) &&
         !is_host_op(n);
}

bool same_shape(const ir::Value* a, const ir::Value* b) {
  return a->shape() && b->shape() && *a->shape() == *b->shape() && a->dtype() == b->dtype();
}

class NodeGrouper {
 public:
  NodeGrouper(const std::vector<ir::Node*>& nodes, const NodePredicate& needs_kernel, const NodePredicate& is_view,
              const std::set<const ir::Node*>& live, const std::set<const ir::Value*>& read_by_subgraphs,
              const ir::OpsetMap& opsets)
      : nodes_(nodes), needs_kernel_(needs_kernel), is_view_(is_view), live_(live), read_by_subgraphs_(read_by_subgraphs),
        opsets_(opsets) {}

  // Assigns every node that needs a kernel to a group; the groups come out in execution order.
  // First each MatMul takes its chain of single-use elementwise consumers (bias, activation) as an
  // epilogue; then, in reverse topological order, fusible producers join the group of all their uses.
  NodeGroups run() {
    std::unordered_map<const ir::Node*, int>& topo = topo_;
    for (size_t i = 0; i < nodes_.size(); ++i) topo[nodes_[i]] = static_cast<int>(i);
    std::vector<std::vector<const ir::Node*>> groups;
    auto new_group = [&](const ir::Node* n) {
      groups.emplace_back();
      root_class_.push_back(class_of(*n, opsets_));
      group_root_.push_back(n);
      return static_cast<int>(groups.size()) - 1;
    };
    auto join = [&](const ir::Node* n, int g) {
      groups[g].push_back(n);
      group_of_[n] = g;
    };
    for (const ir::Node* n : nodes_) {
      if (!needs_kernel_(n) || class_of(*n, opsets_) != KernelClass::MatMul || group_of_.count(n)) continue;
      int g = new_group(n);
      join(n, g);
      root_of_chain_ = n;
      for (const ir::Node* e = epilogue_of(n); e; e = epilogue_of(e)) {
        if (diamond_side_) join(diamond_side_, g);
        join(e, g);
      }
    }
    for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) {
      const ir::Node* n = *it;
      if (is_view_(n)) {  // a view joins a kernel only as a fused producer; otherwise it stays a view
        int g = fusion_target(*n);
        if (g >= 0) {
          depth_[n] = fused_depth(*n, g);
          join(n, g);
        }
        continue;
      }
      if (!needs_kernel_(n) || group_of_.count(n)) continue;
      if (is_shape_only(*n) && only_kernel_uses(*n)) {
        shape_only_.insert(n);
        continue;
      }
      int g = fusion_target(*n);
      if (g >= 0) depth_[n] = fused_depth(*n, g);
      join(n, g < 0 ? new_group(n) : g);
    }
    std::vector<int> root_pos(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) {
      std::sort(groups[g].begin(), groups[g].end(), [&](auto* a, auto* b) { return topo[a] < topo[b]; });
      root_pos[g] = topo[groups[g].back()];
    }
    std::vector<int> order(groups.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return root_pos[a] < root_pos[b]; });
    NodeGroups r;
    for (int g : order) {
      r.groups.push_back(std::move(groups[g]));
      r.classes.push_back(root_class_[g]);
    }
    r.shape_only = std::move(shape_only_);
    return r;
  }

  // The elementwise node that can run as the epilogue of `n` (its output's only use, same shape).
  // After a Conv also a diamond: the output read by a node `side` whose only use is the epilogue
  // node, which reads the output too (a SiLU written as Sigmoid and Mul, x·sigmoid(x)); `side` is
  // then left in diamond_side_ for the caller to join first.
  const ir::Node* epilogue_of(const ir::Node* n) {
    diamond_side_ = nullptr;
    const ir::Value* out = n->num_outputs() == 1 ? n->output(0) : nullptr;
    if (!out || out->is_graph_output()) return nullptr;
    auto fusible = [&](const ir::Node* e, const ir::Value* like) {
      return needs_kernel_(e) && !group_of_.count(e) && class_of(*e, opsets_) == KernelClass::Elementwise && e->num_outputs() == 1 &&
             !is_host_op(*e) && same_shape(like, e->output(0));
    };
    if (out->uses().size() == 1) {
      const ir::Node* e = out->uses()[0].node;
      return fusible(e, out) ? e : nullptr;
    }
    const bool conv = root_of_chain_->domain().empty() && root_of_chain_->op_type() == "Conv";
    if (out->uses().size() != 2 || !conv) return nullptr;
    for (int i = 0; i < 2; ++i) {
      const ir::Node* side = out->uses()[i].node;
      const ir::Node* e = out->uses()[1 - i].node;
      const ir::Value* so = side->num_outputs() == 1 ? side->output(0) : nullptr;
      if (side == e || !so || so->is_graph_output() || so->uses().size() != 1 || so->uses()[0].node != e) continue;
      if (!fusible(side, out) || !fusible(e, out)) continue;
      diamond_side_ = side;
      return e;
    }
    return nullptr;
  }

  bool only_kernel_uses(const ir::Node& n) const {
    for (const ir::Value* v : n.outputs()) {
      if (!v) continue;
      if (v->is_graph_output() || read_by_subgraphs_.count(v)) return false;
      for (const auto& u : v->uses())  // a view, a shape-only node, a host step or an If cannot compute it
        if (live_.count(u.node) && (!group_of_.count(u.node) || is_host_op(*u.node) || is_control_flow(*u.node)))
          return false;
    }
    return true;
  }

  // The group a fusible producer joins, or -1 for a new group.
  int fusion_target(const ir::Node& n) const {
    if (!is_fusible_producer(n, opsets_)) return -1;
    int target = -1;
    bool shared = false;
    for (const ir::Value* out : n.outputs()) {
      if (!out) continue;
      if (out->is_graph_output() || read_by_subgraphs_.count(out)) return -1;
      for (const auto& u : out->uses()) {
        auto it = group_of_.find(u.node);
        if (it == group_of_.end()) return -1;  // a view, or a node of another graph
        shared |= target >= 0 && it->second != target;
        target = it->second;
      }
    }
    if (target < 0) return -1;  // nothing reads it
    if (shared) target = n.num_outputs() == 1 ? norm_sharing_target(*n.output(0)) : -1;
    if (target < 0 || !accepts_fused_producer(root_class_[target], *groups_root(target), n, is_view_(&n), opsets_) || is_host_op(*groups_root(target)))
      return -1;
    return fused_depth(n, target) <= kMaxFusedDepth ? target : -1;
  }

  // A residual sum read by a norm and by later nodes (the next residual `Add`): it joins the
  // norm's kernel, which writes it as a second output, instead of being a kernel of its own. Only
  // when the norm reads it as its input x and every other reader comes after the norm: then no
  // path leaves that kernel and comes back (its members all precede the norm).
  int norm_sharing_target(const ir::Value& out) const {
    int target = -1;
    for (const auto& u : out.uses()) {
      int g = group_of_.at(u.node);
      if (root_class_[g] == KernelClass::Norm && u.node->input(0) == &out && groups_root(g) == u.node) {
        if (target >= 0 && target != g) return -1;
        target = g;
      }
    }
    if (target < 0) return -1;
    int norm_pos = topo_.at(groups_root(target));
    for (const auto& u : out.uses())
      if (group_of_.at(u.node) != target && topo_.at(u.node) <= norm_pos) return -1;
    return target;
  }

  // Fused chains are cut every kMaxFusedDepth nodes. A fused producer becomes an inline Func of
  // its consumer, so the kernel's expression nests as deep as the chain is long: Halide's passes
  // recurse on it (a chain of 20,000 Adds overflowed the stack) and its bounds inference grows
  // faster than linearly with the depth. A cut costs one intermediate buffer per cut.
  static constexpr int kMaxFusedDepth = 64;

  // How deep `n` would sit in `target`'s expression: one below its deepest use there (depths are
  // recorded in group_nodes() as producers join, so each node is looked at once).
  int fused_depth(const ir::Node& n, int target) const {
    int d = 0;
    for (const ir::Value* out : n.outputs()) {
      if (!out) continue;
      for (const auto& u : out->uses()) {
        auto it = depth_.find(u.node);
        if (group_of_.at(u.node) == target && it != depth_.end()) d = std::max(d, it->second);
      }
    }
    return d + 1;
  }

 private:
  // The node a group was started with (its root: the last node in topological order).
  const ir::Node* groups_root(int g) const { return group_root_.at(static_cast<size_t>(g)); }

  const std::vector<ir::Node*>& nodes_;
  const NodePredicate& needs_kernel_;
  const NodePredicate& is_view_;
  const std::set<const ir::Node*>& live_;
  const std::set<const ir::Value*>& read_by_subgraphs_;
  const ir::OpsetMap& opsets_;                       // the model's opsets: which lowering (and class) a node has
  std::unordered_map<const ir::Node*, int> group_of_;
  std::unordered_map<const ir::Node*, int> depth_;  // fused producers: depth below their group's root
  std::vector<KernelClass> root_class_;             // by group index, while grouping
  std::vector<const ir::Node*> group_root_;         // by group index, while grouping
  std::unordered_map<const ir::Node*, int> topo_;   // node -> position in topological order
  std::set<const ir::Node*> shape_only_;
  const ir::Node* root_of_chain_ = nullptr;  // the MatMul-class node whose epilogue is being grown
  const ir::Node* diamond_side_ = nullptr;   // set by epilogue_of: a diamond's side node
};

}  // namespace

NodeGroups group_nodes(const std::vector<ir::Node*>& nodes, const NodePredicate& needs_kernel, const NodePredicate& is_view,
                       const std::set<const ir::Node*>& live, const std::set<const ir::Value*>& read_by_subgraphs,
                       const ir::OpsetMap& opsets) {
  return NodeGrouper(nodes, needs_kernel, is_view, live, read_by_subgraphs, opsets).run();
}

}  // namespace onnxc::codegen
