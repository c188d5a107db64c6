// The pattern matcher: a backtracking walk over a pattern tree and the graph (see pattern.h).
// Matching is continuation-passing: each step calls `k` with its bindings to match the rest, so a
// failure anywhere later retries the earlier choices (alternatives, input orders).
#include "passes/pattern.h"

#include <algorithm>
#include <cmath>

#include "ir/error.h"
#include "ir/op_registry.h"

namespace onnxc::passes {
namespace pat_detail {

struct ValuePred {
  std::function<bool(const ir::Value&)> pred;
  std::string reason;
};

struct PatternNode {
  enum class Kind { Any, Op, Alt, Optional } kind = Kind::Any;
  std::string op_type, domain;
  std::optional<std::vector<Pattern>> inputs;  // Op: nullopt = unconstrained
  std::optional<Pattern> rest;                 // Op: pattern for inputs after `inputs` (variadic)
  std::vector<Pattern> alternatives;           // Alt
  int output = 0;
  std::optional<bool> commutative;  // nullopt: ask the op table
  std::string capture;
  std::vector<ValuePred> value_preds;
  std::vector<std::function<std::string(const ir::Node&)>> node_checks;
};

}  // namespace pat_detail

using pat_detail::PatternNode;

// ---- building patterns ----

Pattern Pattern::with(const std::function<void(PatternNode&)>& edit) const {
  auto n = std::make_shared<PatternNode>(*p_);
  edit(*n);
  return Pattern(std::move(n));
}

std::vector<std::string> Pattern::root_ops() const {
  if (p_->kind == PatternNode::Kind::Op) return {p_->op_type};
  if (p_->kind != PatternNode::Kind::Alt) return {};
  std::vector<std::string> ops;
  for (const Pattern& a : p_->alternatives) {
    std::vector<std::string> more = a.root_ops();
    if (more.empty()) return {};
    ops.insert(ops.end(), more.begin(), more.end());
  }
  return ops;
}

Pattern Pattern::capture(std::string name) const {
  return with([&](PatternNode& n) { n.capture = std::move(name); });
}
Pattern Pattern::where(std::function<bool(const ir::Value&)> pred, std::string reason) const {
  return with([&](PatternNode& n) { n.value_preds.push_back({std::move(pred), std::move(reason)}); });
}
Pattern Pattern::one_use() const {
  return where([](const ir::Value& v) { return v.uses().size() == 1 && !v.is_graph_output(); },
               "has more than one use");
}
Pattern Pattern::constant() const {
  return where([](const ir::Value& v) { return v.is_constant(); }, "is not a constant");
}
Pattern Pattern::scalar() const {
  return where(
      [](const ir::Value& v) {
        if (v.is_constant()) return v.constant().numel() == 1;
        if (!v.shape()) return false;
        for (const ir::Dim& d : *v.shape())
          if (d != ir::Dim(1)) return false;
        return true;
      },
      "is not a scalar");
}
Pattern Pattern::where_node(std::function<std::string(const ir::Node&)> check) const {
  return with([&](PatternNode& n) { n.node_checks.push_back(std::move(check)); });
}
Pattern Pattern::attr(const std::string& name, int64_t v, std::optional<int64_t> def) const {
  return where_node([=](const ir::Node& n) -> std::string {
    const ir::Attribute* a = n.attr(name);
    std::optional<int64_t> got = a && a->kind == ir::Attribute::Kind::Int ? std::optional(a->i) : (a ? std::nullopt : def);
    if (got == v) return "";
    return "attribute " + name + " is " + (got ? std::to_string(*got) : std::string("absent")) + ", not " +
           std::to_string(v);
  });
}
Pattern Pattern::attr_float(const std::string& name, float v, std::optional<float> def) const {
  return where_node([=](const ir::Node& n) -> std::string {
    std::optional<float> got = n.has_attr(name) ? std::optional(n.attr_float(name, 0)) : def;
    if (got == v) return "";
    return "attribute " + name + " is " + (got ? std::to_string(*got) : std::string("absent")) + ", not " +
           std::to_string(v);
  });
}
Pattern Pattern::commutative(bool on) const {
  return with([&](PatternNode& n) { n.commutative = on; });
}
Pattern Pattern::output(int index) const {
  return with([&](PatternNode& n) { n.output = index; });
}
Pattern Pattern::domain(std::string d) const {
  return with([&](PatternNode& n) { n.domain = std::move(d); });
}
int Pattern::output_index() const { return p_->output; }

namespace {
int fewest_ops(const PatternNode& n) {
  switch (n.kind) {
    case PatternNode::Kind::Any: return 0;
    case PatternNode::Kind::Optional: return 0;
    case PatternNode::Kind::Alt: {
      int best = -1;
      for (const Pattern& a : n.alternatives) best = best < 0 ? a.min_ops() : std::min(best, a.min_ops());
      return std::max(best, 0);
    }
    case PatternNode::Kind::Op: {
      int total = 1;
      if (n.inputs)
        for (const Pattern& in : *n.inputs) total += in.min_ops();
      return total;
    }
  }
  return 0;
}
}  // namespace

Pattern::Pattern(std::shared_ptr<const PatternNode> p) : p_(std::move(p)), min_ops_(fewest_ops(*p_)) {}

Pattern Pattern::variadic(Pattern rest) const {
  return with([&](PatternNode& n) { n.rest = std::move(rest); });
}

namespace {
std::string ints_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}
}  // namespace

