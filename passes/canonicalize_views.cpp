// canonicalize, an addend applied through a split view (see canonicalize.h): Swin's shifted-window
// mask is added to the scores viewed with the window count split out of the batch, then viewed back;
// BART adds its padding mask to [b·h, t, s] scores viewed as [b, h, t, s] the same way.
//
//   x[B·W, h, n, n] ─ Reshape[B, W, h, n, n] ─ Add(·, m[1, W, 1, n, n]) ─ Reshape[B·W, h, n, n]
//     ─▶  Add(x, Reshape(Expand(m, [B, W, 1, 1, 1]), [B·W, 1, n, n]))
//
// The same pairs of elements are added (the views only renumber them), so every sum keeps its value;
// the scores then reach the softmax directly and the mask is an ordinary additive mask that
// broadcasts over heads. Only the two split dims of m are materialized.
//
// A view back taken after row-wise ops (BLOOM: [b·h, t, s] scores + ALiBi viewed as [b, h, t, s], the
// mask added, Softmax and Casts, then viewed back for the bmm) is first moved in front of them, the
// same rows in the same order, so the rule above sees Reshape(Add(Reshape(x), m)):
//
//   Reshape(Cast(Softmax(y, -1)), S) ─▶ Cast(Softmax(Reshape(y, S), -1))   (S keeps y's last dim)
//
// And the last two dims swapped through a 3-D view (torch's dynamo exporter writes Kᵀ this way):
//
//   Reshape(Transpose(Reshape(x[.., s, d], [N, s, d]), [0, 2, 1]), [.., d, s])  ─▶  Transpose(x, [.., d↔s])
#include <algorithm>

#include "passes/canonicalize_rules.h"
#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

using namespace pat;

// The dim i where `split` is `whole` with dim i split in two (whole[i] == split[i]·split[i+1]), or -1.
int split_dim(const ir::Shape& whole, const ir::Shape& split) {
  if (split.size() != whole.size() + 1) return -1;
  for (size_t i = 0; i < whole.size(); ++i) {
    bool before = true;
    for (size_t j = 0; j < i && before; ++j) before = whole[j] == split[j];
    bool after = true;
    for (size_t j = i + 1; j < whole.size() && after; ++j) after = whole[j] == split[j + 1];
    if (before && after && whole[i] == split[i] * split[i + 1]) return static_cast<int>(i);
  }
  return -1;
}

// Reshape(Add(Reshape(x, S'), m), S), the Add either way round.
Pattern split_add_pattern() {
  Pattern view = op("Reshape", {any().capture("x"), any()}).one_use().capture("view");
  return op("Reshape", {op("Add", {view, any().capture("m")}).one_use(), any()});
}

// Where the merged mask comes from: x's dim `split` is split in two by the view.
std::string split_add_check(const Match& mt, const FusionContext&, int& split) {
  ir::Value *x = mt["x"], *view = mt["view"], *m = mt["m"];
  const ir::Shape *xs = shape_of(x), *vs = shape_of(view), *ys = shape_of(mt.root()), *ms = shape_of(m);
  if (!xs || !vs || !ys || !ms) return "shapes unknown";
  if (*ys != *xs || ms->size() > vs->size() || m->dtype() != x->dtype()) return "the view back is not x's shape";
  split = split_dim(*xs, *vs);
  return split < 0 ? "the view does not split one dim of x in two" : "";
}

