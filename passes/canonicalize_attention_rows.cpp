// canonicalize, attention over a column of scores (see canonicalize.h): the decoder-cell spelling of
// Luong attention rewritten as the core Q·Kᵀ form with a length-1 query, so fuse_attention needs no
// second matcher.
//
//   K[b,s,h] ─┐                                           Unsqueeze(q,1)[b,1,h] ─┐
//   Unsqueeze(q,2)[b,h,1] ─ MatMul ─ Squeeze(2) ─[b,s]      Transpose(K)[b,h,s] ─ MatMul ─[b,1,s]
//     ─ Where/Add/Mul/Cast… ─ Softmax(1) ─ Unsqueeze(1)  ─▶   ─ Where/Add/Mul/Cast… ─ Softmax(-1)
//     ─ MatMul(·, V[b,s,d]) ─ [b,1,d]                           ─ MatMul(·, V) ─ [b,1,d]
//
// (K·q)ᵀ = qᵀ·Kᵀ holds product by product, and the ops between the scores and the weighted sum are
// elementwise or a softmax over the key axis: they compute the same values on [b,1,s] as on [b,s]
// (their other operands gain the length-1 axis where broadcasting needs it). Values the graph also
// reads at [b,s] (Luong's `align`) are Squeezes of the new ones, under their old names.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "ir/infer/infer.h"
#include "passes/canonicalize_rules.h"
#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

// Ops the scores may pass through on their way to the softmax weights.
const std::set<std::string> kChainOps = {"Where", "Add", "Sub", "Mul", "Div", "Cast", "Softmax", "Neg", "Identity"};

int64_t rank_of(const ir::Value* v) { return v && v->shape() ? static_cast<int64_t>(v->shape()->size()) : -1; }

bool dim_is_one(const ir::Value* v, int64_t axis) {
  const ir::Dim& d = (*v->shape())[static_cast<size_t>(axis)];
  return d.is_const() && d.value() == 1;
}

// The single axis a Squeeze/Unsqueeze node names (normalized against `rank`), or -1.
int64_t single_axis(const ir::Node& n, int64_t rank) {
  if (n.num_inputs() != 2 || !n.input(1) || !n.input(1)->is_constant() || n.input(1)->constant().numel() != 1)
    return -1;
  int64_t a = static_cast<int64_t>(n.input(1)->constant().get_f64(0));
  if (a < 0) a += rank;
  return a >= 0 && a < rank ? a : -1;
}

// Inserts new nodes before the weighted sum, each typed at once (the fusion that follows reads
// shapes; a later inference would type them too), and makes axis constants once each.
struct Builder {
  ir::Graph& g;
  ir::Node& pos;
  ir::OpsetMap opsets;
  std::map<int64_t, ir::Value*> axes = {};
  ir::InferenceResult scratch = {};

  ir::Value* add(const std::string& op, const std::vector<ir::Value*>& inputs, const std::string& hint,
                 const std::function<void(ir::Node&)>& attrs = {}) {
    ir::Node* n = g.insert_node_before(&pos, op, inputs, {g.unique_name(hint)});
    if (attrs) attrs(*n);
    try {
      ir::infer_node(*n, opsets, scratch);
    } catch (const std::exception&) {
      // Left unknown: the next infer_shapes reports it.
    }
    return n->output();
  }
  ir::Value* axis(int64_t a) {
    ir::Value*& c = axes[a];
    if (!c) c = g.add_initializer(g.unique_name("row_axis"), i64_tensor({a}));
    return c;
  }
};

// The chain from the scores' Squeeze down to the weights `p` (rank r): nodes top first, each with
// the input index that carries the scores. Empty if `p` is not reached that way.
struct Link {
  ir::Node* node;
  size_t main;
};

