// Builds a kernel's Halide pipeline from its mini graph: inputs become ImageParams (scalar constants
// become literals), node lowerings run in order, outputs are scheduled by class or by the lowering.
#include "codegen/emit/kernel_builder.h"

#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

#include "codegen/emit/strict_float.h"
#include "codegen/lower/lower_util.h"
#include "codegen/schedule/schedule.h"
#include "codegen/target.h"
#include "ir/error.h"
#include "ir/printer.h"

namespace onnxc::codegen {

namespace {

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string float_text(double f) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a", f);
  return buf;
}

std::string attr_text(const ir::Attribute& a) {
  using K = ir::Attribute::Kind;
  std::ostringstream os;
  os << a.name << "=";
  switch (a.kind) {
    case K::Float: os << float_text(a.f); break;
    case K::Int: os << a.i; break;
    case K::String: os << '"' << a.s << '"'; break;
    case K::Tensor: os << "tensor:" << hex64(a.t.fingerprint()); break;
    case K::Floats: for (float f : a.floats) os << float_text(f) << ","; break;
    case K::Ints: for (int64_t i : a.ints) os << i << ","; break;
    case K::Strings: for (const auto& s : a.strings) os << '"' << s << "\","; break;
    case K::Tensors: for (const auto& t : a.tensors) os << hex64(t.fingerprint()) << ","; break;
    case K::Graph: os << "graph{" << (a.g ? ir::to_string(*a.g) : "") << "}"; break;
    default: os << "kind" << static_cast<int>(a.kind); break;
  }
  return os.str();
}

// Renames symbols s0, s1... in order of first appearance in a kernel's shapes.
class SymbolNames {
 public:
  std::string shape(const ir::Shape& s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + dim(s[i]);
    return r + "]";
  }
  std::string dim(const ir::Dim& d) {
    std::set<std::string> syms;
    d.collect_symbols(syms);
    for (const auto& s : syms)
      if (!rename_.count(s)) {
        rename_[s] = ir::Dim::symbol("s" + std::to_string(order_.size()));
        order_.push_back(s);
      }
    return d.substitute(rename_).str();
  }
  const std::vector<std::string>& order() const { return order_; }

 private:
  std::map<std::string, ir::Dim> rename_;
  std::vector<std::string> order_;  // model symbol names, in canonical order
};

// Inputs with one element that are constant become literals: no buffer, and the value is known to
// the simplifier (x * 0.5 instead of a load).
bool baked(const ir::Value* v) { return v->is_constant() && v->constant().numel() == 1; }

// The kernel fields of step k: canonical_form and build_kernel take kernel steps only.
const KernelStep& kernel_of(const Step& k) {
  const KernelStep* ks = k.kernel();
  internal_check(ks != nullptr) << k.name << ": not a Halide kernel step";
  return *ks;
}

// `code_constants`: the constant inputs whose values a lowering read (ConstInputs); the others
// only feed kernel data and are keyed by dtype and shape alone. Null: every constant is keyed by
// its data.
std::string walk_canonical(const KernelStep& k, const std::string& target, SymbolNames& names,
                           const std::set<const ir::Value*>* code_constants = nullptr) {
  std::ostringstream os;
  os << "target " << target << "\n";
  std::map<const ir::Value*, int> local;
  auto ref = [&](const ir::Value* v) { return v ? std::to_string(local.at(v)) : std::string("-"); };
  for (const ir::Value* v : k.graph->inputs()) {
    local[v] = static_cast<int>(local.size());
    os << "in " << ir::dtype_name(v->dtype()) << names.shape(*v->shape());
    if (v->is_constant() && !baked(v) && code_constants && !code_constants->count(v)) os << " weight";
    else if (v->is_constant()) os << (baked(v) ? " baked " : " const ") << hex64(v->constant().fingerprint());
    if (k.strided_inputs.count(local[v])) os << " strided";
    os << "\n";
  }
  for (const ir::Node* n : k.graph->nodes()) {
    os << "node " << n->domain() << "." << n->op_type() << " v" << k.opsets.at(n->domain()) << " (";
    for (const auto* v : n->inputs()) os << ref(v) << " ";
    os << ") -> (";
    for (const auto* v : n->outputs()) {
      if (!v) {
        os << "- ";
        continue;
      }
      local[v] = static_cast<int>(local.size());
      os << ref(v) << ":" << ir::dtype_name(v->dtype()) << names.shape(*v->shape()) << " ";
    }
    os << ")";
    for (const auto& a : n->attributes()) os << " " << attr_text(a);
    os << "\n";
  }
  os << "out";
  for (const auto* v : k.graph->outputs()) os << " " << ref(v);
  os << "\n";
  return os.str();
}

}  // namespace

