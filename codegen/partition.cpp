// Graph -> kernels: the tensor table (inputs, weights, views, intermediates, outputs), then each group
// of nodes (codegen/partition_group.h) as a kernel with its own copy of the nodes, a host step or,
// for If, Loop and Scan, control steps (codegen/partition_control.h). Shape-only nodes are copied
// into their readers.
#include "codegen/partition.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>

#include "codegen/host_steps.h"
#include "codegen/partition_control.h"
#include "codegen/partition_group.h"
#include "codegen/partition_values.h"
#include "ir/error.h"
#include "ir/infer/infer.h"
#include "onnxc/model_abi.h"

namespace onnxc::codegen {

namespace {

bool is_constant_node(const ir::Node& n) { return n.domain().empty() && n.op_type() == "Constant"; }

// The control ops partitioning turns into control steps (partition_control.h): one row per op the
// op table marks kControlFlow and the runtime can run. A kControlFlow op without a row is reported
// unsupported (SequenceMap; passes/resolve_sequences unrolls the ones it can).
struct ControlOpRule {
  const char* op;  // ai.onnx
  void (*build)(ControlScope&, const ir::Node&, int64_t opset);
};

const ControlOpRule kControlOps[] = {
    {"If", [](ControlScope& s, const ir::Node& n, int64_t) { build_if(s, n); }},
    {"Loop", [](ControlScope& s, const ir::Node& n, int64_t) { build_loop(s, n); }},
    {"Scan", build_scan},
};

const ControlOpRule* control_rule(const ir::Node& n) {
  if (!is_control_flow(n) || !(n.domain().empty() || n.domain() == "ai.onnx")) return nullptr;
  for (const ControlOpRule& r : kControlOps)
    if (n.op_type() == r.op) return &r;
  return nullptr;
}

// Values of enclosing graphs that nodes inside n's subgraphs (nested ones too) read: n needs them as
// much as its own inputs.
void outer_reads(const ir::Node& n, std::vector<const ir::Value*>& out) {
  std::set<const ir::Value*> inner;
  std::vector<const ir::Value*> reads;
  std::function<void(const ir::Graph&)> walk = [&](const ir::Graph& g) {
    for (const ir::Value* v : g.values()) inner.insert(v);
    for (const ir::Node* c : g.nodes()) {
      reads.insert(reads.end(), c->inputs().begin(), c->inputs().end());
      for (const ir::Graph* sg : c->subgraphs()) walk(*sg);
    }
    reads.insert(reads.end(), g.outputs().begin(), g.outputs().end());
  };
  for (const ir::Graph* g : n.subgraphs()) walk(*g);
  for (const ir::Value* v : reads)
    if (v && !inner.count(v)) out.push_back(v);
}

// The tensor a Constant node makes (value attribute; value_float/int/s forms too).
std::optional<ir::Tensor> constant_node_value(const ir::Node& n) {
  for (const auto& a : n.attributes()) {
    if (a.name == "value" && a.kind == ir::Attribute::Kind::Tensor) return a.t;
    if (a.name == "value_float") return ir::Tensor::scalar<float>(ir::DType::Float32, a.f);
    if (a.name == "value_int") return ir::Tensor::scalar<int64_t>(ir::DType::Int64, a.i);
    if (a.name == "value_floats")
      return ir::Tensor::from_vector<float>(ir::DType::Float32, {int64_t(a.floats.size())}, a.floats);
    if (a.name == "value_ints")
      return ir::Tensor::from_vector<int64_t>(ir::DType::Int64, {int64_t(a.ints.size())}, a.ints);
  }
  return std::nullopt;
}

// Nodes whose outputs graph outputs depend on.
std::set<const ir::Node*> live_nodes(const ir::Graph& g) {
  std::set<const ir::Node*> live;
  std::vector<const ir::Value*> work(g.outputs().begin(), g.outputs().end());
  while (!work.empty()) {
    const ir::Value* v = work.back();
    work.pop_back();
    const ir::Node* p = v ? v->producer() : nullptr;
    if (!p || v->is_constant() || !live.insert(p).second) continue;
    // A view reads only its first input's bytes; its other inputs (the target shape) are not needed.
    size_t n_in = is_view_op(*p) ? std::min<size_t>(1, p->num_inputs()) : p->num_inputs();
    for (size_t i = 0; i < n_in; ++i)
      if (p->input(i)) work.push_back(p->input(i));
    outer_reads(*p, work);
  }
  return live;
}

bool value_live(const ir::Value* v) { return v && (!v->uses().empty() || v->is_graph_output()); }

// What the partitioner of the model's graph and those of its If branches share: the tensor table and
// kernel list, and the tensor of each value (a branch reads an outer value as the outer tensor).
struct SharedState {
  Partition p;
  std::unordered_map<const ir::Value*, int> ids;
};

class Partitioner : public ControlScope {
 public:
  Partitioner(const ir::Model& m, const ir::Graph& g, SharedState& s, bool in_branch)
      : m_(m), g_(g), shared_(s), p_(s.p), ids_(s.ids), in_branch_(in_branch) {}