bool walk_up(ir::Value* x, int64_t r, std::vector<Link>& chain, int depth) {
  if (depth > 12 || rank_of(x) != r || !x->producer() || !x->producer()->domain().empty()) return false;
  ir::Node* n = x->producer();
  if (n->op_type() == "Squeeze") return true;
  if (!kChainOps.count(n->op_type()) || n->num_outputs() != 1) return false;
  size_t first = n->op_type() == "Where" ? 1 : 0;
  for (size_t i = first; i < n->num_inputs(); ++i) {
    ir::Value* in = n->input(i);
    if (!in || in->is_constant() || !walk_up(in, r, chain, depth + 1)) continue;
    chain.push_back({n, i});
    return true;
  }
  return false;
}

// What the rewrite rebuilds: the weights' rank r and the chain from the scores' Squeeze to them.
struct RowPlan {
  int64_t r = 0;
  std::vector<Link> chain;
  ir::Node* squeeze = nullptr;
  // How the scores become a row: the Squeeze removed the row axis (its input is the row), or it
  // removed the column axis of K·u and the row is qᵀ·Kᵀ (q the Unsqueeze's input when u is one).
  bool from_column = false;
  ir::Value *k = nullptr, *u = nullptr, *q = nullptr;
};

// The scores as a row [.., 1, s] can be had from the Squeeze that made them [.., s]: the row itself
// when the Squeeze removed the row axis, or qᵀ·Kᵀ from the column K·u (u = [.., h, 1] per batch row).
std::string scores_row_plan(RowPlan& p) {
  const int64_t r = p.r;
  ir::Value* y = p.squeeze->input(0);
  int64_t axis = single_axis(*p.squeeze, r + 1);
  if (rank_of(y) != r + 1 || axis < 0 || !dim_is_one(y, axis)) return "the scores' Squeeze removes no unit axis";
  if (axis == r - 1) return "";
  if (axis != r || !produced_by_op(y, "MatMul")) return "the scores are not a column K·q";
  p.from_column = true;
  p.k = y->producer()->input(0), p.u = y->producer()->input(1);
  // A per-row query, not a weight vector shared by the batch (Bahdanau's vᵀ·tanh(...)).
  if (rank_of(p.k) != r + 1 || rank_of(p.u) != r + 1 || p.u->is_constant() || !dim_is_one(p.u, r))
    return "the column is not K times a per-row query";
  if (produced_by_op(p.u, "Unsqueeze") && single_axis(*p.u->producer(), r + 1) == r) p.q = p.u->producer()->input(0);
  return "";
}

// Weights `p` (rank r) unsqueezed at r-1 for the weighted sum, computed from a scores Squeeze by a
// chain holding a softmax over the key axis.
std::string plan_rows(const Match& m, const FusionContext&, RowPlan& p) {
  ir::Node& unsq = *m.node("unsq");
  p.r = rank_of(m["p"]);
  const int64_t r = p.r;
  if (r < 2 || single_axis(unsq, r + 1) != r - 1) return "not a row of the weights";
  if (!walk_up(m["p"], r, p.chain, 0) || p.chain.empty()) return "the weights are not computed from squeezed scores";
  bool softmax = false;
  for (const Link& l : p.chain) {
    if (l.node->op_type() == "Softmax") {
      int64_t a = l.node->attr_int("axis", -1);
      if (a != -1 && a != r - 1) return "a softmax not over the keys";
      softmax = true;
    }
    for (size_t i = 0; i < l.node->num_inputs(); ++i)
      if (i != l.main && l.node->input(i) && rank_of(l.node->input(i)) < 0) return "an operand of unknown rank";
  }
  if (!softmax) return "no softmax between the scores and the weights";
  p.squeeze = p.chain.front().node->input(p.chain.front().main)->producer();
  return scores_row_plan(p);
}

