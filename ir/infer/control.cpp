// Control flow: If (outputs from the branch types; dims that differ become unknown), Loop
// (loop-carried types generalized until they stop changing; scan outputs stacked on a trip-count
// axis), Scan (opset 8 with a batch axis, and 9+), SequenceMap.
#include "ir/infer/context.h"

namespace onnxc::ir {
namespace {

Graph* graph_attr(const InferContext& ctx, const std::string& name) {
  const Attribute* a = ctx.node().attr(name);
  infer_check(ctx, a && a->kind == Attribute::Kind::Graph && a->g) << "missing subgraph attribute '" << name << "'";
  return a->g.get();
}

// A tensor type with `d` inserted at `axis` (a stacked scan output).
Type stacked(const Type& t, const Dim& d, int64_t axis = 0) {
  if (!t.is_tensor() || !t.shape) return t.is_tensor() ? Type::tensor(t.dtype) : t;
  Type r = t;
  if (axis < 0) axis += static_cast<int64_t>(t.shape->size()) + 1;
  r.shape->insert(r.shape->begin() + std::clamp<int64_t>(axis, 0, static_cast<int64_t>(t.shape->size())), d);
  return r;
}

// A tensor type without the dims at `axes` (sorted): a scan element.
Type unstacked(const Type& t, std::vector<int64_t> axes) {
  if (!t.has_rank()) return t;
  Type r = t;
  std::sort(axes.rbegin(), axes.rend());
  for (int64_t a : axes)
    if (a >= 0 && a < static_cast<int64_t>(r.shape->size())) r.shape->erase(r.shape->begin() + a);
  return r;
}

void infer_if(InferContext& ctx) {
  auto then_out = ctx.infer_subgraph(*graph_attr(ctx, "then_branch"), {});
  auto else_out = ctx.infer_subgraph(*graph_attr(ctx, "else_branch"), {});
  infer_check(ctx, then_out.size() == else_out.size() && then_out.size() >= ctx.num_outputs())
      << "branches have " << then_out.size() << " and " << else_out.size() << " outputs for " << ctx.num_outputs();
  auto cond = ctx.in_int(0);
  for (size_t i = 0; i < ctx.num_outputs(); ++i)
    ctx.set_output(i, cond ? (*cond ? then_out[i] : else_out[i]) : join_types(then_out[i], else_out[i]));
}

// Types of a graph's inputs and of every value its nodes produce (nested graphs included), to
// undo a trial inference.
void snapshot(Graph& g, std::vector<std::pair<Value*, Type>>& out) {
  for (Value* v : g.inputs()) out.emplace_back(v, v->type());
  for (Node* n : g.nodes()) {
    for (Value* v : n->outputs())
      if (v) out.emplace_back(v, v->type());
    for (Graph* sg : n->subgraphs()) snapshot(*sg, out);
  }
}

// True when the body's condition output is its condition input (or a constant true), so a loop
// with a constant trip count M runs exactly M times.
bool runs_full_trip(const InferContext& ctx, const Graph& body) {
  auto init = ctx.has_input(1) ? ctx.in_int(1) : std::optional<int64_t>(1);
  if (!init || *init == 0 || body.outputs().empty() || body.inputs().size() < 2) return false;
  const Value* c = body.outputs()[0];
  while (c->producer() && c->producer()->op_type() == "Identity") c = c->producer()->input(0);
  if (c == body.inputs()[1]) return true;
  return c->is_constant() && c->constant().numel() == 1 && c->constant().get_i64(0) != 0;
}

void infer_loop(InferContext& ctx) {
  Graph& body = *graph_attr(ctx, "body");
  size_t n_carried = ctx.num_inputs() >= 2 ? ctx.num_inputs() - 2 : 0;
  std::vector<Type> in{Type::tensor(DType::Int64, Shape{}), Type::tensor(DType::Bool, Shape{})};
  for (size_t i = 0; i < n_carried; ++i) in.push_back(ctx.in_type(i + 2));
  std::vector<std::pair<Value*, Type>> saved;
  snapshot(body, saved);
  std::vector<Type> out = ctx.infer_subgraph(body, in);
  infer_check(ctx, out.size() >= 1 + n_carried)
      << "body has " << out.size() << " outputs for " << n_carried << " loop-carried values";
  // A carried value whose type changes across iterations: retry with the joined type.
  bool changed = false;
  for (size_t i = 0; i < n_carried; ++i) {
    Type j = join_types(in[i + 2], out[i + 1]);
    changed |= !(j == in[i + 2]);
    in[i + 2] = j;
  }
  if (changed) {
    for (auto& [v, t] : saved) v->set_type(t);
    out = ctx.infer_subgraph(body, in);
  }
  // A value whose kind changes (an optional that becomes a sequence) leaves with the body's type.
  for (size_t i = 0; i < n_carried; ++i) {
    Type j = join_types(in[i + 2], out[i + 1]);
    ctx.set_output(i, j.kind == Type::Kind::Unknown ? out[i + 1] : j);
  }
  auto trips = ctx.in_int(0);
  for (size_t k = n_carried; k < ctx.num_outputs() && k + 1 < out.size(); ++k) {
    Dim n = trips && runs_full_trip(ctx, body) ? Dim(*trips) : ctx.fresh_dim(k, 0, "loop");
    ctx.set_output(k, stacked(out[k + 1], n));
  }
}

void scan_outputs(InferContext& ctx, const std::vector<Type>& out, size_t n_state, const Dim& seq,
                  std::optional<Dim> batch) {
  auto out_axes = ctx.node().attr_ints("scan_output_axes");
  for (size_t i = 0; i < ctx.num_outputs() && i < out.size(); ++i) {
    if (i < n_state) {
      ctx.set_output(i, batch ? stacked(out[i], *batch) : out[i]);
      continue;
    }
    size_t k = i - n_state;
    Type t = stacked(out[i], seq, batch ? 0 : (k < out_axes.size() ? out_axes[k] : 0));
    ctx.set_output(i, batch ? stacked(t, *batch) : t);
  }
}

// Opset 8 has an optional sequence_lens input first, and every input a batch axis before the scan
// axis (1); from opset 9 the scan axes are attributes and there is no batch axis.
void scan(InferContext& ctx, bool v8) {
  Graph& body = *graph_attr(ctx, "body");
  size_t m = static_cast<size_t>(ctx.node().attr_int("num_scan_inputs", 0));
  size_t first = v8 ? 1 : 0;
  infer_check(ctx, ctx.num_inputs() >= first + m) << "has fewer inputs than num_scan_inputs";
  size_t n_state = ctx.num_inputs() - first - m;
  auto in_axes = ctx.node().attr_ints("scan_input_axes");
  std::vector<Type> in;
  for (size_t i = 0; i < n_state; ++i)
    in.push_back(v8 ? unstacked(ctx.in_type(first + i), {0}) : ctx.in_type(first + i));
  Dim seq = Dim::unknown();
  for (size_t k = 0; k < m; ++k) {
    size_t idx = first + n_state + k;
    int64_t r = ctx.in_rank(idx);
    int64_t axis = v8 ? 1 : (k < in_axes.size() ? in_axes[k] : 0);
    if (r >= 0) axis = norm_axis(ctx, axis, r);
    if (k == 0 && r > axis) seq = (*ctx.in_shape(idx))[axis];
    in.push_back(unstacked(ctx.in_type(idx), v8 ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{axis}));
  }
  std::optional<Dim> batch;
  if (v8) batch = ctx.in_rank(first + n_state) > 0 ? (*ctx.in_shape(first + n_state))[0] : Dim::unknown();
  scan_outputs(ctx, ctx.infer_subgraph(body, in), n_state, seq, batch);
}

void infer_scan_v8(InferContext& ctx) { scan(ctx, true); }
void infer_scan(InferContext& ctx) { scan(ctx, false); }

void infer_sequence_map(InferContext& ctx) {
  Graph& body = *graph_attr(ctx, "body");
  std::vector<Type> in;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Type& t = ctx.in_type(i);
    in.push_back(t.kind == Type::Kind::Sequence && t.elem ? *t.elem : t);
  }
  auto out = ctx.infer_subgraph(body, in);
  for (size_t i = 0; i < ctx.num_outputs() && i < out.size(); ++i)
    ctx.set_output(i, Type::container(Type::Kind::Sequence, out[i]));
}

}  // namespace

void add_control_ops(OpTable& t) {
  t.add_all({"If"}, kControlFlow, infer_if);
  t.add_all({"Loop"}, kControlFlow, infer_loop);
  t.add({"", "Scan", 8, 8, kControlFlow, infer_scan_v8});
  t.add({"", "Scan", 9, OpInfo::kLatest, kControlFlow, infer_scan});
  t.add_all({"SequenceMap"}, kControlFlow | kSequence, infer_sequence_map);
}

}  // namespace onnxc::ir