Pattern Pattern::attr_ints(const std::string& name, std::vector<int64_t> v,
                           std::optional<std::vector<int64_t>> def) const {
  return where_node([=](const ir::Node& n) -> std::string {
    std::optional<std::vector<int64_t>> got = n.has_attr(name) ? std::optional(n.attr_ints(name)) : def;
    if (got == v) return "";
    return "attribute " + name + " is " + (got ? ints_str(*got) : std::string("absent")) + ", not " + ints_str(v);
  });
}
Pattern Pattern::attr_ints_where(const std::string& name, std::function<bool(const std::vector<int64_t>&)> pred,
                                 std::string reason) const {
  return where_node([=](const ir::Node& n) -> std::string {
    std::vector<int64_t> got = n.attr_ints(name);
    return pred(got) ? "" : "attribute " + name + " " + ints_str(got) + " " + reason;
  });
}

Pattern any() { return Pattern(std::make_shared<PatternNode>()); }

Pattern op(std::string op_type) {
  auto n = std::make_shared<PatternNode>();
  n->kind = PatternNode::Kind::Op;
  n->op_type = std::move(op_type);
  return Pattern(std::move(n));
}

Pattern op(std::string op_type, std::vector<Pattern> inputs) {
  auto n = std::make_shared<PatternNode>();
  n->kind = PatternNode::Kind::Op;
  n->op_type = std::move(op_type);
  n->inputs = std::move(inputs);
  return Pattern(std::move(n));
}

Pattern alt(std::vector<Pattern> alternatives) {
  auto n = std::make_shared<PatternNode>();
  n->kind = PatternNode::Kind::Alt;
  n->alternatives = std::move(alternatives);
  return Pattern(std::move(n));
}

Pattern const_value(double v, double tol) {
  return any().constant().where(
      [=](const ir::Value& x) {
        const ir::Tensor& t = x.constant();
        if (t.numel() != 1 || t.dtype() == ir::DType::String || t.empty_data()) return false;
        double got = t.get_f64(0);
        return got == v || std::fabs(got - v) <= tol;
      },
      "is not the constant " + std::to_string(v));
}

Pattern optional_op(const std::string& op_type, const Pattern& x) { return alt({op(op_type, {x}), x}); }

Pattern optional(Pattern p) {
  auto n = std::make_shared<PatternNode>();
  n->kind = PatternNode::Kind::Optional;
  n->alternatives = {std::move(p)};
  return Pattern(std::move(n));
}

Pattern const_tensor(std::function<bool(const ir::Tensor&)> pred, std::string reason) {
  return any().constant().where([pred](const ir::Value& v) { return pred(v.constant()); }, std::move(reason));
}

Pattern const_all(double v, double tol) {
  return const_tensor(
      [=](const ir::Tensor& t) {
        if (t.dtype() == ir::DType::String || t.dtype() == ir::DType::Undefined || (t.empty_data() && t.numel() > 0))
          return false;
        for (int64_t i = 0; i < t.numel(); ++i) {
          double got = t.get_f64(i);
          if (!(got == v || std::fabs(got - v) <= tol)) return false;
        }
        return true;
      },
      "is not all " + std::to_string(v));
}