  // ControlScope: what If, Loop and Scan lowering (codegen/partition_control.cpp) uses.
  Partition& plan() override { return p_; }
  int tensor_of(const ir::Value* v) override { return tensor_of(v, TensorKind::Intermediate); }
  void bind(const ir::Value* v, int t) override {
    ids_[v] = t;
    if (v->is_graph_output()) p_.tensors[t].name = v->name();  // the library's output keeps the model's name
  }
  void add_body(const ir::Graph& body) override { Partitioner(m_, body, shared_, true).add_kernels(); }
  bool nested() const override { return in_branch_; }
  bool input_symbol(const std::string& name) const override {
    std::set<std::string> syms;
    for (const ir::Value* v : m_.graph->inputs())
      if (v->shape())
        for (const auto& d : *v->shape()) d.collect_symbols(syms);
    return syms.count(name) > 0;
  }

  Partition run() {
    auto unsupported = find_unsupported(m_);
    if (!unsupported.empty()) {
      std::string msg = "model uses ops code generation does not support: ";
      for (size_t i = 0; i < unsupported.size(); ++i) msg += (i ? ", " : "") + unsupported[i];
      user_error << msg;
    }
    // A graph input with an initializer (IR < 4 models list weights as inputs) is compiled as the
    // weight it holds: the library's inputs are the values the user must pass.
    for (auto* v : g_.inputs())
      if (!v->is_constant()) p_.inputs.push_back(tensor_of(v, TensorKind::Input));
    add_kernels();
    bind_outputs();
    return std::move(p_);
  }

  // Appends the kernels of g_'s live nodes, in execution order.
  void add_kernels() {
    live_ = live_nodes(g_);
    nodes_ = g_.nodes();
    for (auto* n : nodes_) {
      if (!live_.count(n)) continue;
      if (is_constant_node(*n)) make_constant(*n);
      if (n->subgraphs().empty()) continue;
      std::vector<const ir::Value*> reads;
      outer_reads(*n, reads);
      read_by_subgraphs_.insert(reads.begin(), reads.end());
    }
    NodeGroups grouped = group_nodes(
        nodes_, [this](const ir::Node* n) { return needs_kernel(n); }, [this](const ir::Node* n) { return is_view(n); },
        live_, read_by_subgraphs_, ir::opset_map(m_));
    std::set<const ir::Node*> grouped_nodes;
    for (const auto& g : grouped.groups) grouped_nodes.insert(g.begin(), g.end());
    for (auto* n : nodes_)  // views a kernel computes inline are no tensors of their own
      if (is_view(n) && !grouped_nodes.count(n)) make_view(*n);
    shape_only_ = std::move(grouped.shape_only);
    for (size_t g = 0; g < grouped.groups.size(); ++g) build_kernel(grouped.groups[g], grouped.classes[g]);
  }

 private:
  int add_tensor(PlanTensor t) {
    p_.tensors.push_back(std::move(t));
    return static_cast<int>(p_.tensors.size()) - 1;
  }

  static ir::Shape shape_of(const ir::Value* v) {
    user_check(v->type().is_tensor() && v->type().has_rank())
        << "value '" << v->name() << "'"
        << (v->producer() ? " (output of " + v->producer()->describe() + ")" : "")
        << " has no inferred shape; code generation needs shapes (run shape inference first)";
    for (const auto& d : *v->shape())
      user_check(!d.is_unknown() && d.str().find('?') == std::string::npos)
          << "value '" << v->name() << "' has an unknown dim in " << ir::shape_str(*v->shape())
          << "; code generation needs every dim to be a number or a symbolic expression";
    return *v->shape();
  }

