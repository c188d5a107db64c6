// Loop-carried collected sequences -> scan outputs (see loop_sequence_to_scan.h). The body is rebuilt
// without the carried sequence (the IR cannot drop a graph input in place) and a new Loop node takes
// the old one's inputs and outputs but that value, plus the scan output at the end.
#include "passes/loop_sequence_to_scan.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

bool is(const ir::Node& n, const char* op) { return n.domain().empty() && n.op_type() == op; }

// Whether `v` has the same shape in every iteration: each dim a number or a function of the main
// graph's input dims. A scan output needs that; a list may hold tensors of other shapes (a Slice to
// the iteration count), which ConcatFromSequence joins and a scan would not.
bool loop_invariant_shape(const ir::Value& v, const ir::Graph& main) {
  if (!v.shape()) return false;
  std::set<std::string> inputs, used;
  for (const ir::Value* in : main.inputs())
    for (const ir::Dim& d : in->shape() ? *in->shape() : ir::Shape{}) d.collect_symbols(inputs);
  for (const ir::Dim& d : *v.shape()) {
    if (d.has_unknown()) return false;
    d.collect_symbols(used);
  }
  return std::includes(inputs.begin(), inputs.end(), used.begin(), used.end());
}

// The SequenceInsert that appends to carried value k of `loop` when that value is a collected
// sequence as loop_sequence_to_scan.h describes; else null.
ir::Node* appending_insert(const ir::Node& loop, const ir::Graph& body, size_t k) {
  if (!produced_by_op(loop.input(2 + k), "SequenceEmpty")) return nullptr;
  const ir::Value* in = body.inputs()[2 + k];
  if (in->uses().size() != 1 || in->is_graph_output()) return nullptr;
  ir::Node* ins = in->uses()[0].node;
  if (ins->graph() != &body || !is(*ins, "SequenceInsert") || ins->input(0) != in || ins->input(2)) return nullptr;
  const ir::Value* out = ins->output(0);
  if (!out->uses().empty() || std::count(body.outputs().begin(), body.outputs().end(), out) != 1 ||
      body.outputs()[1 + k] != out || !ins->input(1))
    return nullptr;
  const ir::Graph* main = &body;
  while (main->parent()) main = main->parent();
  if (!loop_invariant_shape(*ins->input(1), *main)) return nullptr;
  const ir::Value* fin = loop.output(k);
  if (fin && fin->is_graph_output()) return nullptr;
  for (const ir::Use& u : fin ? fin->uses() : std::vector<ir::Use>{})
    if (u.node->graph() != loop.graph() || !is(*u.node, "ConcatFromSequence")) return nullptr;
  return ins;
}

// `body` without carried value k: its SequenceInsert's tensor becomes the last (scan) output.
std::shared_ptr<ir::Graph> body_without(const ir::Graph& body, size_t k, const ir::Node& ins, ir::Graph* parent) {
  auto nb = std::make_shared<ir::Graph>(body.name(), parent);
  std::map<const ir::Value*, ir::Value*> moved;
  for (size_t i = 0; i < body.inputs().size(); ++i)
    if (i != 2 + k) moved[body.inputs()[i]] = nb->add_input(body.inputs()[i]->name(), body.inputs()[i]->type());
  copy_graph_nodes(body, *nb, nullptr, moved, /*keep_types=*/true);
  nb->remove_node(moved.at(ins.output(0))->producer());  // its sequence input is the dropped one
  auto here = [&](ir::Value* v) {
    auto it = moved.find(v);
    return it == moved.end() ? v : it->second;
  };
  for (size_t j = 0; j < body.outputs().size(); ++j)
    if (j != 1 + k) nb->add_output(here(body.outputs()[j]));
  nb->add_output(here(ins.input(1)));
  return nb;
}