// ---- matching ----

ir::Value* Match::value(const std::string& name) const {
  auto it = values_.find(name);
  internal_check(it != values_.end()) << "pattern has no capture '" << name << "'";
  return it->second;
}

ir::Node* Match::node(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : it->second;
}

std::string Match::interior_use_outside(const std::vector<const ir::Value*>& may_escape) const {
  auto inside = [&](const ir::Node* n) {
    return std::find(all_nodes_.begin(), all_nodes_.end(), n) != all_nodes_.end();
  };
  for (size_t i = 1; i < all_nodes_.size(); ++i)
    for (const ir::Value* o : all_nodes_[i]->outputs()) {
      if (!o || std::find(may_escape.begin(), may_escape.end(), o) != may_escape.end()) continue;
      if (o->is_graph_output()) return "'" + o->name() + "' (inside the match) is a graph output";
      for (const ir::Use& u : o->uses())
        if (!inside(u.node))
          return "'" + o->name() + "' (inside the match) is also used by " + u.node->describe();
    }
  return "";
}

struct MatchEngine {
  using Cont = std::function<bool(Match&)>;
  // The failure that got furthest (most pattern nodes matched before it).
  int best_progress = -1;
  int rejected_full = -1;  // best_progress when the best attempt was a full match `accept` rejected
  std::string best_reason;

  bool fail(const std::string& path, const std::string& what, const Match& m) {
    int progress = static_cast<int>(m.all_nodes_.size());
    if (progress > best_progress) {
      best_progress = progress;
      best_reason = (path.empty() ? "" : path + ": ") + what;
    }
    return false;
  }

  static bool is_commutative(const PatternNode& p, const ir::Node& n) {
    if (p.commutative) return *p.commutative && n.num_inputs() == 2;
    const ir::OpInfo* info = ir::find_op(n.domain(), n.op_type(), ir::OpInfo::kLatest);
    return info && info->has(ir::kCommutative) && n.num_inputs() == 2;
  }

  static size_t used_inputs(const ir::Node& n) {
    size_t k = n.num_inputs();
    while (k > 0 && !n.input(k - 1)) --k;
    return k;
  }

  bool value(const Pattern& pat, ir::Value* v, Match m, const std::string& path, const Cont& k) {
    const PatternNode& p = pat.node();
    if (p.kind == PatternNode::Kind::Optional) return v ? value(p.alternatives[0], v, m, path, k) : k(m);
    if (!v) return fail(path, "input is omitted", m);
    for (const auto& vp : p.value_preds)
      if (!vp.pred(*v)) return fail(path, "'" + v->name() + "' " + vp.reason, m);
    if (!p.capture.empty()) {
      auto it = m.values_.find(p.capture);
      if (it != m.values_.end() && it->second != v)
        return fail(path, "capture '" + p.capture + "' would bind both '" + it->second->name() + "' and '" +
                              v->name() + "'", m);
      m.values_[p.capture] = v;
    }
    switch (p.kind) {
      case PatternNode::Kind::Any: return k(m);
      case PatternNode::Kind::Alt:
        for (const Pattern& a : p.alternatives)
          if (value(a, v, m, path, k)) return true;
        return false;
      case PatternNode::Kind::Op: return op_node(p, v, m, path, k);
      case PatternNode::Kind::Optional: break;  // handled above
    }
    return false;
  }