  // The tensor id of a value, creating it (as `kind`, or Weight for constants) on first sight.
  int tensor_of(const ir::Value* v, TensorKind kind) {
    auto it = ids_.find(v);
    if (it != ids_.end()) return it->second;
    PlanTensor t;
    t.name = v->name();
    t.dtype = v->dtype();
    if (v->is_constant()) {
      user_check(v->dtype() != ir::DType::String) << "value '" << v->name() << "': string constants are not supported";
      t.kind = TensorKind::Weight;
      t.data = v->constant();
      t.shape.assign(v->constant().dims().begin(), v->constant().dims().end());
    } else {
      t.kind = kind;
      t.value = value_kind_of(v->type());  // a run-time sequence or optional has no shape of its own
      if (t.value == 0) t.shape = shape_of(v);
      else t.dtype = element_dtype(v->type());
    }
    int id = add_tensor(std::move(t));
    ids_[v] = id;
    return id;
  }

  void make_constant(const ir::Node& n) {
    auto value = constant_node_value(n);
    user_check(value.has_value()) << n.describe() << ": unsupported Constant form";
    PlanTensor t;
    t.name = n.output()->name();
    t.dtype = value->dtype();
    t.kind = TensorKind::Weight;
    t.shape.assign(value->dims().begin(), value->dims().end());
    t.data = std::move(value);
    ids_[n.output()] = add_tensor(std::move(t));
  }

  // Dropout is a view only in inference mode with its mask output unused.
  bool view_needs_kernel(const ir::Node& n) const {
    if (is_host_op(n)) return true;  // Identity of a sequence or optional: a value host step
    if (n.op_type() == "Dropout") {
      if (value_live(n.output(1))) return true;
      if (auto* tm = n.input(2); tm && (!tm->is_constant() || tm->constant().get_i64(0) != 0)) return true;
    }
    return false;
  }

  void make_view(const ir::Node& n) {
    int src = tensor_of(n.input(0));
    const ir::Value* out = n.output(0);
    PlanTensor t;
    t.name = out->name();
    t.dtype = out->dtype();
    t.shape = shape_of(out);
    const PlanTensor& s = p_.tensors[src];
    if (s.kind == TensorKind::Weight) {  // a view of a weight is a weight: same bytes, new dims
      auto dims = ir::shape_as_ints(t.shape);
      user_check(dims.has_value()) << n.describe() << ": view of a constant has a symbolic shape";
      t.kind = TensorKind::Weight;
      t.data = s.data->reshaped(*dims);
    } else {
      t.kind = TensorKind::View;
      t.view_of = s.kind == TensorKind::View ? s.view_of : src;
    }
    ids_[out] = add_tensor(std::move(t));
  }

  bool is_view(const ir::Node* n) const {
    return live_.count(n) && is_view_op(*n) && !view_needs_kernel(*n);
  }

  bool needs_kernel(const ir::Node* n) const { return live_.count(n) && !is_constant_node(*n) && !is_view(n); }

  // A tensor for an output no one reads (absent, or dead): the host op writes it all the same.
  int host_output(const HostStepArgs::Output& o) {
    if (o.value && value_live(o.value)) return tensor_of(o.value);
    PlanTensor t;
    t.name = (o.value ? o.value->name() : "") + "/unused" + std::to_string(p_.tensors.size());
    t.dtype = o.dtype;
    t.shape = o.shape;
    t.value = o.value_kind;
    return add_tensor(std::move(t));
  }

  // The links of a stacked cache's chain (passes/stacked_kv_cache: CacheAppend with a `layer`) are
  // views of the last link's output: one buffer, each link writing only its layer's rows.
  void share_cache_chain(const ir::Node& n) {
    const ir::Value* end = n.output(0);
    for (bool more = true; more;) {
      more = false;
      for (const ir::Use& u : end->uses()) {
        const ir::Node& next = *u.node;
        if (next.domain() == "onnxc" && next.op_type() == "CacheAppend" && u.input_index == 0 && next.attr_int("layer", -1) >= 0 &&
            live_.count(&next)) {
          end = next.output(0);
          more = true;
          break;
        }
      }
    }
    if (end == n.output(0) || ids_.count(n.output(0))) return;
    PlanTensor t;
    t.name = n.output(0)->name();
    t.dtype = n.output(0)->dtype();
    t.shape = shape_of(n.output(0));
    t.kind = TensorKind::View;
    t.view_of = tensor_of(end, TensorKind::Intermediate);
    ids_[n.output(0)] = add_tensor(std::move(t));
  }

