// stack_kv_cache (see stacked_kv_cache.h): stacked past/present caches as per-pair appends or as one
// chain of in-place appends into the stacked buffer.
//
//   P [2, b, h, p, d]  (K and V of one layer)          P [L, b, h, p, d]  (all layers)
//   Concat0(Unsqueeze(P[0] ++ k), Unsqueeze(P[1] ++ v)) Concat0(Unsqueeze(P[0] ++ n_0), ..., Unsqueeze(P[L-1] ++ n_{L-1}))
//     ==> present = P ++ stack(k, v) along p             ==> S_0 = CacheAppend(P, n_0; layer 0, grow)
//         attention reads present[0], present[1]             S_j = CacheAppend(S_{j-1}, n_j; layer j)
//                                                             layer j reads S_j[j]; present = S_{L-1}
#include "passes/stacked_kv_cache.h"

#include <algorithm>
#include <optional>
#include <set>

#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

std::optional<std::vector<int64_t>> const_ints(const ir::Value* v) {
  if (!v || !v->is_constant()) return std::nullopt;
  const ir::Tensor& t = v->constant();
  if (t.dtype() != ir::DType::Int64 && t.dtype() != ir::DType::Int32) return std::nullopt;
  std::vector<int64_t> r;
  for (int64_t i = 0; i < t.numel(); ++i) r.push_back(t.get_i64(i));
  return r;
}

int64_t rank_of(const ir::Value* v) {
  const ir::Shape* s = shape_of(v);
  return s ? static_cast<int64_t>(s->size()) : -1;
}

std::optional<int64_t> static_dim0(const ir::Value* v) {
  const ir::Shape* s = shape_of(v);
  if (!s || s->empty() || !(*s)[0].is_const()) return std::nullopt;
  return (*s)[0].value();
}

// The axes of an Unsqueeze or Squeeze (attribute before opset 13, constant input since), normalized
// against `rank`.
std::optional<std::vector<int64_t>> axes_of(const ir::Node& n, int64_t rank) {
  std::vector<int64_t> axes;
  if (n.has_attr("axes")) axes = n.attr_ints("axes");
  else if (auto c = const_ints(n.input(1))) axes = *c;
  else return std::nullopt;
  for (int64_t& a : axes) a = a < 0 ? a + rank : a;
  return axes;
}

bool axes_are_zero(const ir::Node& n, int64_t rank) {
  auto axes = axes_of(n, rank);
  return axes && *axes == std::vector<int64_t>{0};
}

int64_t concat_axis(const ir::Node& n) {
  int64_t axis = n.attr_int("axis", 0), r = rank_of(n.output(0));
  return axis < 0 ? axis + r : axis;
}

// Element `index` of `base` along axis 0, rank reduced: the one form of Gather(base, i), Squeeze(Slice(
// base, i, i + 1, axis 0), 0) and Squeeze(Split(base, axis 0, ones)[i], 0).
struct Element {
  ir::Value* base = nullptr;
  int64_t index = -1;
};

std::optional<Element> element_of(const ir::Value* v) {
  if (produced_by_op(v, "Gather")) {
    const ir::Node& g = *v->producer();
    auto idx = const_ints(g.input(1));
    auto n0 = static_dim0(g.input(0));
    int64_t axis = g.attr_int("axis", 0);
    if (!idx || idx->size() != 1 || g.input(1)->constant().rank() != 0 || !n0 || (axis != 0 && axis != -rank_of(g.input(0))))
      return std::nullopt;
    int64_t i = (*idx)[0] < 0 ? (*idx)[0] + *n0 : (*idx)[0];
    if (i < 0 || i >= *n0) return std::nullopt;
    return Element{g.input(0), i};
  }
  if (!produced_by_op(v, "Squeeze")) return std::nullopt;
  const ir::Node& sq = *v->producer();
  const ir::Value* one = sq.input(0);
  if (!axes_are_zero(sq, rank_of(one))) return std::nullopt;
  if (produced_by_op(one, "Split")) {
    const ir::Node& sp = *one->producer();
    if (sp.attr_int("axis", 0) != 0 && sp.attr_int("axis", 0) != -rank_of(sp.input(0))) return std::nullopt;
    for (const ir::Value* o : sp.outputs())
      if (!o || static_dim0(o) != std::optional<int64_t>(1)) return std::nullopt;
    return Element{sp.input(0), one->producer_output()};
  }
  if (produced_by_op(one, "Slice")) {
    const ir::Node& sl = *one->producer();
    auto starts = const_ints(sl.input(1)), ends = const_ints(sl.input(2));
    auto axes = sl.input(3) ? const_ints(sl.input(3)) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{0});
    auto steps = sl.input(4) ? const_ints(sl.input(4)) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{1});
    auto n0 = static_dim0(sl.input(0));
    if (!starts || !ends || !axes || !steps || !n0 || starts->size() != 1 || ends->size() != 1 || axes->size() != 1 ||
        steps->size() != 1 || (*steps)[0] != 1 || ((*axes)[0] != 0 && (*axes)[0] != -rank_of(sl.input(0))))
      return std::nullopt;
    int64_t i = (*starts)[0] < 0 ? (*starts)[0] + *n0 : (*starts)[0];
    int64_t e = (*ends)[0] < 0 ? (*ends)[0] + *n0 : std::min((*ends)[0], *n0);
    if (i < 0 || i >= *n0 || e != i + 1) return std::nullopt;
    return Element{sl.input(0), i};
  }
  return std::nullopt;
}

