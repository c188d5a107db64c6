// If lowered to BRANCH / JUMP ranges; Loop and Scan to LOOP .. NEXT ranges (runtime/include/onnxc/
// model_abi.h): the runtime counts iterations and tests the trip count and condition; body kernels read
// the carried values as tensors of their own, which copies refresh at the end of each iteration; scan
// inputs are sliced and scan outputs gathered by host steps, since a condition may end the loop at any
// count.
#include "codegen/partition_control.h"

#include <limits>
#include <set>

#include "codegen/host_steps.h"
#include "ir/error.h"
#include "onnxc/model_abi.h"

namespace onnxc::codegen {
namespace {

const ir::Graph& body_of(const ir::Node& n) {
  const ir::Attribute* a = n.attr("body");
  user_check(a && a->kind == ir::Attribute::Kind::Graph && a->g) << n.describe() << ": no subgraph attribute 'body'";
  return *a->g;
}

std::string type_str(const ir::Value* v) { return v ? v->type().str() : "absent"; }

bool known_shape(const ir::Value* v) {
  if (!v || !v->type().is_tensor() || !v->shape()) return false;
  for (const auto& d : *v->shape())
    if (d.has_unknown()) return false;
  return true;
}

// A value the loop carries keeps one dtype and shape: entering, inside and leaving the body.
void check_carried(const ir::Node& n, const std::vector<const ir::Value*>& forms) {
  bool same = true;
  for (const ir::Value* v : forms)
    same = same && known_shape(v) && v->dtype() == forms[0]->dtype() && *v->shape() == *forms[0]->shape();
  if (same) return;
  std::string types;
  for (const ir::Value* v : forms) types += (types.empty() ? "" : ", ") + (v ? "'" + v->name() + "' " : "") + type_str(v);
  user_error << n.describe() << ": a loop-carried value changes type or shape across iterations (" << types
             << "); carried values whose shape changes (a value that grows) are not supported";
}

// A step of node n that runs no Halide kernel (a control or host step), named for what it does.
Step runtime_step(const ir::Node& n, const std::string& what, StepKind kind) {
  Step k;
  k.name = n.describe() + " (" + what + ")";
  k.kind = std::move(kind);
  return k;
}

// A control step of node n (enum onnxc_step_kind), its target set later.
Step control_step(const ir::Node& n, int kind, const std::string& what, std::vector<int> inputs = {}) {
  Step k = runtime_step(n, what, ControlStep{kind, -1, std::nullopt});
  k.inputs = std::move(inputs);
  return k;
}

// Emits one loop's steps into the scope's kernel list.
class LoopEmitter {
 public:
  LoopEmitter(ControlScope& s, const ir::Node& n) : s_(s), p_(s.plan()), n_(n) {}

  int push(Step k) {
    p_.steps.push_back(std::move(k));
    return static_cast<int>(p_.steps.size()) - 1;
  }

  int new_tensor(const std::string& name, ir::DType dtype, ir::Shape shape, std::optional<ir::Tensor> data = {}) {
    PlanTensor t;
    t.name = n_.name() + "/" + name + std::to_string(p_.tensors.size());
    t.dtype = dtype;
    t.shape = std::move(shape);
    if (data) {
      t.kind = TensorKind::Weight;
      t.data = std::move(data);
    }
    p_.tensors.push_back(std::move(t));
    return static_cast<int>(p_.tensors.size()) - 1;
  }

  int constant_true() {
    return new_tensor("true", ir::DType::Bool, {}, ir::Tensor::from_vector<uint8_t>(ir::DType::Bool, {}, {1}));
  }

  int host(int op, const std::string& what, std::vector<int> in, std::vector<int> out, std::vector<int64_t> scalars,
           std::vector<std::pair<int, int>> binds = {}) {
    Step k = runtime_step(n_, what, HostStep{op, std::move(scalars), std::move(binds), {}});
    k.inputs = std::move(in);
    k.outputs = std::move(out);
    return push(std::move(k));
  }

  // LOOP {iter, trip, cond}; trip < 0: the trip count is the expression trip_dim.
  int head(int iter, int trip, std::optional<ir::Dim> trip_dim, int cond) {
    Step k = control_step(n_, ONNXC_STEP_LOOP, "loop head", {iter, trip, cond});
    k.control()->trip = std::move(trip_dim);
    return push(std::move(k));
  }