// Add(x, Reshape(Expand(m over the split dims), merged)) in place of the match root (`outer`).
void merge_split_add(const Match& mt, const int& split, RewriteBuilder& b) {
  ir::Graph& g = b.graph();
  ir::Node& outer = b.root();
  ir::Value *x = mt["x"], *view = mt["view"], *m = mt["m"];
  const ir::Shape *vs = shape_of(view), *ms = shape_of(m);
  const int i = split;
  // m right-aligned to the split rank; dims after the split must be known for the merged view.
  const size_t r5 = vs->size(), lead = r5 - ms->size();
  std::vector<int64_t> merged;  // Reshape target: copy (0) before the split, -1 for it, then m's dims
  bool known = true;
  for (size_t j = 0; j < r5; ++j) {
    if (j < static_cast<size_t>(i)) merged.push_back(0);
    else if (j == static_cast<size_t>(i)) merged.push_back(-1);
    else if (j > static_cast<size_t>(i) + 1) {
      const ir::Dim d = j < lead ? ir::Dim(1) : (*ms)[j - lead];
      known = known && d.is_const();
      merged.push_back(known ? d.value() : 0);
    }
  }
  // Expand m over the two split dims only: [1.., a, b, 1..], a and b read from the view's shape.
  ir::Value* view_shape = g.insert_node_before(&outer, "Shape", {view}, {g.unique_name(view->name() + "/shape")})->output(0);
  ir::Node* ab = g.insert_node_before(&outer, "Slice", {view_shape,
      g.add_initializer(g.unique_name("split_from"), i64_tensor({i})),
      g.add_initializer(g.unique_name("split_to"), i64_tensor({i + 2}))}, {g.unique_name(m->name() + "/split_dims")});
  std::vector<ir::Value*> parts;
  if (i > 0) parts.push_back(g.add_initializer(g.unique_name("ones"), i64_tensor(std::vector<int64_t>(i, 1))));
  parts.push_back(ab->output(0));
  if (r5 > static_cast<size_t>(i) + 2)
    parts.push_back(g.add_initializer(g.unique_name("ones"), i64_tensor(std::vector<int64_t>(r5 - i - 2, 1))));
  ir::Node* target = g.insert_node_before(&outer, "Concat", parts, {g.unique_name(m->name() + "/expand_to")});
  target->set_attr_int("axis", 0);
  ir::Value* wide = g.insert_node_before(&outer, "Expand", {m, target->output(0)}, {g.unique_name(m->name() + "/windows")})->output(0);
  // Dims after the split known only at run time (BART's [b·h, t, s] scores viewed as [b, h, t, s])
  // are read from the expanded mask, whose dims there are m's own.
  ir::Value* merged_shape = nullptr;
  if (known) {
    merged_shape = g.add_initializer(g.unique_name("merged_shape"), i64_tensor(merged));
  } else {
    merged.resize(static_cast<size_t>(i) + 1);
    ir::Value* wide_shape = g.insert_node_before(&outer, "Shape", {wide}, {g.unique_name(wide->name() + "/shape")})->output(0);
    ir::Value* tail = g.insert_node_before(&outer, "Slice", {wide_shape,
        g.add_initializer(g.unique_name("tail_from"), i64_tensor({i + 2})),
        g.add_initializer(g.unique_name("tail_to"), i64_tensor({static_cast<int64_t>(r5)}))},
        {g.unique_name(m->name() + "/tail_dims")})->output(0);
    ir::Node* cat = g.insert_node_before(&outer, "Concat", {g.add_initializer(g.unique_name("head"), i64_tensor(merged)), tail},
                                         {g.unique_name(m->name() + "/merged_shape")});
    cat->set_attr_int("axis", 0);
    merged_shape = cat->output(0);
  }
  ir::Value* mask = g.insert_node_before(&outer, "Reshape", {wide, merged_shape}, {g.unique_name(m->name() + "/merged")})->output(0);
  respell_node(b.root(), "Add", {x, mask});
}

// Reshape(Transpose(Reshape(x, [N, s, d]), [0, 2, 1]), [.., d, s]).
std::string swap_check(const Match& m, const FusionContext&, std::vector<int64_t>& perm) {
  const ir::Shape *xs = shape_of(m["x"]), *fs = shape_of(m["flat"]), *ys = shape_of(m.root());
  if (!xs || !fs || !ys || xs->size() < 3 || fs->size() != 3 || ys->size() != xs->size()) return "shapes unknown or not 3-D";
  const size_t r = xs->size();
  if (!((*fs)[1] == (*xs)[r - 2]) || !((*fs)[2] == (*xs)[r - 1])) return "the view does not keep [s, d]";
  for (size_t i = 0; i + 2 < r; ++i)
    if (!((*ys)[i] == (*xs)[i])) return "the view back changes a leading dim";
  if (!((*ys)[r - 2] == (*xs)[r - 1]) || !((*ys)[r - 1] == (*xs)[r - 2])) return "the view back is not [.., d, s]";
  perm.resize(r);
  for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[r - 2], perm[r - 1]);
  return "";
}