std::string canonical_form(const Step& k, const std::string& target) {
  SymbolNames names;
  return walk_canonical(kernel_of(k), target, names);
}

Halide::Expr dim_to_expr(const ir::Dim& d, const std::map<std::string, Halide::Expr>& symbols) {
  using K = ir::Dim::Kind;
  switch (d.kind()) {
    case K::Const:
      // Kernels index with Halide's 32-bit extents: a larger dim would wrap (2^32+3 became 3), so it
      // is refused. Terms of a symbolic dim (the -1 of seq-1) may be negative. Dims bound at run
      // time are checked by the runtime the same way.
      user_check(d.value() >= INT32_MIN && d.value() <= INT32_MAX)
          << "a dim of " << d.value() << " is beyond the 2^31-1 elements per dim that compiled kernels index";
      return Halide::Expr(static_cast<int32_t>(d.value()));
    case K::Sym: {
      auto it = symbols.find(d.name());
      internal_check(it != symbols.end()) << "symbol " << d.name() << " has no kernel parameter";
      return it->second;
    }
    default: break;
  }
  std::vector<Halide::Expr> ops;
  for (const auto& o : d.operands()) ops.push_back(dim_to_expr(o, symbols));
  Halide::Expr r = ops[0];
  switch (d.kind()) {
    case K::Add: for (size_t i = 1; i < ops.size(); ++i) r = r + ops[i]; return r;
    case K::Mul: for (size_t i = 1; i < ops.size(); ++i) r = r * ops[i]; return r;
    case K::FloorDiv: return ops[0] / ops[1];  // Halide division is floor for positive divisors
    case K::CeilDiv: return -((-ops[0]) / ops[1]);
    case K::Mod: return ops[0] % ops[1];
    case K::Min: return Halide::min(ops[0], ops[1]);
    case K::Max: return Halide::max(ops[0], ops[1]);
    default: internal_error << "unexpected dim kind in " << d.str();
  }
}

namespace {

class Builder {
 public:
  Builder(const Step& s, Partition& p, const Halide::Target& t, const std::string& tname)
      : s_(s), k_(kernel_of(s)), p_(p), target_(t), target_name_(tname) {
    SymbolNames names;
    walk_canonical(k_, tname, names);  // for the order of the symbols
    for (size_t i = 0; i < names.order().size(); ++i) {
      Halide::Param<int64_t> prm("s" + std::to_string(i));
      params_.push_back(prm);
      symbols_[names.order()[i]] = Halide::cast<int32_t>(prm);
      symbol_order_.push_back(names.order()[i]);
    }
  }

  BuiltKernel run() {
    // LLVM 14's PTX backend cannot compile bf16 arithmetic: such kernels run on the host CPU (a
    // CUDA-target pipeline may mix host and device loops; Halide copies buffers as needed).
    if (target_.has_gpu_feature() && uses_dtype(ir::DType::BFloat16))
      sched_target_ = target_.without_feature(Halide::Target::CUDA);
    bind_inputs();
    for (const ir::Node* n : k_.graph->nodes()) lower_node(*n);
    // A check on tensor data cannot fail a CUDA kernel: such kernels are scheduled for the host.
    if (checks_data_ && target_.has_gpu_feature()) sched_target_ = target_.without_feature(Halide::Target::CUDA);
    std::vector<Halide::Func> outs = output_funcs();
    keep_ieee_semantics(outs, reassociable_);
    out_.pipeline = Halide::Pipeline(outs);
    restore_float_selects(out_.pipeline);
    for (auto& [condition, message] : requirements_) out_.pipeline.add_requirement(condition, message);
    collect_args();
    name_kernel();
    return std::move(out_);
  }

