// The fusion driver, the rewrite builder and the fusion report (see fusion.h).
#include "passes/fusion.h"

#include <algorithm>

#include "ir/error.h"
#include "ir/op_registry.h"
#include "passes/canonicalize.h"
#include "passes/rewrite.h"

namespace onnxc::passes {

const std::vector<std::string>& fusion_families() {
  static const std::vector<std::string> f = {"attention", "layer_norm", "rms_norm", "gelu", "rotary", "dequantize_matmul"};
  return f;
}

std::map<std::string, int> FusionReport::counts() const {
  std::map<std::string, int> c;
  for (const std::string& f : fusion_families()) c[f] = 0;
  for (const FusedEntry& e : fused) ++c[e.family];
  return c;
}

std::vector<NearMiss> FusionReport::ranked_near_misses() const {
  std::vector<NearMiss> r = near_misses;
  std::stable_sort(r.begin(), r.end(), [](const NearMiss& a, const NearMiss& b) { return a.matched > b.matched; });
  return r;
}

// ---- checks ----

std::optional<std::vector<int64_t>> FusionContext::ints(const ir::Value* v) const {
  if (!v) return std::nullopt;
  if (v->is_constant()) {
    const ir::Tensor& t = v->constant();
    if (t.empty_data() || !ir::dtype_is_integer(t.dtype())) return std::nullopt;
    std::vector<int64_t> out(static_cast<size_t>(t.numel()));
    for (int64_t i = 0; i < t.numel(); ++i) out[static_cast<size_t>(i)] = t.get_i64(i);
    return out;
  }
  if (!pass.shapes) return std::nullopt;
  auto dims = ir::shape_value(*pass.shapes, v);
  if (!dims) return std::nullopt;
  return ir::shape_as_ints(*dims);
}

std::optional<std::vector<ir::Dim>> FusionContext::dims(const ir::Value* v) const {
  if (auto i = ints(v)) return std::vector<ir::Dim>(i->begin(), i->end());
  if (!v || !pass.shapes) return std::nullopt;
  return ir::shape_value(*pass.shapes, v);
}

bool FusionContext::axes_are_last(const ir::Value* x, const ir::Value* axes) const {
  auto a = ints(axes);
  if (!a || a->empty() || !x->shape()) return false;
  int64_t rank = static_cast<int64_t>(x->shape()->size());
  std::vector<int64_t> norm;
  for (int64_t ax : *a) norm.push_back(ax < 0 ? ax + rank : ax);
  std::sort(norm.begin(), norm.end());
  for (size_t i = 0; i < norm.size(); ++i)
    if (norm[i] != rank - static_cast<int64_t>(norm.size()) + static_cast<int64_t>(i)) return false;
  return true;
}

// ---- the rewrite builder ----

void RewriteBuilder::infer(ir::Node& n) {
  ir::InferenceResult scratch;
  ir::InferenceResult& r = ctx_.pass.shapes ? const_cast<ir::InferenceResult&>(*ctx_.pass.shapes) : scratch;
  try {
    ir::infer_node(n, ir::opset_map(ctx_.model), r);
  } catch (const std::exception&) {
    // A node inference cannot type yet keeps unknown types; the next infer_shapes reports it.
  }
}

ir::Node* RewriteBuilder::add(const std::string& op_type, const std::vector<ir::Value*>& inputs,
                              std::vector<ir::Attribute> attrs, size_t num_outputs, const std::string& domain) {
  return add_outputs(op_type, inputs, std::move(attrs), std::vector<bool>(num_outputs, true), domain);
}

ir::Node* RewriteBuilder::add_outputs(const std::string& op_type, const std::vector<ir::Value*>& inputs,
                                      std::vector<ir::Attribute> attrs, const std::vector<bool>& present,
                                      const std::string& domain) {
  std::vector<std::string> names;
  std::string base = root_.output(0) ? root_.output(0)->name() : op_type;
  // unique_name knows only names already in the graph, so outputs after the first get an index.
  for (size_t i = 0; i < present.size(); ++i)
    names.push_back(present[i] ? g_.unique_name(base + "_" + op_type + (i ? "_out" + std::to_string(i) : "")) : "");
  ir::Node* n = g_.insert_node_before(&root_, op_type, inputs, names, domain);
  for (ir::Attribute& a : attrs) n->set_attr(std::move(a));
  infer(*n);
  return n;
}

ir::Node* RewriteBuilder::replace(const std::vector<ir::Value*>& replaced, const std::string& op_type,
                                  const std::vector<ir::Value*>& inputs, std::vector<ir::Attribute> attrs,
                                  const std::string& domain) {
  // The new outputs take the replaced values' names: the graph maps a name to the value added
  // last, so graph outputs and dumps keep their names once the old nodes are removed.
  std::vector<std::string> names;
  for (ir::Value* v : replaced) names.push_back(v ? v->name() : "");
  ir::Node* n = g_.insert_node_before(&root_, op_type, inputs, names, domain);
  n->set_name(root_.name());
  for (ir::Attribute& a : attrs) n->set_attr(std::move(a));
  infer(*n);
  for (size_t i = 0; i < replaced.size(); ++i) {
    if (!replaced[i]) continue;
    n->output(i)->set_type(replaced[i]->type());
    replace_all_uses_everywhere(replaced[i], n->output(i));
  }
  return n;
}

void RewriteBuilder::remove(ir::Node* n) {
  g_.remove_node(n);
  if (removed_) removed_->insert(n);
}

ir::Value* RewriteBuilder::constant(ir::Tensor t, const std::string& hint) {
  return g_.add_initializer(g_.unique_name(hint), std::move(t));
}

ir::Value* RewriteBuilder::filled(ir::DType dtype, const std::vector<int64_t>& dims, double v,
                                  const std::string& hint) {
  ir::Tensor t(ir::DType::Float32, dims);
  std::fill(t.mutable_data<float>(), t.mutable_data<float>() + t.numel(), static_cast<float>(v));
  if (dtype != ir::DType::Float32) {
    ir::Tensor c(dtype, dims);
    for (int64_t i = 0; i < t.numel(); ++i) {
      switch (dtype) {
        case ir::DType::Float64: c.mutable_data<double>()[i] = v; break;
        case ir::DType::Float16: c.mutable_data<uint16_t>()[i] = ir::f32_to_f16(static_cast<float>(v)); break;
        case ir::DType::BFloat16: c.mutable_data<uint16_t>()[i] = ir::f32_to_bf16(static_cast<float>(v)); break;
        default: internal_error << "filled(): unsupported dtype " << ir::dtype_name(dtype);
      }
    }
    t = std::move(c);
  }
  return constant(std::move(t), hint);
}

ir::Attribute RewriteBuilder::attr(const std::string& name, int64_t v) {
  ir::Attribute a;
  a.name = name;
  a.kind = ir::Attribute::Kind::Int;
  a.i = v;
  return a;
}
ir::Attribute RewriteBuilder::attr(const std::string& name, float v) {
  ir::Attribute a;
  a.name = name;
  a.kind = ir::Attribute::Kind::Float;
  a.f = v;
  return a;
}
ir::Attribute RewriteBuilder::attr(const std::string& name, std::vector<int64_t> v) {
  ir::Attribute a;
  a.name = name;
  a.kind = ir::Attribute::Kind::Ints;
  a.ints = std::move(v);
  return a;
}
ir::Attribute RewriteBuilder::attr(const std::string& name, std::string v) {
  ir::Attribute a;
  a.name = name;
  a.kind = ir::Attribute::Kind::String;
  a.s = std::move(v);
  return a;
}

// ---- the driver ----

namespace {

std::string where_of(const ir::Graph& g, const ir::Node& n) {
  std::string id = !n.name().empty() ? n.name() : (n.output(0) ? n.output(0)->name() : n.op_type());
  // Subgraphs are named by their graph ("then_branch/..."); the main graph's nodes by name alone.
  return g.parent() ? g.name() + "/" + id : id;
}

struct GraphRun {
  ir::Model& model;
  const std::vector<const FusionRule*>& rules;
  PassContext& ctx;
  RuleSetKind kind;
  std::map<const FusionRule*, std::vector<std::string>> root_ops;  // each rule's Pattern::root_ops()
  FusionContext fctx{model, ctx};
  int64_t opset_wanted = 0;  // a match needed a higher opset: raise it, then run again

