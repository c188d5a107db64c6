// make_plan(): partition + built kernels -> PlanDescription (tensor compaction, expression table,
// weights layout, symbol binding check).
#include "codegen/emit/plan.h"

#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "codegen/version.h"
#include "ir/error.h"

namespace onnxc::codegen {

namespace {

class PlanMaker {
 public:
  PlanMaker(const Partition& p, const std::vector<BuiltKernel>& built) : p_(p), built_(built) {}

  PlanDescription run(PlanDescription d) {
    d_ = std::move(d);
    keep_referenced_tensors();
    bind_symbols();
    find_gather_only_weights();
    for (int old : kept_) add_tensor(old);
    place_gathered_weights();
    for (int id : p_.inputs) d_.inputs.push_back(new_id_.at(id));
    for (int id : p_.outputs) d_.outputs.push_back(new_id_.at(id));
    add_steps();
    return std::move(d_);
  }

 private:
  void keep_referenced_tensors() {
    std::set<int> keep(p_.inputs.begin(), p_.inputs.end());
    keep.insert(p_.outputs.begin(), p_.outputs.end());
    for (const Step& k : p_.steps)
      if (!k.kernel()) {
        for (int t : k.inputs)
          if (t >= 0) keep.insert(t);  // a LOOP's trip count may be an expression instead (-1)
        keep.insert(k.outputs.begin(), k.outputs.end());
      }
    for (const auto& b : built_)
      for (const auto& a : b.call_args)
        if (a.tensor >= 0) keep.insert(a.tensor);
    for (int id : std::set<int>(keep))
      if (p_.tensors[id].kind == TensorKind::View) keep.insert(p_.tensors[id].view_of);
    kept_.assign(keep.begin(), keep.end());
    for (size_t i = 0; i < kept_.size(); ++i) new_id_[kept_[i]] = static_cast<int>(i);
  }

  // Symbols in graph-input order of appearance, then those host steps bind from data, in step order;
  // every other symbol is an error, since the runtime could not learn its value.
  void bind_symbols() {
    std::set<std::string> bound;
    auto add = [&](const std::string& name) {
      sym_index_[name] = static_cast<int>(d_.symbols.size());
      d_.symbols.push_back(name);
    };
    for (int id : p_.inputs)
      for (const auto& dim : p_.tensors[id].shape)
        if (dim.is_symbol() && bound.insert(dim.name()).second) add(dim.name());
    for (size_t i = 0; i < p_.steps.size(); ++i) {
      const Step& k = p_.steps[i];
      const HostStep* h = k.host();
      if (!h) continue;
      std::vector<ir::Dim> dims;
      for (auto [out, axis] : h->binds) dims.push_back(p_.tensors[k.outputs.at(out)].shape.at(axis));
      for (const std::string& name : h->bind_symbols) dims.push_back(ir::Dim::symbol(name));
      for (const ir::Dim& dim : dims) {
        bool fresh = dim.is_symbol() && bound.insert(dim.name()).second;
        if (fresh) add(dim.name());
        host_binds_[i].push_back(fresh ? sym_index_.at(dim.name()) : -1);  // -1: the runtime checks the size
      }
    }
    for (int id : kept_) {
      std::set<std::string> syms;
      for (const auto& dim : p_.tensors[id].shape) dim.collect_symbols(syms);
      for (const auto& s : syms)
        user_check(bound.count(s)) << "tensor '" << p_.tensors[id].name << "' has shape "
                                   << ir::shape_str(p_.tensors[id].shape) << ": symbol '" << s
                                   << "' is not a dim of any graph input, so its value is unknown at run time";
    }
  }

  void emit_rpn(const ir::Dim& d, std::vector<int64_t>& code) {
    using K = ir::Dim::Kind;
    switch (d.kind()) {
      case K::Const: code.insert(code.end(), {0, d.value()}); return;
      case K::Sym:
        user_check(sym_index_.count(d.name()))
            << "a kernel uses the size '" << d.name() << "', which no graph input dim or host step binds: sizes "
            << "that only data decides inside a kernel are not supported (e.g. a Slice with run-time starts in a loop "
            << "body)";
        code.insert(code.end(), {1, sym_index_.at(d.name())});
        return;
      default: break;
    }
    static const std::map<K, int64_t> op = {{K::Add, 2}, {K::Mul, 4}, {K::FloorDiv, 5}, {K::CeilDiv, 6},
                                            {K::Mod, 7}, {K::Min, 8}, {K::Max, 9}};
    const auto& ops = d.operands();
    emit_rpn(ops[0], code);
    for (size_t i = 1; i < ops.size(); ++i) {
      emit_rpn(ops[i], code);
      code.push_back(op.at(d.kind()));
    }
  }

  int32_t expr_id(const ir::Dim& d) {
    auto it = expr_ids_.find(d.str());
    if (it != expr_ids_.end()) return it->second;
    std::vector<int64_t> code;
    emit_rpn(d, code);
    d_.exprs.push_back(std::move(code));
    d_.expr_text.push_back(d.str());
    return expr_ids_[d.str()] = static_cast<int32_t>(d_.exprs.size()) - 1;
  }