  void build_host_kernel(const ir::Node& n) {
    if (n.op_type() == "SequenceConstruct") return build_sequence_construct(*this, n);
    if (n.domain() == "onnxc" && n.op_type() == "CacheAppend") share_cache_chain(n);
    HostStepArgs a = host_step_args(n);
    // A host step binds symbols from data; in a branch that does not run they would stay unbound.
    user_check(!in_branch_ || a.binds.empty()) << n.describe() << ": ops with data-dependent output sizes inside an If "
                                               << "branch or a loop body are not supported yet";
    Step k;
    k.name = n.describe();
    k.kind = HostStep{a.op, a.scalars, a.binds, {}};
    for (auto& in : a.inputs) {
      if (in.value) {
        k.inputs.push_back(tensor_of(in.value));
        continue;
      }
      PlanTensor t;
      t.name = n.name() + "/default" + std::to_string(k.inputs.size());
      t.dtype = in.fallback->dtype();
      t.kind = TensorKind::Weight;
      t.shape.assign(in.fallback->dims().begin(), in.fallback->dims().end());
      t.data = std::move(in.fallback);
      k.inputs.push_back(add_tensor(std::move(t)));
    }
    for (const auto& o : a.outputs) k.outputs.push_back(host_output(o));
    p_.steps.push_back(std::move(k));
  }

  // Sizes given as data (value symbols, ir/infer/infer.h) that this group's outputs use: each gets a
  // host step reading the value, before the first kernel that needs it.
  void bind_value_sizes(const std::vector<const ir::Node*>& members) {
    for (const ir::Node* n : members)
      for (const ir::Value* out : n->outputs()) {
        if (!out || !out->shape()) continue;
        std::set<std::string> syms;
        for (const auto& d : *out->shape()) d.collect_symbols(syms);
        for (const std::string& s : syms) {
          auto source = ir::value_symbol_source(s);
          if (!source || !value_sizes_bound_.insert(s).second) continue;
          const ir::Value* v = g_.find_value(*source);
          user_check(v) << n->describe() << ": size '" << s << "' names no value";
          user_check(!in_branch_) << n->describe() << ": a size given as data inside an If branch or a loop body is not supported yet";
          user_check(std::find(members.begin(), members.end(), v->producer()) == members.end())
              << n->describe() << ": size '" << *source << "' is computed inside the kernel that needs it; not supported";
          Step k;
          k.name = "size '" + *source + "'";
          k.kind = HostStep{ONNXC_HOST_VALUE_SIZE, {}, {}, {s}};
          k.inputs = {tensor_of(v)};
          p_.steps.push_back(std::move(k));
        }
      }
  }