  bool op_node(const PatternNode& p, ir::Value* v, Match& m, const std::string& path, const Cont& k) {
    ir::Node* n = v->producer();
    std::string here = path.empty() ? p.op_type : path + "." + p.op_type;
    if (!n) return fail(path, "expected " + p.op_type + ", found " + (v->is_constant() ? "constant" : "graph input") + " '" + v->name() + "'", m);
    auto norm = [](const std::string& d) { return d == "ai.onnx" ? std::string() : d; };
    if (n->op_type() != p.op_type || norm(n->domain()) != norm(p.domain))
      return fail(path, "expected " + p.op_type + ", found " + n->describe(), m);
    if (v->producer_output() != p.output)
      return fail(path, "expected output " + std::to_string(p.output) + " of " + n->describe(), m);
    for (const auto& check : p.node_checks) {
      std::string why = check(*n);
      if (!why.empty()) return fail(here, why, m);
    }
    if (!p.capture.empty()) m.nodes_[p.capture] = n;
    if (std::find(m.all_nodes_.begin(), m.all_nodes_.end(), n) == m.all_nodes_.end()) m.all_nodes_.push_back(n);
    if (!p.inputs) return k(m);
    std::vector<Pattern> ins = *p.inputs;
    size_t used = used_inputs(*n), required = ins.size();
    while (required > 0 && ins[required - 1].node().kind == PatternNode::Kind::Optional) --required;
    if (p.rest)
      while (ins.size() < used) ins.push_back(*p.rest);
    if (used < required || used > ins.size()) {
      std::string want = required == ins.size() ? std::to_string(required)
                                                : std::to_string(required) + " to " + std::to_string(ins.size());
      return fail(here, "expected " + want + " inputs, found " + std::to_string(used), m);
    }
    std::vector<size_t> order(ins.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (inputs(ins, pairs(ins, order), *n, 0, m, here, k)) return true;
    if (ins.size() == 2 && is_commutative(p, *n)) return inputs(ins, pairs(ins, {1, 0}), *n, 0, m, here, k);
    return false;
  }

  // (pattern input, node input) pairs, leaves (constants, captures) before op subtrees: a wrong
  // constant then fails before a deep subtree is walked, and near misses rank by what mattered.
  static std::vector<std::pair<size_t, size_t>> pairs(const std::vector<Pattern>& ins, const std::vector<size_t>& order) {
    std::vector<std::pair<size_t, size_t>> r;
    for (size_t i = 0; i < ins.size(); ++i) r.emplace_back(i, order[i]);
    std::stable_sort(r.begin(), r.end(), [&](const auto& a, const auto& b) {
      return (ins[a.first].min_ops() > 0) < (ins[b.first].min_ops() > 0);
    });
    return r;
  }

  // Matches pattern input pr[i].first against node input pr[i].second, then the rest, then `k`.
  bool inputs(const std::vector<Pattern>& ins, const std::vector<std::pair<size_t, size_t>>& pr, ir::Node& n, size_t i,
              Match& m, const std::string& here, const Cont& k) {
    if (i == pr.size()) return k(m);
    return value(ins[pr[i].first], n.input(pr[i].second), m, here + ".in" + std::to_string(pr[i].second),
                 [&](Match& m2) { return inputs(ins, pr, n, i + 1, m2, here, k); });
  }

  MatchResult run(const Pattern& p, ir::Value* v, const std::function<std::string(const Match&)>& accept) {
    MatchEngine& e = *this;
    MatchResult r;
    bool ok = e.value(p, v, Match{}, "", [&](Match& m) {
      m.root_ = v;
      if (accept) {
        std::string why = accept(m);
        // A rejected full match counts as the furthest attempt (every node matched).
        if (!why.empty()) {
          int progress = static_cast<int>(m.all_nodes_.size()) + 1;  // beats partial attempts
          if (progress > e.best_progress) {
            e.best_progress = e.rejected_full = progress;
            e.best_reason = why;
          }
          return false;
        }
      }
      r.match = m;
      return true;
    });
    if (ok) {
      r.matched = static_cast<int>(r.match->all_nodes_.size());
    } else {
      r.reason = e.best_reason.empty() ? "no match" : e.best_reason;
      r.matched = std::max(e.best_progress, 0);
      if (e.best_progress > 0 && e.rejected_full == e.best_progress) --r.matched;
    }
    return r;
  }
};

void Match::missing_analysis() {
  throw InternalError("a rewrite read a match analysis its rule did not make (passes/fusion.h, planned_rule)");
}

MatchResult match(const Pattern& p, ir::Value* v, const std::function<std::string(const Match&)>& accept) {
  return MatchEngine{}.run(p, v, accept);
}

MatchResult match(const Pattern& p, ir::Value* v) { return match(p, v, nullptr); }

MatchResult match(const Pattern& p, ir::Node& n) {
  ir::Value* v = n.output(static_cast<size_t>(p.node().output));
  if (!v) return MatchResult{std::nullopt, n.describe() + " has no output " + std::to_string(p.node().output)};
  return match(p, v);
}

}  // namespace onnxc::passes