  void tail(int head) {
    Step k = control_step(n_, ONNXC_STEP_NEXT, "end of body");
    k.control()->target = head;
    p_.steps[head].control()->target = push(std::move(k)) + 1;
  }

  void copy(int src, int dst) { push(s_.copy_kernel(src, dst)); }

  int root(int t) const { return p_.tensors[t].kind == TensorKind::View ? p_.tensors[t].view_of : t; }

  // dst[i] = src[i] for every i, as if at once: a result that is another target's bytes (two carried
  // values that swap) goes through a temporary, since that target may be rewritten first.
  void carry(const std::vector<int>& src, const std::vector<int>& dst) {
    std::vector<int> tmp(src.size(), -1);
    for (size_t i = 0; i < src.size(); ++i)
      for (size_t j = 0; j < dst.size(); ++j)
        if (j != i && root(src[i]) == dst[j] && tmp[i] < 0) {
          const PlanTensor& d = p_.tensors[dst[i]];
          tmp[i] = new_tensor("next", d.dtype, d.shape);
          copy(src[i], tmp[i]);
        }
    for (size_t i = 0; i < src.size(); ++i)
      if (tmp[i] < 0 && root(src[i]) != dst[i]) copy(src[i], dst[i]);
    for (size_t i = 0; i < src.size(); ++i)
      if (tmp[i] >= 0) copy(tmp[i], dst[i]);
  }

  // ScanAppend of tensor x, each iteration; returns its step for the ScanCollect after the loop.
  int append(int x) { return host(ONNXC_HOST_SCAN_APPEND, "gather a scan output", {x}, {}, {}); }

  // ScanCollect into y (a value's tensor, or a new one) along `axis`; binds the item count there.
  void collect(int append_step, int y, int64_t axis, bool reverse) {
    const ir::Dim& count = p_.tensors[y].shape.at(static_cast<size_t>(axis));
    std::set<std::string> syms;
    count.collect_symbols(syms);
    bool known_before = true;
    for (const auto& sym : syms) known_before = known_before && s_.input_symbol(sym);
    user_check(!s_.nested() || known_before)
        << n_.describe() << ": scan output '" << p_.tensors[y].name << "' has a length known only when the loop ends ("
        << count.str() << "); such a loop inside an If branch or another loop is not supported";
    host(ONNXC_HOST_SCAN_COLLECT, "stack a scan output", {}, {y}, {append_step, axis, reverse ? 1 : 0}, {{0, static_cast<int>(axis)}});
  }