  bool fusing() const { return kind == RuleSetKind::kFusion; }

  void note_near_miss(NearMiss nm) {
    if (!ctx.report || !fusing()) return;
    auto& v = ctx.report->near_misses;
    auto it = std::find_if(v.begin(), v.end(), [&](const NearMiss& o) { return o.where == nm.where; });
    if (it == v.end()) v.push_back(std::move(nm));
    else if (nm.matched >= it->matched) *it = std::move(nm);
  }

  void note_fused(FusedEntry e) {
    if (!ctx.report) return;
    if (!fusing()) {
      ctx.report->canonical.push_back(std::move(e));
      return;
    }
    auto& v = ctx.report->near_misses;
    v.erase(std::remove_if(v.begin(), v.end(), [&](const NearMiss& o) { return o.where == e.where; }), v.end());
    ctx.report->fused.push_back(std::move(e));
  }

  // Removes the match's nodes that nothing reads any more; returns how many.
  static int remove_dead(ir::Graph& g, const std::vector<ir::Node*>& nodes, std::set<ir::Node*>& dead) {
    int removed = 0;
    for (bool again = true; again;) {
      again = false;
      for (ir::Node* n : nodes) {
        if (dead.count(n)) continue;
        bool used = false;
        for (ir::Value* o : n->outputs()) used |= o && is_used(*o);
        if (used) continue;
        dead.insert(n);
        g.remove_node(n);
        ++removed;
        again = true;
      }
    }
    return removed;
  }