  // Offset of a weight's bytes in the blob; equal bytes are stored once. Only weights of equal size
  // are compared, so many weights do not cost a comparison of each against all.
  uint64_t place_weight(const ir::Tensor& t) {
    auto& pieces = d_.weights.pieces;
    auto [lo, hi] = by_size_.equal_range(t.nbytes());
    for (auto it = lo; it != hi; ++it)
      if (std::memcmp(pieces[it->second].tensor.raw(), t.raw(), t.nbytes()) == 0) return pieces[it->second].offset;
    uint64_t off = (d_.weights.size + 63) / 64 * 64;
    d_.weights.size = off + t.nbytes();
    by_size_.emplace(t.nbytes(), pieces.size());
    pieces.push_back({off, t});
    return off;
  }

  // Weights every reader of which is a kernel's gather reading them as its data (an embedding table):
  // a run reads only the rows its indices name. Anything else that touches a weight (a host or control
  // step, a view of it, a model output, a constant a lowering added, any other op of a kernel) keeps
  // it among the weights read in whole.
  void find_gather_only_weights() {
    std::set<int> whole;
    for (int id : p_.outputs) whole.insert(id);
    for (const PlanTensor& t : p_.tensors)
      if (t.kind == TensorKind::View) whole.insert(t.view_of);
    for (size_t i = 0; i < p_.steps.size(); ++i) {
      const Step& k = p_.steps[i];
      const KernelStep* ks = k.kernel();
      if (!ks) {
        whole.insert(k.inputs.begin(), k.inputs.end());
        continue;
      }
      const auto& ins = ks->graph->inputs();
      std::set<int> passed;  // tensors the kernel gets as one of its graph inputs
      for (size_t j = 0; j < ins.size() && j < k.inputs.size(); ++j) {
        passed.insert(k.inputs[j]);
        if (!only_gathered(*ins[j])) whole.insert(k.inputs[j]);
      }
      for (const auto& a : built_[i].call_args)
        if (a.tensor >= 0 && !passed.count(a.tensor)) whole.insert(a.tensor);  // a lowering's constant
      for (int t : k.outputs) whole.insert(t);
    }
    for (int id : kept_)
      if (p_.tensors[id].kind == TensorKind::Weight && !whole.count(id)) gather_only_.insert(id);
  }

  static bool only_gathered(const ir::Value& v) {
    if (v.is_graph_output() || v.uses().empty()) return false;
    for (const ir::Use& u : v.uses()) {
      const ir::Node* n = u.node;
      const std::string& op = n->op_type();
      if (!n->domain().empty() || u.input_index != 0 || (op != "Gather" && op != "GatherElements" && op != "GatherND"))
        return false;
    }
    return true;
  }

  // After every other weight: from a 4 KiB boundary (a page on most hosts), the gather-only weights.
  // Bytes equal to a weight already placed are shared, wherever that one lies.
  void place_gathered_weights() {
    auto& w = d_.weights;
    w.copy_size = w.size;
    if (gathered_.empty()) return;
    const uint64_t page = 4096;
    w.size = (w.size + page - 1) / page * page;
    const size_t placed = w.pieces.size();
    for (auto [new_id, old] : gathered_) d_.tensors[new_id].weight_offset = place_weight(*p_.tensors[old].data);
    if (w.pieces.size() == placed) w.size = w.copy_size;  // all equal to weights placed before: no gap
  }

  void add_tensor(int old) {
    const PlanTensor& t = p_.tensors[old];
    PlanDescription::Tensor o;
    o.name = t.name;
    o.dtype = static_cast<int32_t>(t.dtype);
    o.kind = static_cast<int32_t>(t.kind);
    o.value = t.value;
    for (const auto& dim : t.shape) o.dims.push_back(expr_id(dim));
    if (t.kind == TensorKind::View) o.view_of = new_id_.at(t.view_of);
    if (t.kind == TensorKind::Weight) {
      user_check(t.data && t.dtype != ir::DType::String) << "weight '" << t.name << "' has no numeric data";
      o.weight_bytes = t.data->nbytes();
      if (o.weight_bytes && gather_only_.count(old)) gathered_.emplace_back(d_.tensors.size(), old);
      else o.weight_offset = o.weight_bytes ? place_weight(*t.data) : 0;
    }
    d_.tensors.push_back(std::move(o));
  }

  // "MatMul 'q', Add 'q/bias'": the nodes a kernel computes, in order.
  static std::string kernel_nodes(const ir::Graph& g) {
    std::string r;
    for (const ir::Node* n : g.nodes()) {
      std::string op = n->domain().empty() ? n->op_type() : n->domain() + "." + n->op_type();
      std::string id = !n->name().empty() ? n->name() : n->output(0) ? n->output(0)->name() : "";
      r += (r.empty() ? "" : ", ") + op + " '" + id + "'";
    }
    return r;
  }