  void build_kernel(const std::vector<const ir::Node*>& members, KernelClass kclass) {
    bind_value_sizes(members);
    if (members.size() == 1 && is_host_op(*members[0])) return build_host_kernel(*members[0]);
    if (const ControlOpRule* r = members.size() == 1 ? control_rule(*members[0]) : nullptr)
      return r->build(*this, *members[0], m_.opset(""));
    for (const ir::Node* n : members)  // kernels hold numbers: strings only go through host ops
      for (const auto& vs : {n->inputs(), n->outputs()})
        for (const ir::Value* v : vs)
          user_check(!v || v->dtype() != ir::DType::String)
              << n->describe() << ": " << n->op_type() << " on string tensors is not supported (strings go through "
              << "StringNormalizer, StringConcat, StringSplit, RegexFullMatch, Equal and Cast only)";
    Step k;
    KernelStep& ks = k.kind.emplace<KernelStep>();
    const ir::Node* root = members.back();
    k.name = root->describe();
    ks.kclass = kclass;
    ks.graph = std::make_shared<ir::Graph>("kernel");
    std::set<const ir::Node*> in_group(members.begin(), members.end());
    std::unordered_map<const ir::Value*, ir::Value*> local;
    std::function<ir::Value*(const ir::Value*)> local_value;
    auto copy_node = [&](const ir::Node* n) {
      // A view in a kernel is computed as onnxc.Copy of its data input (its shape input is not live).
      bool view = is_view(n);
      std::vector<ir::Value*> ins;
      for (size_t i = 0; i < (view ? 1 : n->num_inputs()); ++i) ins.push_back(local_value(n->input(i)));
      std::vector<std::string> outs;
      for (size_t i = 0; i < (view ? 1 : n->num_outputs()); ++i) outs.push_back(n->output(i) ? n->output(i)->name() : "");
      ir::Node* c = ks.graph->add_node(view ? "Copy" : n->op_type(), ins, outs, view ? "onnxc" : n->domain());
      c->set_name(n->name());
      if (!view) c->mutable_attributes() = n->attributes();
      for (size_t i = 0; i < outs.size(); ++i)
        if (const ir::Value* v = n->output(i)) {
          c->output(i)->set_type(v->type());
          local[v] = c->output(i);
        }
      if (view) ks.opsets["onnxc"] = 1;
      else ks.opsets[n->domain()] = m_.opset(n->domain());
      return c;
    };
    local_value = [&](const ir::Value* v) -> ir::Value* {
      if (!v) return nullptr;
      auto it = local.find(v);
      if (it != local.end()) return it->second;
      if (v->producer() && shape_only_.count(v->producer())) {
        copy_node(v->producer());
        return local.at(v);
      }
      int id = tensor_of(v);
      const PlanTensor& t = p_.tensors[id];
      ir::Value* lv = ks.graph->add_input(v->name(), ir::Type::tensor(t.dtype, t.shape));
      if (t.data) lv->set_constant(*t.data);
      k.inputs.push_back(id);
      return local[v] = lv;
    };
    for (const ir::Node* n : members) {
      ir::Node* c = copy_node(n);
      for (size_t i = 0; i < n->num_outputs(); ++i) {
        const ir::Value* v = n->output(i);
        if (!v) continue;
        ir::Value* lv = c->output(i);
        bool external = v->is_graph_output() ||
                        std::any_of(v->uses().begin(), v->uses().end(),
                                    [&](const ir::Use& u) { return !in_group.count(u.node); });
        if (external) {
          shape_of(v);
          ks.graph->add_output(lv);
          k.outputs.push_back(tensor_of(v));
        }
      }
    }
    p_.steps.push_back(std::move(k));
  }

  // Graph outputs: mark produced tensors as outputs; inputs, weights and views get a copy kernel.
  void bind_outputs() {
    for (const ir::Value* v : g_.outputs()) {
      int id = tensor_of(v);
      PlanTensor& t = p_.tensors[id];
      if (t.kind == TensorKind::Intermediate || t.kind == TensorKind::Output) {
        t.kind = TensorKind::Output;
        p_.outputs.push_back(id);
        continue;
      }
      PlanTensor out;
      out.name = t.name;
      out.dtype = t.dtype;
      out.shape = t.shape;
      out.kind = TensorKind::Output;
      if (t.kind == TensorKind::View) p_.tensors[id].name += "/view";
      int out_id = add_tensor(std::move(out));
      p_.steps.push_back(copy_kernel(id, out_id));
      p_.outputs.push_back(out_id);
    }
  }

  Step copy_kernel(int src, int dst) override {
    const PlanTensor& s = p_.tensors[src];
    const PlanTensor& d = p_.tensors[dst];
    if (s.value != 0) return value_copy_kernel(p_, src, dst);
    Step k;
    KernelStep& ks = k.kind.emplace<KernelStep>();
    k.name = "copy to output '" + d.name + "'";
    ks.kclass = KernelClass::DataMovement;
    ks.graph = std::make_shared<ir::Graph>("kernel");
    ir::Value* in = ks.graph->add_input(s.name, ir::Type::tensor(s.dtype, s.shape));
    if (s.data) in->set_constant(*s.data);
    ir::Node* c = ks.graph->add_node("Copy", {in}, {d.name + "/copy"}, "onnxc");
    c->output()->set_type(ir::Type::tensor(d.dtype, d.shape));
    ks.graph->add_output(c->output());
    k.inputs = {src};
    k.outputs = {dst};
    ks.opsets["onnxc"] = 1;
    return k;
  }