 private:
  // The canonical text and function name, once the lowerings have said which constants' values
  // shaped the code (the others are keyed by dtype and shape: see ConstInputs).
  void name_kernel() {
    SymbolNames names;
    out_.canonical = walk_canonical(k_, target_name_, names, &code_constants_);
    // The convolution form override (lower/conv_winograd.h) changes the code: part of the key.
    if (const char* w = std::getenv("ONNXC_CONV_WINOGRAD"); w && *w) out_.canonical += std::string("conv winograd ") + w + "\n";
    for (const ir::Node* n : k_.graph->nodes()) {
      // int8 products, and MatMulNBits whose accuracy_level 4 lets its decode kernel use them.
      const bool int8 = n->domain() == "onnxc" && n->op_type() == "DynamicQuantMatMul";
      const bool nbits8 = n->domain() == "com.microsoft" && n->op_type() == "MatMulNBits" &&
                          n->attr_int("accuracy_level", 0) == 4 && n->attr_int("bits", 4) == 4;
      if (!int8 && !nbits8) continue;
      Halide::Target dot = with_dot_products(target_);
      if (dot != target_) out_.compile_target = dot, out_.canonical += "compile target " + dot.to_string() + "\n";
      break;
    }
    out_.fn_name = "onnxc_k_" + hex64(fnv1a(out_.canonical));
  }

  Halide::Expr dim(const ir::Dim& d) { return dim_to_expr(d, symbols_); }
  std::vector<Halide::Expr> dims(const ir::Shape& s) {
    std::vector<Halide::Expr> r;
    for (const auto& d : s) r.push_back(dim(d));
    return r;
  }

  void bind_inputs() {
    const auto& ins = k_.graph->inputs();
    for (size_t i = 0; i < ins.size(); ++i) {
      const ir::Value* v = ins[i];
      HTensor t;
      t.dtype = v->dtype();
      try {
        t.shape = dims(*v->shape());
      } catch (const UserError& e) {
        user_error << "value '" << v->name() << "': " << e.what();
      }
      Halide::Type ty = halide_type(t.dtype);
      if (baked(v)) {
        const ir::Tensor& c = v->constant();
        Halide::Expr lit = ty.is_float() ? literal(ty, c.get_f64(0)) : Halide::Internal::make_const(ty, c.get_i64(0));
        t = define("const" + std::to_string(i), t.shape, t.dtype, [&](const Index&) { return lit; });
      } else {
        Halide::ImageParam ip(ty, t.rank(), "in" + std::to_string(i));
        if (k_.strided_inputs.count(i)) constrain_rows(ip);  // a KV cache with capacity
        else constrain_dense(ip, t.shape);
        image_params_.push_back({ip, s_.inputs[i]});
        t.func = ip;
        input_funcs_.insert(t.func.name());
      }
      values_[v] = t;
    }
  }

  HTensor add_constant(const ir::Node& n, const std::string& hint, ir::Tensor data) {
    PlanTensor w;
    w.name = (n.output(0) ? n.output(0)->name() : n.name()) + "/" + hint;
    w.dtype = data.dtype();
    w.shape.assign(data.dims().begin(), data.dims().end());
    w.kind = TensorKind::Weight;
    w.data = std::move(data);
    p_.tensors.push_back(w);
    int id = static_cast<int>(p_.tensors.size()) - 1;
    Halide::ImageParam ip(halide_type(w.dtype), static_cast<int>(w.shape.size()),
                          "w" + std::to_string(image_params_.size()));
    image_params_.push_back({ip, id});
    HTensor t;
    t.func = ip;
    input_funcs_.insert(t.func.name());
    t.dtype = w.dtype;
    t.shape = dims(w.shape);
    constrain_dense(ip, t.shape);
    return t;
  }