// present = Concat0(Unsqueeze(Concat(P[j], n_j, axis a), 0) for j in 0..L-1).
struct StackedAppend {
  ir::Node* stack = nullptr;
  ir::Value* past = nullptr;
  int64_t axis = 0;                    // of the per-element Concats
  std::vector<ir::Node*> unsqueezes;   // Unsqueeze(X_j)
  std::vector<ir::Node*> appends;      // X_j = Concat(P[j], n_j)
};

std::optional<StackedAppend> match_stacked(ir::Node& c, std::vector<std::string>* why) {
  if (c.num_inputs() < 1 || concat_axis(c) != 0) return std::nullopt;
  StackedAppend s;
  s.stack = &c;
  for (size_t j = 0; j < c.num_inputs(); ++j) {
    ir::Value* u = c.input(j);
    if (!produced_by_op(u, "Unsqueeze") || !only_use_is(*u, c) || !axes_are_zero(*u->producer(), rank_of(u)))
      return std::nullopt;
    ir::Value* x = u->producer()->input(0);
    if (!produced_by_op(x, "Concat") || x->producer()->num_inputs() != 2) return std::nullopt;
    auto e = element_of(x->producer()->input(0));
    if (!e) return std::nullopt;
    int64_t a = concat_axis(*x->producer());
    if (j == 0) s.past = e->base, s.axis = a;
    if (e->base != s.past || a != s.axis || e->index != static_cast<int64_t>(j)) return std::nullopt;
    s.unsqueezes.push_back(u->producer());
    s.appends.push_back(x->producer());
  }
  if (static_dim0(s.past) != std::optional<int64_t>(static_cast<int64_t>(c.num_inputs()))) {
    if (why) why->push_back(c.describe() + ": stacks " + std::to_string(c.num_inputs()) + " appends to '" + s.past->name() +
                            "', whose first dim is not that number: left as it is");
    return std::nullopt;
  }
  return s;
}

// Whether any new rows n_k are computed from some per-element append X_j (layer k reads layer j).
bool appends_feed_new_rows(const StackedAppend& s) {
  std::set<const ir::Node*> appends(s.appends.begin(), s.appends.end()), seen;
  std::vector<const ir::Value*> work;
  for (const ir::Node* x : s.appends) work.push_back(x->input(1));
  while (!work.empty()) {
    const ir::Value* v = work.back();
    work.pop_back();
    const ir::Node* p = v ? v->producer() : nullptr;
    if (!p || !seen.insert(p).second) continue;
    if (appends.count(p)) return true;
    for (const ir::Value* in : p->inputs()) work.push_back(in);
  }
  return false;
}

ir::Value* scalar_index(ir::Graph& g, int64_t j) { return g.add_initializer(g.unique_name("kv_layer"), i64_scalar(j)); }

// Replaces the uses of X_j other than its Unsqueeze by Gather(from, j); removes the stack's nodes.
void read_elements(ir::Graph& g, const StackedAppend& s, const std::vector<ir::Value*>& from) {
  for (size_t j = 0; j < s.appends.size(); ++j) {
    ir::Value* x = s.appends[j]->output(0);
    ir::Node* gather = g.insert_node_before(s.appends[j], "Gather", {from[j], scalar_index(g, static_cast<int64_t>(j))},
                                            {g.unique_name(x->name() + "/layer")});
    gather->output(0)->set_type(x->type());
    std::vector<ir::Use> uses = x->uses();
    for (const ir::Use& u : uses)
      if (u.node != s.unsqueezes[j]) u.node->set_input(static_cast<size_t>(u.input_index), gather->output(0));
    if (x->is_graph_output())
      for (size_t o = 0; o < g.outputs().size(); ++o)
        if (g.outputs()[o] == x) g.set_output(o, gather->output(0));
  }
  g.remove_node(s.stack);
  for (size_t j = 0; j < s.appends.size(); ++j) {
    g.remove_node(s.unsqueezes[j]);
    g.remove_node(s.appends[j]);
  }
}