  // Floating-point operations of a kernel's matrix products and convolutions (2 per multiply-add),
  // as a dim expression; nullopt when it has none (other kernels report bandwidth only).
  static std::optional<ir::Dim> kernel_flops(const ir::Graph& g) {
    std::optional<ir::Dim> total;
    for (const ir::Node* n : g.nodes()) {
      const ir::Value *a = n->input(0), *w = n->input(1), *y = n->output(0);
      if (!n->domain().empty() || !a || !w || !y || !a->shape() || !w->shape() || !y->shape()) continue;
      std::optional<ir::Dim> k;  // multiply-adds per output element
      if (n->op_type() == "MatMul" && !a->shape()->empty())
        k = a->shape()->back();
      else if (n->op_type() == "Gemm" && a->shape()->size() == 2)
        k = (*a->shape())[n->attr_int("transA", 0) ? 0 : 1];
      else if (n->op_type() == "Conv" && w->shape()->size() >= 2)
        k = ir::shape_numel(ir::Shape(w->shape()->begin() + 1, w->shape()->end()));
      if (!k) continue;
      ir::Dim f = ir::Dim(2) * ir::shape_numel(*y->shape()) * *k;
      if (f.has_unknown()) continue;
      total = total ? *total + f : f;
    }
    return total;
  }

  void add_steps() {
    std::map<std::string, int> kernel_index;
    for (size_t i = 0; i < built_.size(); ++i) {
      const Step& k = p_.steps[i];
      if (const HostStep* h = k.host()) {
        d_.steps.push_back(host_step(i, *h));
        continue;
      }
      if (const ControlStep* c = k.control()) {
        d_.steps.push_back(control_step(k, *c));
        continue;
      }
      const KernelStep& ks = std::get<KernelStep>(k.kind);
      const BuiltKernel& b = built_[i];
      auto [it, fresh] = kernel_index.emplace(b.fn_name, static_cast<int>(d_.kernels.size()));
      if (fresh) d_.kernels.push_back(b.fn_name);
      PlanDescription::Step s;
      s.kernel = it->second;
      s.comment = k.name;
      s.nodes = kernel_nodes(*ks.graph);
      if (auto f = kernel_flops(*ks.graph)) s.flops = expr_id(*f);
      for (const auto& a : b.call_args)
        s.args.push_back(a.tensor >= 0 ? new_id_.at(a.tensor) : -(expr_id(ir::Dim::symbol(a.symbol)) + 1));
      d_.steps.push_back(std::move(s));
    }
  }

  // A host step's args: its tensors in the op's order, then its attributes as constant scalars.
  PlanDescription::Step host_step(size_t i, const HostStep& h) {
    const Step& k = p_.steps[i];
    PlanDescription::Step s;
    s.kind = 1;  // ONNXC_STEP_HOST
    s.kernel = h.op;
    s.comment = s.nodes = k.name;
    for (int t : k.inputs) s.args.push_back(new_id_.at(t));
    for (int t : k.outputs) s.args.push_back(new_id_.at(t));
    for (int64_t v : h.scalars) s.args.push_back(-(expr_id(ir::Dim(v)) + 1));
    s.binds = host_binds_[i];
    return s;
  }

  // A BRANCH (args {condition}), JUMP, LOOP (args {iteration count, trip count, condition}; the trip
  // count a scalar when it is a shape expression) or NEXT; `kernel` is the target step (kernels and
  // steps are one to one).
  PlanDescription::Step control_step(const Step& k, const ControlStep& c) {
    PlanDescription::Step s;
    s.kind = c.kind;
    s.kernel = c.target;
    s.comment = s.nodes = k.name;
    for (int t : k.inputs) s.args.push_back(t >= 0 ? new_id_.at(t) : -(expr_id(*c.trip) + 1));
    return s;
  }

  const Partition& p_;
  const std::vector<BuiltKernel>& built_;
  std::map<size_t, std::vector<int32_t>> host_binds_;  // by step index
  PlanDescription d_;
  std::vector<int> kept_;
  std::map<int, int> new_id_;
  std::map<std::string, int> sym_index_;
  std::map<std::string, int32_t> expr_ids_;
  std::unordered_multimap<size_t, size_t> by_size_;
  std::set<int> gather_only_;                          // partition tensor ids (find_gather_only_weights)
  std::vector<std::pair<size_t, int>> gathered_;       // (plan tensor index, partition id), placed last  // weight bytes -> index in d_.weights.pieces
};

}  // namespace

PlanDescription make_plan(const Partition& p, const std::vector<BuiltKernel>& built, const std::string& name,
                          const std::string& target, bool uses_cuda) {
  internal_check(built.size() == p.steps.size()) << "make_plan: one built kernel (or none) per step";
  PlanDescription d;
  d.name = name;
  d.target = target;
  d.uses_cuda = uses_cuda;
  d.producer = std::string("onnxc ") + kOnnxcVersion;
  return PlanMaker(p, built).run(std::move(d));
}

}  // namespace onnxc::codegen