  ControlScope& s_;
  Partition& p_;
  const ir::Node& n_;
};

bool live(const ir::Value* v) { return v && (!v->uses().empty() || v->is_graph_output()); }

int64_t norm_axis(const ir::Node& n, int64_t axis, size_t rank, const char* what) {
  int64_t r = static_cast<int64_t>(rank);
  user_check(axis >= -r && axis < r) << n.describe() << ": " << what << " " << axis << " is out of range for rank " << r;
  return axis < 0 ? axis + r : axis;
}

// One branch's kernels, then a copy of each of its results into the If's output: both ranges write
// the same tensors, so what follows the If reads them whichever range ran. The copies cost a pass over
// the outputs; planning a branch's result as the If's output tensor would save it.
void add_branch(ControlScope& s, const ir::Node& n, const std::string& attr) {
  const ir::Attribute* a = n.attr(attr);
  user_check(a && a->kind == ir::Attribute::Kind::Graph && a->g) << n.describe() << ": no subgraph attribute '" << attr << "'";
  const ir::Graph& g = *a->g;
  user_check(g.inputs().empty() && g.outputs().size() >= n.num_outputs())
      << n.describe() << ": " << attr << " has " << g.inputs().size() << " inputs and " << g.outputs().size()
      << " outputs; an If branch takes no inputs and gives one output per If output";
  s.add_body(g);
  for (size_t i = 0; i < n.num_outputs(); ++i) {
    const ir::Value* y = n.output(i);
    if (!live(y)) continue;
    const ir::Value* r = g.outputs()[i];
    // A sequence or optional result: the same kind of value (an optional's contents are checked at run time).
    bool values = value_kind_of(y->type()) > 0 && element_dtype(r->type()) == element_dtype(y->type()) &&
                  (value_kind_of(r->type()) == value_kind_of(y->type()) || value_kind_of(y->type()) == ONNXC_VALUE_OPTIONAL_SEQUENCE);
    user_check(values || (r->dtype() == y->dtype() && r->shape() && y->shape() && *r->shape() == *y->shape()))
        << n.describe() << ": output '" << y->name() << "' is " << y->type().str() << " but " << attr << " gives "
        << r->type().str() << "; an If whose branches give outputs of different shapes is not supported yet";
    s.plan().steps.push_back(s.copy_kernel(s.tensor_of(r), s.tensor_of(y)));
  }
}

}  // namespace

void build_if(ControlScope& s, const ir::Node& n) {
  user_check(n.input(0) && n.input(0)->dtype() == ir::DType::Bool) << n.describe() << ": the condition must be a bool tensor";
  auto& steps = s.plan().steps;
  steps.push_back(control_step(n, ONNXC_STEP_BRANCH, "branch on its condition", {s.tensor_of(n.input(0))}));
  size_t branch = steps.size() - 1;
  add_branch(s, n, "then_branch");
  steps.push_back(control_step(n, ONNXC_STEP_JUMP, "end of then_branch"));
  size_t jump = steps.size() - 1;
  steps[branch].control()->target = static_cast<int>(steps.size());
  add_branch(s, n, "else_branch");
  steps[jump].control()->target = static_cast<int>(steps.size());
}

void build_loop(ControlScope& s, const ir::Node& n) {
  const ir::Graph& body = body_of(n);
  size_t n_carried = n.num_inputs() >= 2 ? n.num_inputs() - 2 : 0;
  user_check(body.inputs().size() == 2 + n_carried && body.outputs().size() >= 1 + n_carried)
      << n.describe() << ": the body has " << body.inputs().size() << " inputs and " << body.outputs().size()
      << " outputs for " << n_carried << " loop-carried values";
  size_t n_scan = body.outputs().size() - 1 - n_carried;
  LoopEmitter e(s, n);
  const ir::Value *m = n.input(0), *cond_in = n.num_inputs() > 1 ? n.input(1) : nullptr;
  user_check(!m || m->dtype() == ir::DType::Int64) << n.describe() << ": the trip count M must be int64";
  user_check(!cond_in || cond_in->dtype() == ir::DType::Bool) << n.describe() << ": the condition must be bool";
  int iter = s.tensor_of(body.inputs()[0]);
  int cond = s.tensor_of(body.inputs()[1]);
  e.copy(cond_in ? s.tensor_of(cond_in) : e.constant_true(), cond);
  std::vector<int> carried, results;
  for (size_t i = 0; i < n_carried; ++i) {
    const ir::Value* body_in = body.inputs()[2 + i];
    check_carried(n, {n.input(2 + i), body_in, body.outputs()[1 + i]});
    int c = s.tensor_of(body_in);
    e.copy(s.tensor_of(n.input(2 + i)), c);
    if (i < n.num_outputs() && n.output(i)) s.bind(n.output(i), c);
    carried.push_back(c);
  }
  int head = m ? e.head(iter, s.tensor_of(m), std::nullopt, cond)
               : e.head(iter, -1, ir::Dim(std::numeric_limits<int64_t>::max()), cond);  // no M: no limit
  s.add_body(body);
  std::vector<std::pair<int, int>> scans;  // (append step, Loop output index)
  for (size_t j = 0; j < n_scan; ++j) {
    const ir::Value* y = n_carried + j < n.num_outputs() ? n.output(n_carried + j) : nullptr;
    if (!live(y)) continue;
    user_check(known_shape(body.outputs()[1 + n_carried + j]) && known_shape(y))
        << n.describe() << ": scan output '" << y->name() << "' has no known shape (" << type_str(y) << ")";
    scans.emplace_back(e.append(s.tensor_of(body.outputs()[1 + n_carried + j])), static_cast<int>(n_carried + j));
  }
  std::vector<int> src = {s.tensor_of(body.outputs()[0])}, dst = {cond};
  for (size_t i = 0; i < n_carried; ++i) {
    src.push_back(s.tensor_of(body.outputs()[1 + i]));
    dst.push_back(carried[i]);
  }
  e.carry(src, dst);
  e.tail(head);
  for (auto [a, out] : scans) e.collect(a, s.tensor_of(n.output(static_cast<size_t>(out))), 0, false);
}

namespace {

// One Scan-9 style loop over scan inputs xs (tensors) along in_axes (reversed where in_rev), carrying
// the body's first inputs from `init` (tensors; the final states stay in the body inputs' tensors).
// Scan outputs go to `outs` (tensors, -1: unused), stacked on out_axes (reversed where out_rev).
struct ScanLoop {
  std::vector<int> init, xs, outs;
  std::vector<int64_t> in_axes, in_rev, out_axes, out_rev;
  ir::Dim length = ir::Dim(0);
};

void emit_scan_loop(ControlScope& s, const ir::Node& n, const ir::Graph& body, const ScanLoop& l) {
  LoopEmitter e(s, n);
  size_t n_state = l.init.size();
  std::vector<int> carried;
  for (size_t i = 0; i < n_state; ++i) {
    check_carried(n, {body.inputs()[i], body.outputs()[i]});
    int c = s.tensor_of(body.inputs()[i]);
    if (l.init[i] != c) e.copy(l.init[i], c);
    carried.push_back(c);
  }
  int iter = e.new_tensor("iter", ir::DType::Int64, {});
  int head = e.head(iter, -1, l.length, e.constant_true());
  for (size_t j = 0; j < l.xs.size(); ++j)
    e.host(ONNXC_HOST_SCAN_SLICE, "slice a scan input", {l.xs[j], iter}, {s.tensor_of(body.inputs()[n_state + j])},
           {l.in_axes[j], l.in_rev[j]});
  s.add_body(body);
  std::vector<int> appends(l.outs.size(), -1);
  for (size_t j = 0; j < l.outs.size(); ++j) {
    if (l.outs[j] < 0) continue;
    user_check(known_shape(body.outputs()[n_state + j]))
        << n.describe() << ": scan output " << j << " of the body has no known shape";
    appends[j] = e.append(s.tensor_of(body.outputs()[n_state + j]));
  }
  std::vector<int> src;
  for (size_t i = 0; i < n_state; ++i) src.push_back(s.tensor_of(body.outputs()[i]));
  e.carry(src, carried);
  e.tail(head);
  for (size_t j = 0; j < l.outs.size(); ++j)
    if (appends[j] >= 0) e.collect(appends[j], l.outs[j], l.out_axes[j], l.out_rev[j] != 0);
}

std::vector<int64_t> attr_or(const ir::Node& n, const std::string& name, size_t count) {
  auto v = n.attr_ints(name);
  if (v.empty()) v.assign(count, 0);
  user_check(v.size() == count) << n.describe() << ": " << name << " has " << v.size() << " entries for " << count;
  return v;
}

}  // namespace

void build_scan(ControlScope& s, const ir::Node& n, int64_t opset) {
  const ir::Graph& body = body_of(n);
  bool v8 = opset < 9;
  size_t first = v8 ? 1 : 0;
  size_t n_scan_in = static_cast<size_t>(n.attr_int("num_scan_inputs", 0));
  user_check(!v8 || !n.input(0)) << n.describe() << ": Scan-8 with sequence_lens is not supported yet";
  user_check(n.num_inputs() >= first + n_scan_in && n_scan_in > 0)
      << n.describe() << ": has " << n.num_inputs() << " inputs for num_scan_inputs " << n_scan_in;
  size_t n_state = n.num_inputs() - first - n_scan_in;
  user_check(body.inputs().size() == n_state + n_scan_in && body.outputs().size() >= n_state)
      << n.describe() << ": the body has " << body.inputs().size() << " inputs and " << body.outputs().size() << " outputs";
  size_t n_out = body.outputs().size() - n_state;
  for (size_t i = 0; i < n.num_inputs(); ++i)
    user_check(i < first || known_shape(n.input(i))) << n.describe() << ": input " << i << " has no known shape";
  ScanLoop l;
  l.in_rev = attr_or(n, v8 ? "directions" : "scan_input_directions", n_scan_in);
  l.in_axes = v8 ? std::vector<int64_t>(n_scan_in, 0) : attr_or(n, "scan_input_axes", n_scan_in);
  l.out_rev = v8 ? std::vector<int64_t>(n_out, 0) : attr_or(n, "scan_output_directions", n_out);
  l.out_axes = v8 ? std::vector<int64_t>(n_out, 0) : attr_or(n, "scan_output_axes", n_out);
  for (size_t k = 0; k < n_out; ++k) {
    const ir::Value* y = n_state + k < n.num_outputs() ? n.output(n_state + k) : nullptr;
    l.outs.push_back(live(y) && known_shape(y) ? s.tensor_of(y) : -1);
    user_check(!live(y) || known_shape(y)) << n.describe() << ": scan output '" << y->name() << "' has no known shape";
    if (!v8 && live(y)) l.out_axes[k] = norm_axis(n, l.out_axes[k], y->shape()->size(), "scan_output_axes");
  }
  // Every scan input has the scan axis' length (axis 1 under opset 8's batch axis).
  for (size_t j = 0; j < n_scan_in; ++j) {
    const ir::Value* x = n.input(first + n_state + j);
    int64_t axis = v8 ? 1 : norm_axis(n, l.in_axes[j], x->shape()->size(), "scan_input_axes");
    user_check(x->shape()->size() > static_cast<size_t>(axis)) << n.describe() << ": scan input '" << x->name() << "' has no axis " << axis;
    if (!v8) l.in_axes[j] = axis;
    const ir::Dim& len = (*x->shape())[static_cast<size_t>(axis)];
    if (j == 0) l.length = len;
    user_check(len == l.length) << n.describe() << ": scan inputs have lengths " << l.length.str() << " and " << len.str()
                                << " along their scan axes";
  }
  if (!v8) {
    for (size_t i = 0; i < n_state; ++i) {
      check_carried(n, {n.input(i), body.inputs()[i]});
      l.init.push_back(s.tensor_of(n.input(i)));
    }
    for (size_t j = 0; j < n_scan_in; ++j) l.xs.push_back(s.tensor_of(n.input(n_state + j)));
    for (size_t i = 0; i < n_state; ++i) {
      const ir::Value* y = i < n.num_outputs() ? n.output(i) : nullptr;
      if (y) s.bind(y, s.tensor_of(body.inputs()[i]));  // the final states are the carried tensors
    }
    return emit_scan_loop(s, n, body, l);
  }
  // Opset 8: an outer loop over the batch axis 0 slices every input, runs the scan of one batch entry
  // and gathers its final states and scan outputs, stacked along the batch axis.
  LoopEmitter e(s, n);
  const ir::Value* x0 = n.input(first + n_state);
  int iter = e.new_tensor("batch_iter", ir::DType::Int64, {});
  int head = e.head(iter, -1, (*x0->shape())[0], e.constant_true());
  for (size_t i = 0; i < n_state; ++i) {
    int c = s.tensor_of(body.inputs()[i]);
    e.host(ONNXC_HOST_SCAN_SLICE, "slice a batch entry", {s.tensor_of(n.input(first + i)), iter}, {c}, {0, 0});
    l.init.push_back(c);
  }
  for (size_t j = 0; j < n_scan_in; ++j) {
    const ir::Value* x = n.input(first + n_state + j);
    int xs = e.new_tensor("batch_entry", x->dtype(), ir::Shape(x->shape()->begin() + 1, x->shape()->end()));
    e.host(ONNXC_HOST_SCAN_SLICE, "slice a batch entry", {s.tensor_of(x), iter}, {xs}, {0, 0});
    l.xs.push_back(xs);
  }
  std::vector<int> batch_outs = l.outs;  // per batch entry: [length, ...] tensors of their own
  for (size_t k = 0; k < n_out; ++k) {
    if (l.outs[k] < 0) continue;
    const PlanTensor& y = s.plan().tensors[static_cast<size_t>(l.outs[k])];
    l.outs[k] = e.new_tensor("batch_scan_out", y.dtype, ir::Shape(y.shape.begin() + 1, y.shape.end()));
  }
  emit_scan_loop(s, n, body, l);
  std::vector<std::pair<int, int>> gathers;  // (append step, Scan output tensor)
  for (size_t i = 0; i < n_state; ++i) {
    const ir::Value* y = i < n.num_outputs() ? n.output(i) : nullptr;
    if (live(y)) gathers.emplace_back(e.append(l.init[i]), s.tensor_of(y));
  }
  for (size_t k = 0; k < n_out; ++k)
    if (l.outs[k] >= 0) gathers.emplace_back(e.append(l.outs[k]), batch_outs[k]);
  e.tail(head);
  for (auto [a, y] : gathers) e.collect(a, y, 0, false);
}

}  // namespace onnxc::codegen