// ConcatFromSequence of the collected values, from their scan output S = [T, d0, ..., d(r-1)].
// Stacked along a (new_axis=1): S itself when a is 0, else S with axis 0 moved to a. Joined along an
// existing axis a (new_axis=0): the same move to a, then T and d(a) merged by a Reshape whose target
// is S's own shape with those two dims replaced by -1.
void join_from_scan(ir::Node& concat, ir::Value* scan, int64_t elem_rank) {
  ir::Graph& g = *concat.graph();
  bool stack = concat.attr_int("new_axis", 0) != 0;
  int64_t rank = elem_rank + 1, a = concat.attr_int("axis", 0);
  if (a < 0) a += stack ? rank : elem_rank;
  ir::Value* out = concat.output(0);
  std::string base = out->name();
  ir::Value* v = scan;
  if (a > 0) {
    std::vector<int64_t> perm;
    for (int64_t j = 0; j < rank; ++j) perm.push_back(j < a ? j + 1 : j == a ? 0 : j);
    ir::Node* t = g.insert_node_before(&concat, "Transpose", {scan}, {g.unique_name(base + "_stack")});
    t->set_attr_ints("perm", perm);
    v = t->output(0);
  }
  if (!stack) {
    ir::Value* shape = g.insert_node_before(&concat, "Shape", {scan}, {g.unique_name(base + "_shape")})->output(0);
    std::vector<ir::Value*> parts;
    auto dims = [&](int64_t from, int64_t to) {  // S's dims [from, to) as a 1-D i64 tensor
      if (from >= to) return;
      auto c = [&](int64_t x) { return g.add_initializer(g.unique_name(base + "_at"), i64_tensor({x})); };
      parts.push_back(
          g.insert_node_before(&concat, "Slice", {shape, c(from), c(to)}, {g.unique_name(base + "_dims")})->output(0));
    };
    dims(1, a + 1);
    parts.push_back(g.add_initializer(g.unique_name(base + "_joined"), i64_tensor({-1})));
    dims(a + 2, rank);
    ir::Node* target = g.insert_node_before(&concat, "Concat", parts, {g.unique_name(base + "_target")});
    target->set_attr_int("axis", 0);
    v = g.insert_node_before(&concat, "Reshape", {v, target->output(0)}, {g.unique_name(base + "_join")})->output(0);
  }
  ir::Node* id = g.insert_node_before(&concat, "Identity", {v}, {out->name()});
  replace_all_uses_everywhere(out, id->output(0));
  g.remove_node(&concat);
}

bool rewrite(ir::Node& loop) {
  const ir::Attribute* a = loop.attr("body");
  if (!is(loop, "Loop") || !a || !a->g || loop.num_inputs() < 3) return false;
  const ir::Graph& body = *a->g;
  size_t n_carried = loop.num_inputs() - 2;
  if (loop.num_outputs() < n_carried ||
      body.inputs().size() != n_carried + 2 || body.outputs().size() != n_carried + 1 + (loop.num_outputs() - n_carried))
    return false;
  for (const ir::Node* b : body.nodes())
    if (!b->subgraphs().empty()) return false;
  for (size_t k = 0; k < n_carried; ++k) {
    ir::Node* ins = appending_insert(loop, body, k);
    if (!ins) continue;
    int64_t elem_rank = static_cast<int64_t>(ins->input(1)->shape()->size());
    if (loop.output(k))
      for (const ir::Use& u : loop.output(k)->uses()) {
        int64_t axis = u.node->attr_int("axis", 0), r = elem_rank + (u.node->attr_int("new_axis", 0) != 0);
        if (axis < -r || axis >= r) return false;  // inference reports it
      }
    ir::Graph& g = *loop.graph();
    std::vector<ir::Value*> inputs;
    std::vector<std::string> names;
    for (size_t i = 0; i < loop.num_inputs(); ++i)
      if (i != 2 + k) inputs.push_back(loop.input(i));
    for (size_t i = 0; i < loop.num_outputs(); ++i)
      if (i != k) names.push_back(loop.output(i) ? loop.output(i)->name() : "");
    std::string base = loop.output(k) ? loop.output(k)->name() : "collected";
    names.push_back(g.unique_name(base + "_scan"));
    ir::Node* nl = g.insert_node_before(&loop, "Loop", inputs, names);
    nl->set_name(loop.name());
    for (const ir::Attribute& at : loop.attributes()) {
      ir::Attribute copy = at;
      if (copy.name == "body") copy.g = body_without(body, k, *ins, &g);
      nl->set_attr(copy);
    }
    ir::Value* scan = nl->outputs().back();
    if (ir::Value* fin = loop.output(k)) {
      std::vector<ir::Node*> readers;
      for (const ir::Use& u : fin->uses()) readers.push_back(u.node);
      for (ir::Node* r : readers) join_from_scan(*r, scan, elem_rank);
    }
    for (size_t i = 0, j = 0; i < loop.num_outputs(); ++i) {
      if (i == k) continue;
      ir::Value* old = loop.output(i);
      ir::Value* now = nl->output(j++);
      if (!old) continue;
      now->set_type(old->type());
      replace_all_uses_everywhere(old, now);
    }
    g.remove_node(&loop);
    return true;
  }
  return false;
}

bool rewrite_in(ir::Graph& g) {
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    for (ir::Node* n : g.nodes()) {
      for (ir::Graph* sg : n->subgraphs()) changed |= rewrite_in(*sg);
      // A rewrite removes nodes after `n` too (the list's readers): take a fresh list.
      if (rewrite(*n)) {
        changed = again = true;
        break;
      }
    }
  }
  return changed;
}

}  // namespace

bool loop_sequence_to_scan(ir::Model& model) { return rewrite_in(*model.graph); }

}  // namespace onnxc::passes