  void lower_node(const ir::Node& n) {
    const int64_t opset = k_.opsets.at(n.domain());
    const OpLowering* l = &lowering_for(n, opset);
    LowerContext ctx{n, {}, {}, {}, sched_target_, opset, nullptr, nullptr, nullptr, l->kclass, {}, {}, false, {}, kMaxEmptyReads - std::min(kMaxEmptyReads, empty_reads_.size())};
    for (const ir::Value* v : n.inputs()) {
      ctx.in.push_back(v ? values_.at(v) : HTensor{});
      ctx.const_in.push_back(v && v->is_constant() ? &v->constant() : nullptr);
    }
    try {
      for (const ir::Value* v : n.outputs()) ctx.out_shape.push_back(v ? dims(*v->shape()) : std::vector<Halide::Expr>{});
    } catch (const UserError& e) {
      user_error << n.describe() << ": " << e.what();
    }
    ctx.dim_expr = [this](const ir::Dim& d) { return dim(d); };
    ctx.add_constant = [this, &n](const std::string& hint, ir::Tensor t) { return add_constant(n, hint, std::move(t)); };
    std::vector<HTensor> outs;
    try {
      outs = l->fn(ctx);
    } catch (const Halide::CompileError& e) {
      user_error << n.describe() << ": " << e.what();
    }
    for (size_t i = 0; i < n.num_inputs(); ++i)
      if (ctx.const_in.read(i)) code_constants_.insert(n.input(i));
    for (const Halide::Func& f : ctx.reassociable) reassociable_.insert(f.name());
    requirements_.insert(requirements_.end(), ctx.requirements.begin(), ctx.requirements.end());
    empty_reads_.insert(empty_reads_.end(), ctx.empty_reads.begin(), ctx.empty_reads.end());
    checks_data_ = checks_data_ || ctx.checks_data;
    for (size_t i = 0; i < n.num_outputs(); ++i) {
      const ir::Value* v = n.output(i);
      if (!v || i >= outs.size() || !outs[i].defined()) continue;
      internal_check(outs[i].rank() == static_cast<int>(v->shape()->size()))
          << n.describe() << ": lowering returned rank " << outs[i].rank() << " for output " << i
          << " of shape " << ir::shape_str(*v->shape());
      values_[v] = outs[i];
      producer_[v] = &n;
    }
    if (ctx.schedule) {
      schedules_[&n] = ctx.schedule;
      // The kernel's anchor (a MatMul with an epilogue, say) schedules outputs computed after it.
      if (l->kclass == k_.kclass && !anchor_) anchor_ = &n;
    }
    if (n.output(0) && !values_.count(n.output(0)))
      internal_error << n.describe() << ": lowering produced no output 0";
  }

  // The Funcs realized as kernel outputs: fresh where a lowering returned an input or a Func
  // already used by another output, or a value of another type.
  std::vector<Halide::Func> output_funcs() {
    std::vector<Halide::Func> outs;
    std::set<std::string> used = input_funcs_;
    for (const ir::Value* v : k_.graph->outputs()) {
      auto it = values_.find(v);
      internal_check(it != values_.end()) << "kernel " << s_.name << ": output '" << v->name() << "' was not lowered";
      HTensor t = it->second;
      Halide::Type ty = halide_type(v->dtype());
      Halide::Func f = t.func;
      bool fresh = used.count(f.name()) || !is_pure_func(f) || f.output_types()[0] != ty;
      if (fresh) {
        t = define("out", t.shape, v->dtype(), [&](const Index& i) { return t.at(i); });
        f = t.func;
      }
      used.insert(f.name());
      constrain_dense(f.output_buffer(), dims(*v->shape()));
      f.compute_root();
      // Each lowering's schedule runs once, on the first output it covers; an output computed
      // from the anchor by a node without one (an epilogue) takes the anchor's. An output the
      // anchor reads (a residual sum a norm kernel also writes) takes the default schedule.
      const ir::Node* by = schedules_.count(producer_[v]) ? producer_[v] : computed_from(v, anchor_) ? anchor_ : nullptr;
      // Reads of inputs that may be empty (LowerContext::empty_reads) are dropped by specializations
      // of the schedule, the default one or a lowering's own (a softmax over rows that may be none).
      if (by && !fresh && scheduled_.insert(by).second) {
        schedules_[by](f, sched_target_);
      } else {
        schedule_output(f, k_.kclass, sched_target_);
      }
      specialize_empty_reads(f, empty_reads_);
      outs.push_back(f);
    }
    return outs;
  }