void rewrite_rows(const Match& m, const RowPlan& p, RewriteBuilder& rb) {
  const int64_t r = p.r;
  ir::Node& unsq = *m.node("unsq");
  Builder b{rb.graph(), rb.root(), ir::opset_map(rb.context().model)};
  ir::Value* cur = p.squeeze->input(0);
  if (p.from_column) {
    ir::Value* y = cur;
    std::vector<int64_t> perm;
    for (int64_t i = 0; i <= r; ++i) perm.push_back(i);
    std::swap(perm[r - 1], perm[r]);
    auto transpose = [&](ir::Value* v, const std::string& suffix) {
      return b.add("Transpose", {v}, y->name() + suffix, [&](ir::Node& n) { n.set_attr_ints("perm", perm); });
    };
    // q as the row Unsqueeze(q, r-1) when u is Unsqueeze(q, r), else uᵀ.
    ir::Value* q_row = p.q ? b.add("Unsqueeze", {p.q, b.axis(r - 1)}, y->name() + "_q_row") : transpose(p.u, "_q_row");
    cur = b.add("MatMul", {q_row, transpose(p.k, "_kt")}, y->name() + "_row");
  }
  // Nodes that may die: the old chain, its Squeeze and the column product with its query Unsqueeze.
  std::vector<ir::Node*> dead = {&unsq};
  for (auto it = p.chain.rbegin(); it != p.chain.rend(); ++it) dead.push_back(it->node);
  dead.push_back(p.squeeze);
  // (Only nodes nothing reads any more are removed: the row form keeps its product.)
  if (ir::Node* column = p.squeeze->input(0)->producer(); column && column->op_type() == "MatMul") {
    dead.push_back(column);
    if (ir::Node* u = column->input(1)->producer(); u && u->op_type() == "Unsqueeze") dead.push_back(u);
  }
  // Each op again on [.., 1, s]; an operand reaching the squeezed axis gets it (Unsqueeze).
  // An operand of rank ro aligned to the right of [.., s] reaches the new axis iff ro >= 2; it gains
  // it at ro - 1.
  std::vector<std::pair<ir::Value*, ir::Value*>> renamed;  // old [.., s] value, new [.., 1, s] one
  for (const Link& l : p.chain) {
    std::vector<ir::Value*> ins = l.node->inputs();
    for (size_t i = 0; i < ins.size(); ++i) {
      if (i == l.main) {
        ins[i] = cur;
      } else if (ins[i] && rank_of(ins[i]) >= 2) {
        ins[i] = b.add("Unsqueeze", {ins[i], b.axis(rank_of(ins[i]) - 1)}, ins[i]->name() + "_row");
      }
    }
    ir::Value* out = b.add(l.node->op_type(), ins, l.node->output()->name() + "_row", [&](ir::Node& n) {
      for (const ir::Attribute& a : l.node->attributes()) n.set_attr(a);
      if (n.op_type() == "Softmax") n.set_attr_int("axis", -1);
    });
    renamed.emplace_back(l.node->output(), out);
    cur = out;
  }
  // The weighted sum reads the new weights; other readers of the old values read Squeezes of the new
  // ones, which take the old names (the graph maps a name to the value added last).
  replace_all_uses_everywhere(unsq.output(), cur);
  ir::Graph& g = b.g;
  for (auto [old_v, new_v] : renamed) {
    ir::Node* sq = g.insert_node_before(&rb.root(), "Squeeze", {new_v, b.axis(r - 1)}, {old_v->name()});
    sq->output()->set_type(old_v->type());
    replace_all_uses_everywhere(old_v, sq->output());
    dead.push_back(sq);
  }
  // The old chain goes now, so the fusion that follows sees the new values read only where they are.
  for (bool again = true; again;) {
    again = false;
    for (ir::Node*& n : dead) {
      if (!n || std::any_of(n->outputs().begin(), n->outputs().end(), [](ir::Value* o) { return o && is_used(*o); }))
        continue;
      rb.remove(n);
      n = nullptr;
      again = true;
    }
  }
  g.topological_sort();  // readers of the old values may come before the weighted sum
}

}  // namespace

std::vector<FusionRule> canonical_row_rules() {
  using namespace pat;
  // The Unsqueeze is rewired, not replaced: every reader of the row takes the new weights.
  Pattern row = op("Unsqueeze", {any().capture("p"), any()}).capture("unsq");
  FusionRule rows = planned_rule<RowPlan>("attention_rows", "canonical", op("MatMul", {row, any()}), plan_rows, rewrite_rows);
  rows.allow_shared_interior = true;
  return {rows};
}

}  // namespace onnxc::passes