// The row-wise op `f` (Cast, or Softmax over the last axis) whose output only `view` reads, when
// `view` keeps the last dim of f's input; else null.
const ir::Node* row_op_under(const ir::Node& view) {
  const ir::Value* w = view.input(0);
  const ir::Node* f = w ? w->producer() : nullptr;
  if (view.op_type() != "Reshape" || !view.domain().empty() || !f || !f->domain().empty() || f->num_outputs() != 1 ||
      !only_use_is(*w, view))
    return nullptr;
  const ir::Shape *ys = shape_of(f->input(0)), *vs = shape_of(view.output(0));
  if (!ys || !vs || ys->empty() || vs->empty() || !(ys->back() == vs->back())) return nullptr;
  const int64_t axis = f->attr_int("axis", -1);
  bool rows = f->op_type() == "Softmax" && (axis == -1 || axis == static_cast<int64_t>(ys->size()) - 1);
  return f->op_type() == "Cast" || rows ? f : nullptr;
}

// Only when the chain of row-wise ops (Cast*, [Softmax, Cast*]) under the view starts at an Add of
// a split view of a value shaped as the view's output.
std::string rows_check(const Match& m, const FusionContext&) {
  const ir::Node& outer = *m.root()->producer();
  const ir::Node* f = row_op_under(outer);
  if (!f) return "not a view of a row-wise op";
  const ir::Value* a = f->input(0);
  auto step = [&](const char* op) {
    bool ok = produced_by_op(a, op) && only_use_is(*a, *f);
    if (ok) f = a->producer(), a = f->input(0);
    return ok;
  };
  while (step("Cast")) {
  }
  if (step("Softmax"))
    while (step("Cast")) {
    }
  if (!produced_by_op(a, "Add")) return "the rows are not of a sum";
  const ir::Shape* os = shape_of(m.root());
  for (const ir::Value* in : a->producer()->inputs())
    if (produced_by_op(in, "Reshape") && os && shape_of(in->producer()->input(0)) && *shape_of(in->producer()->input(0)) == *os)
      return "";
  return "the sum is not of a view this one undoes";
}

// Moves the view in front of the row-wise ops, then merges the split Add it now undoes.
void move_view(const Match&, RewriteBuilder& b) {
  ir::Graph& g = b.graph();
  ir::Node* view = &b.root();
  while (const ir::Node* op = row_op_under(*view)) {
    ir::Value* y = op->input(0);
    ir::Node* inner = g.insert_node_before(view, "Reshape", {y, view->input(1)}, {g.unique_name(y->name() + "/view")});
    inner->output(0)->set_type(ir::Type::tensor(y->dtype(), *shape_of(view->output(0))));
    for (const ir::Attribute& at : view->attributes()) inner->set_attr(at);
    // The op again on the view's output, in the view's place.
    ir::Node* moved = respell_node(*view, op->op_type(), {inner->output(0)});
    for (const ir::Attribute& at : op->attributes()) moved->set_attr(at);
    if (moved->op_type() == "Softmax") moved->set_attr_int("axis", -1);
    // The old view and op go at once, so the next step sees the inner view as y's only reader.
    b.remove(view);
    b.remove(const_cast<ir::Node*>(op));
    view = inner;
  }
  // The view now reads the sum: Reshape(Add(Reshape(x), m)) as merge_split_add rewrites it.
  static const Pattern merge = split_add_pattern();
  int split = -1;
  const FusionContext& c = b.context();
  MatchResult r = match(merge, view->output(0), [&](const Match& m) { return split_add_check(m, c, split); });
  if (!r) return;
  RewriteBuilder here(g, *view, c);
  merge_split_add(*r, split, here);
  for (ir::Node* n : r->nodes())  // the moved view first, then the sum and the split view it read
    if (std::none_of(n->outputs().begin(), n->outputs().end(), [](ir::Value* o) { return o && is_used(*o); }))
      b.remove(n);
}

}  // namespace

std::vector<FusionRule> canonical_view_rules() {
  Pattern flat = op("Reshape", {any().capture("x"), any()}).one_use().capture("flat");
  Pattern swapped = op("Reshape", {op("Transpose", {flat}).attr_ints("perm", {0, 2, 1}).one_use(), any()});
  return {
      planned_rule<int>("merge_split_add", "canonical", split_add_pattern(), split_add_check, merge_split_add),
      planned_rule<std::vector<int64_t>>("swap_through_flat_view", "canonical", swapped, swap_check,
          [](const Match& m, const std::vector<int64_t>& perm, RewriteBuilder& b) {
            respell_node(b.root(), "Transpose", {m["x"]})->set_attr_ints("perm", perm);
          }),
      FusionRule{"view_before_rows", "canonical", op("Reshape"), rows_check, move_view},
  };
}

}  // namespace onnxc::passes