  const ir::Model& m_;
  const ir::Graph& g_;
  SharedState& shared_;
  Partition& p_;
  std::unordered_map<const ir::Value*, int>& ids_;
  bool in_branch_;                                    // g_ is an If branch or a loop body (at any depth)
  std::set<std::string> value_sizes_bound_;           // value symbols a host step already binds
  std::set<const ir::Node*> live_;
  std::vector<ir::Node*> nodes_;
  std::set<const ir::Value*> read_by_subgraphs_;      // values nodes inside subgraphs read
  std::set<const ir::Node*> shape_only_;              // copied into the kernels that read them
};

}  // namespace

bool is_view_op(const ir::Node& n) { return ir::op_has(n.domain(), n.op_type(), ir::kView); }

namespace {

// A control op is supported when everything live in its subgraphs is. The op table's traits say
// where a node must go: kControlFlow to a control step, kDataDependent or kHostOnly to a host step
// (no kernel could size or hold its output), anything else to a lowering for its opset.
void collect_unsupported(const ir::Graph& g, const ir::OpsetMap& opsets, std::vector<std::string>& r) {
  auto live = live_nodes(g);
  for (auto* n : g.nodes()) {
    if (!live.count(n) || is_constant_node(*n) || is_view_op(*n) || is_host_op(*n)) continue;
    const std::string op = ir::OpKey(n->domain(), n->op_type()).str() + " (" + n->describe();
    const uint32_t traits = ir::op_traits(n->domain(), n->op_type());
    const int64_t opset = ir::opset_of(opsets, n->domain());
    if (traits & ir::kControlFlow) {
      if (!control_rule(*n)) r.push_back(op + ": no control step runs it)");
      for (const ir::Graph* sg : n->subgraphs()) collect_unsupported(*sg, opsets, r);
    } else if (traits & (ir::kDataDependent | ir::kHostOnly)) {
      r.push_back(op + ": runs only on the host, and the runtime has no host op for this form)");
    } else if (!find_lowering(n->domain(), n->op_type(), opset)) {
      std::string lowered = lowered_opsets(n->domain(), n->op_type());
      r.push_back(op + (lowered.empty() ? ")" : ": no lowering for opset " + std::to_string(opset) + ", only " + lowered + ")"));
    }
  }
}

}  // namespace

std::vector<std::string> find_unsupported(const ir::Model& m) {
  std::vector<std::string> r;
  // A sequence or optional still at the interface after passes/resolve_sequences is a run-time value;
  // the artifact carries tensors, sequences of tensors and optionals of those: name anything else.
  auto interface = [&r](const std::vector<ir::Value*>& vs, const char* what) {
    for (const ir::Value* v : vs)
      if (value_kind_of(v->type()) < 0 && !v->is_constant())
        r.push_back(std::string(what) + " '" + v->name() + "' of type " + v->type().str() +
                    " (only tensors, sequences of tensors and optionals of those)");
  };
  interface(m.graph->inputs(), "graph input");
  interface(m.graph->outputs(), "graph output");
  collect_unsupported(*m.graph, ir::opset_map(m), r);
  return r;
}

namespace {

// Kernels reading a KV cache (onnxc.CacheAppend's past or present) take it with the strides the
// runtime gives: a session keeping its cache lays it out with capacity along the sequence axis.
void mark_strided_inputs(Partition& p) {
  std::set<int> cache;
  for (const Step& s : p.steps)
    if (const HostStep* h = s.host(); h && h->op == ONNXC_HOST_CACHE_APPEND)
      cache.insert({s.inputs.at(0), s.outputs.at(0)});
  if (cache.empty()) return;
  for (Step& s : p.steps)
    if (KernelStep* k = s.kernel())
      for (size_t i = 0; i < s.inputs.size(); ++i)
        if (cache.count(s.inputs[i])) k->strided_inputs.insert(i);
}

}  // namespace

Partition partition_model(const ir::Model& m) {
  SharedState s;
  Partition p = Partitioner(m, *m.graph, s, false).run();
  mark_strided_inputs(p);
  return p;
}

}  // namespace onnxc::codegen