// present = Concat(P, Concat0(Unsqueeze(n_j, 0)), axis a + 1).
void fold(ir::Graph& g, const StackedAppend& s) {
  ir::Node& c = *s.stack;
  std::vector<ir::Value*> rows;
  for (ir::Node* x : s.appends) {
    ir::Node* u = g.insert_node_before(&c, "Unsqueeze", {x->input(1), g.add_initializer(g.unique_name("kv_axes"), i64_tensor({0}))},
                                       {g.unique_name(x->input(1)->name() + "/stacked")});
    rows.push_back(u->output(0));
  }
  ir::Node* n = g.insert_node_before(&c, "Concat", rows, {g.unique_name(c.output(0)->name() + "/new_rows")});
  n->set_attr_int("axis", 0);
  ir::Node* present = g.insert_node_before(&c, "Concat", {s.past, n->output(0)}, {c.output(0)->name()});
  present->set_attr_int("axis", s.axis + 1);
  present->output(0)->set_type(c.output(0)->type());
  replace_all_uses_everywhere(c.output(0), present->output(0));
  read_elements(g, s, std::vector<ir::Value*>(s.appends.size(), present->output(0)));
}

// The chain of in-place appends, in the order the graph computes the layers.
void chain(ir::Graph& g, const StackedAppend& s) {
  ir::Node& c = *s.stack;
  std::vector<ir::Node*> order = g.nodes();
  auto pos = [&](const ir::Node* n) { return std::find(order.begin(), order.end(), n) - order.begin(); };
  std::vector<size_t> js(s.appends.size());
  for (size_t j = 0; j < js.size(); ++j) js[j] = j;
  std::sort(js.begin(), js.end(), [&](size_t a, size_t b) { return pos(s.appends[a]) < pos(s.appends[b]); });
  std::vector<ir::Value*> link(js.size());
  ir::Value* prev = s.past;
  for (size_t k = 0; k < js.size(); ++k) {
    size_t j = js[k];
    bool last = k + 1 == js.size();
    ir::Node* a = g.insert_node_before(s.appends[j], "CacheAppend", {prev, s.appends[j]->input(1)},
                                       {last ? c.output(0)->name() : g.unique_name(c.output(0)->name() + "/through_layer")}, "onnxc");
    a->set_attr_int("axis", s.axis + 1);
    a->set_attr_int("layer", static_cast<int64_t>(j));
    a->set_attr_int("grow", k == 0);
    a->output(0)->set_type(c.output(0)->type());
    link[j] = prev = a->output(0);
  }
  replace_all_uses_everywhere(c.output(0), prev);
  read_elements(g, s, link);
}

bool is_pair(const ir::Value* past, const ir::Value* present) {
  return past->is_graph_input() && !past->is_constant() && present->is_graph_output() && past->dtype() == present->dtype();
}

}  // namespace

bool stack_kv_cache(ir::Model& m, std::vector<std::string>* why, std::vector<std::string>* done) {
  ir::Graph& g = *m.graph;
  bool changed = false, again = true;
  std::set<std::string> reported;  // by output name: nodes come and go
  while (again) {  // from the top after each rewrite: inner stacks fold before the outer stack reads them
    again = false;
    for (ir::Node* n : g.nodes()) {
      if (n->op_type() != "Concat" || !n->domain().empty() || !n->output(0) || reported.count(n->output(0)->name())) continue;
      auto s = match_stacked(*n, reported.insert(n->output(0)->name()).second ? why : nullptr);
      if (!s) continue;
      std::string present = n->output(0)->name();
      if (!appends_feed_new_rows(*s)) {
        fold(g, *s);
        if (done) done->push_back(present + ": one append of " + std::to_string(s->appends.size()) + " stacked parts");
      } else if (is_pair(s->past, n->output(0)) && rank_of(s->past) <= 6) {
        chain(g, *s);
        if (done) done->push_back(present + ": " + std::to_string(s->appends.size()) + " layers appended in place");
      } else {
        if (why)
          why->push_back(n->describe() + ": a stacked cache '" + s->past->name() + "' whose layers read each other is kept " +
                         "in place only between a graph input and a graph output: copied every step");
        continue;
      }
      g.topological_sort();
      changed = again = true;
      break;
    }
  }
  return changed;
}

}  // namespace onnxc::passes