  // Tries every rule at `n`; returns whether one fired.
  bool at(ir::Graph& g, ir::Node& n, std::set<ir::Node*>& dead) {
    NearMiss best, owed;  // owed: the failure of a rule that must explain this root, at any depth
    for (const FusionRule* rule : rules) {
      // A root of another op type cannot match (and owes no explanation): skip the matcher.
      const std::vector<std::string>& ops = root_ops.at(rule);
      if (!rule->must_explain && !ops.empty() && std::find(ops.begin(), ops.end(), n.op_type()) == ops.end()) continue;
      bool low_opset = false;
      std::any plan;  // the accepted match's, when the rule has an analysis
      auto accept = [&](const Match& m) -> std::string {
        std::vector<const ir::Value*> escape;
        for (const std::string& name : rule->may_escape)
          if (m.has(name)) escape.push_back(m[name]);
        std::string why = rule->allow_shared_interior ? "" : m.interior_use_outside(escape);
        if (why.empty() && rule->check) why = rule->check(m, fctx);
        if (why.empty() && rule->analyse) {
          plan.reset();
          why = rule->analyse(m, fctx, plan);
        }
        if (why.empty() && model.opset("") < rule->opset) {
          low_opset = true;
          why = "needs opset " + std::to_string(rule->opset);
        }
        return why;
      };
      ir::Value* out = n.output(static_cast<size_t>(rule->pattern.output_index()));
      MatchResult r = out ? match(rule->pattern, out, accept) : MatchResult{};
      if (low_opset) opset_wanted = std::max(opset_wanted, rule->opset);
      if (!r) {
        int min = rule->near_miss_min_matched ? rule->near_miss_min_matched : std::max(3, rule->pattern.min_ops() / 2 + 1);
        if (r.matched >= min && r.matched > best.matched)
          best = NearMiss{rule->name, rule->family, where_of(g, n), r.reason, r.matched};
        if (rule->must_explain && rule->must_explain(n) && (owed.rule.empty() || r.matched > owed.matched))
          owed = NearMiss{rule->name, rule->family, where_of(g, n),
                          r.reason.empty() ? "the graph around it is not a form this rule knows" : r.reason,
                          std::max(1, r.matched)};
        continue;
      }
      std::string where = where_of(g, n);
      r.match->set_analysis(std::move(plan));
      RewriteBuilder b(g, n, fctx, &dead);
      rule->rewrite(*r, b);
      remove_dead(g, r->nodes(), dead);
      note_fused(FusedEntry{rule->name, rule->family, r.matched, where});
      return true;
    }
    if (best.matched > 0) note_near_miss(best);
    else if (!owed.rule.empty()) note_near_miss(owed);
    return false;
  }