  bool uses_dtype(ir::DType dt) const {
    for (const ir::Value* v : k_.graph->inputs())
      if (v->dtype() == dt) return true;
    for (const ir::Node* n : k_.graph->nodes())
      for (const ir::Value* v : n->outputs())
        if (v && v->dtype() == dt) return true;
    return false;
  }

  // Whether `v` is computed from node `a`'s outputs within the kernel.
  static bool computed_from(const ir::Value* v, const ir::Node* a) {
    if (!a) return false;
    std::vector<const ir::Value*> work = {v};
    std::set<const ir::Node*> seen;
    while (!work.empty()) {
      const ir::Node* p = work.back()->producer();
      work.pop_back();
      if (!p || !seen.insert(p).second) continue;
      if (p == a) return true;
      for (const ir::Value* in : p->inputs())
        if (in) work.push_back(in);
    }
    return false;
  }

  // Output Funcs defined with Vars (a Func over an ImageParam is not).
  static bool is_pure_func(const Halide::Func& f) {
    if (!f.defined()) return false;
    for (const auto& a : f.function().definition().args())
      if (!a.as<Halide::Internal::Variable>()) return false;
    return true;
  }

  void collect_args() {
    std::set<std::string> used;
    for (const auto& a : out_.pipeline.infer_arguments()) used.insert(a.name);
    for (const auto& [ip, id] : image_params_)
      if (used.count(ip.name())) {
        out_.args.push_back(ip);
        out_.call_args.push_back({id, ""});
      }
    for (size_t i = 0; i < params_.size(); ++i)
      if (used.count(params_[i].name())) {
        out_.args.push_back(params_[i]);
        out_.call_args.push_back({-1, symbol_order_[i]});
      }
    for (int id : s_.outputs) out_.call_args.push_back({id, ""});
  }

  const Step& s_;
  const KernelStep& k_;
  Partition& p_;
  Halide::Target target_;
  std::string target_name_;
  std::set<const ir::Value*> code_constants_;  // constant inputs a lowering read (ConstInputs)
  Halide::Target sched_target_ = target_;  // the target schedules are chosen for
  BuiltKernel out_;
  std::vector<Halide::Param<int64_t>> params_;
  std::vector<std::string> symbol_order_;
  std::map<std::string, Halide::Expr> symbols_;
  std::vector<std::pair<Halide::ImageParam, int>> image_params_;  // with the tensor id each binds
  std::map<const ir::Value*, HTensor> values_;
  std::set<std::string> input_funcs_;  // names of the Funcs that read ImageParams
  std::set<std::string> reassociable_;  // Funcs exempt from strict float (LowerContext::reassociable)
  std::vector<std::pair<Halide::Expr, std::string>> requirements_;  // LowerContext::requirements of every node
  bool checks_data_ = false;  // some node's LowerContext::checks_data
  std::vector<Halide::Expr> empty_reads_;  // LowerContext::empty_reads of every node
  std::map<const ir::Value*, const ir::Node*> producer_;
  std::map<const ir::Node*, std::function<void(Halide::Func, const Halide::Target&)>> schedules_;
  const ir::Node* anchor_ = nullptr;
  std::set<const ir::Node*> scheduled_;
};

}  // namespace

BuiltKernel build_kernel(const Step& k, Partition& p, const Halide::Target& target,
                         const std::string& target_name) {
  try {
    return Builder(k, p, target, target_name).run();
  } catch (const Halide::CompileError& e) {
    user_error << "kernel " << k.name << ": " << e.what();
  } catch (const Halide::InternalError& e) {
    internal_error << "kernel " << k.name << ": Halide: " << e.what();
  }
}

}  // namespace onnxc::codegen
