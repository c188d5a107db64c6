// use_kv_cache (see use_kv_cache.h): the past/present pairs of a decoder step as onnxc.CacheAppend,
// which the runtime runs in place (runtime/src/step_cache.c):
//
//   past (graph input)   new                 past (graph input)   new
//            \          /                              \          /
//      Concat(axis) -> present (output)  ==>   onnxc.CacheAppend(axis) -> present (output)
//
//   Attention(q, k, v, mask, past_k, past_v) -> y, present_k, present_v (outputs)
//     ==> present_k = CacheAppend(past_k, k), present_v = CacheAppend(past_v, v)
//         Attention(q, present_k, present_v, mask; __onnxc_causal_from_end) -> y
//
//   TensorScatter(past, update, write_indices) -> present (output)  ==>  onnxc.CacheScatter(...)
//
// Caches stacked into one tensor (K and V of a layer, or all layers) are first brought to these forms, or
// to a chain of CacheAppend links with a `layer`, by stack_kv_cache (stacked_kv_cache.h).
#include "passes/use_kv_cache.h"

#include "ir/onnxc_attrs.h"
#include "passes/rewrite.h"
#include "passes/stacked_kv_cache.h"

namespace onnxc::passes {
namespace {

// A value the caller binds each step and reads back: a graph input, and a graph output.
bool is_cache_pair(const ir::Value* past, const ir::Value* present) {
  return past && present && past->is_graph_input() && !past->is_constant() && present->is_graph_output() &&
         past->dtype() == present->dtype();
}

ir::Node* cache_append(ir::Node& before, ir::Value* past, ir::Value* add, int64_t axis, int64_t heads,
                       const std::string& name) {
  ir::Graph& g = *before.graph();
  ir::Node* c = g.insert_node_before(&before, "CacheAppend", {past, add}, {name}, "onnxc");
  c->set_attr_int("axis", axis);
  if (heads > 0) c->set_attr_int("heads", heads);
  return c;
}

bool rewrite_concat(ir::Node& n) {
  if (n.num_inputs() != 2 || !is_cache_pair(n.input(0), n.output(0))) return false;
  const ir::Shape* s = shape_of(n.input(0));
  if (!s) return false;
  int64_t r = static_cast<int64_t>(s->size()), axis = n.attr_int("axis", 0);
  if (axis < 0) axis += r;
  ir::Node* c = cache_append(n, n.input(0), n.input(1), axis, 0, n.output(0)->name());
  c->output(0)->set_type(n.output(0)->type());
  replace_all_uses_everywhere(n.output(0), c->output(0));
  n.graph()->remove_node(&n);
  return true;
}

// TensorScatter(past, update, write_indices?) -> present: the cache keeps the model's own length.
bool rewrite_tensor_scatter(ir::Node& n) {
  if (!is_cache_pair(n.input(0), n.output(0))) return false;
  const ir::Shape* s = shape_of(n.input(0));
  if (!s) return false;
  int64_t r = static_cast<int64_t>(s->size()), axis = n.attr_int("axis", -2);
  if (axis < 0) axis += r;
  std::string mode = n.attr_string("mode", "linear");
  if (axis < 1 || axis >= r || (mode != "linear" && mode != "circular")) return false;  // the kernel form reports it
  std::vector<ir::Value*> in = {n.input(0), n.input(1)};
  if (n.input(2)) in.push_back(n.input(2));
  ir::Node* c = n.graph()->insert_node_before(&n, "CacheScatter", in, {n.output(0)->name()}, "onnxc");
  c->set_attr_int("axis", axis);
  c->set_attr_int("circular", mode == "circular");
  c->output(0)->set_type(n.output(0)->type());
  replace_all_uses_everywhere(n.output(0), c->output(0));
  n.graph()->remove_node(&n);
  return true;
}

bool rewrite_attention(ir::Node& n) {
  if (n.num_inputs() < 6 || n.num_outputs() < 3 || !is_cache_pair(n.input(4), n.output(1)) ||
      !is_cache_pair(n.input(5), n.output(2)))
    return false;
  if (n.num_outputs() > 3 && n.output(3) && is_used(*n.output(3))) return false;  // qk output: keep the node whole
  const ir::Shape *k = shape_of(n.input(1)), *past = shape_of(n.input(4));
  if (!k || !past || past->size() != 4) return false;
  int64_t heads = k->size() == 3 ? n.attr_int("kv_num_heads", 0) : 0;
  if (k->size() == 3 && heads <= 0) return false;
  ir::Node* pk = cache_append(n, n.input(4), n.input(1), 2, heads, n.output(1)->name());
  ir::Node* pv = cache_append(n, n.input(5), n.input(2), 2, heads, n.output(2)->name());
  std::vector<ir::Value*> in = {n.input(0), pk->output(0), pv->output(0)};
  if (n.input(3)) in.push_back(n.input(3));
  pk->output(0)->set_type(n.output(1)->type());
  pv->output(0)->set_type(n.output(2)->type());
  ir::Node* a = n.graph()->insert_node_before(&n, "Attention", in, {n.output(0) ? n.output(0)->name() : ""});
  if (n.output(0)) a->output(0)->set_type(n.output(0)->type());
  for (const ir::Attribute& at : n.attributes()) a->set_attr(at);
  a->set_attr_int(ir::kCausalFromEnd, 1);
  for (size_t i = 0; i < 3; ++i)
    if (n.output(i)) replace_all_uses_everywhere(n.output(i), i == 0 ? a->output(0) : (i == 1 ? pk : pv)->output(0));
  n.graph()->remove_node(&n);
  return true;
}

}  // namespace

bool use_kv_cache(ir::Model& m, PassContext& ctx) {
  std::vector<std::string> why, done;
  bool changed = stack_kv_cache(m, &why, &done);
  if (ctx.report) {
    for (const std::string& d : done) ctx.report->canonical.push_back({"stacked_kv_cache", "canonical", 0, d});
    for (const std::string& w : why) ctx.report->near_misses.push_back({"stacked_kv_cache", "canonical", w.substr(0, w.find(':')), w, 1});
  }
  for (ir::Node* n : m.graph->nodes()) {
    if (!n->domain().empty()) continue;
    if (n->op_type() == "Concat") changed |= rewrite_concat(*n);
    else if (n->op_type() == "Attention") changed |= rewrite_attention(*n);
    else if (n->op_type() == "TensorScatter") changed |= rewrite_tensor_scatter(*n);
  }
  return changed;
}

bool use_kv_cache(ir::Model& m) {
  PassContext ctx;
  return use_kv_cache(m, ctx);
}

}  // namespace onnxc::passes