  bool graph(ir::Graph& g) {
    bool changed = false;
    std::vector<ir::Node*> nodes = g.nodes();
    for (ir::Node* n : nodes)
      for (ir::Graph* sg : n->subgraphs()) changed |= graph(*sg);
    std::set<ir::Node*> dead;
    if (!fusing()) {
      for (ir::Node* n : nodes)
        if (!dead.count(n)) changed |= at(g, *n, dead);
      return changed;
    }
    size_t first = ctx.report ? ctx.report->fused.size() : 0;
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it)
      if (!dead.count(*it)) changed |= at(g, **it, dead);
    // Found from the outputs back; reported in model order.
    if (ctx.report) std::reverse(ctx.report->fused.begin() + static_cast<std::ptrdiff_t>(first), ctx.report->fused.end());
    return changed;
  }
};

}  // namespace

bool run_fusion_rules(ir::Model& m, const std::vector<FusionRule>& rules, PassContext& ctx, RuleSetKind kind) {
  std::vector<const FusionRule*> on;
  for (const FusionRule& r : rules)
    if (!ctx.disabled.count(r.family) && !ctx.disabled.count(r.name)) on.push_back(&r);
  if (on.empty()) return false;
  GraphRun run{m, on, ctx, kind, {}};
  for (const FusionRule* r : on) run.root_ops[r] = r->pattern.root_ops();
  bool changed = run.graph(*m.graph);
  if (run.opset_wanted > m.opset("")) {
    // Raising the opset rewrites other nodes to the new version's forms, so it happens between
    // walks, never during one.
    std::string why = raise_opset(m, run.opset_wanted);
    if (!why.empty()) {
      if (ctx.report)
        for (NearMiss& nm : ctx.report->near_misses)
          if (nm.reason.rfind("needs opset ", 0) == 0) nm.reason += ", and " + why;
      return changed;
    }
    changed = true;
    run.opset_wanted = 0;
    run.graph(*m.graph);
  }
  return changed;
}

namespace {

class RulesPass : public Pass {
 public:
  explicit RulesPass(std::shared_ptr<const std::vector<FusionRule>> rules) : rules_(std::move(rules)) {}
  bool run(ir::Model& m) override {
    PassContext ctx;
    return run(m, ctx);
  }
  bool run(ir::Model& m, PassContext& ctx) override { return run_fusion_rules(m, *rules_, ctx); }

 private:
  std::shared_ptr<const std::vector<FusionRule>> rules_;
};

}  // namespace

std::function<std::unique_ptr<Pass>()> fusion_pass(std::function<std::vector<FusionRule>()> make_rules) {
  auto cache = std::make_shared<std::shared_ptr<const std::vector<FusionRule>>>();
  return [make_rules, cache]() -> std::unique_ptr<Pass> {
    if (!*cache) *cache = std::make_shared<const std::vector<FusionRule>>(make_rules());
    return std::make_unique<RulesPass>(*cache);
  };
}

}  // namespace onnxc::passes
