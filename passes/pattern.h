// Declarative patterns over the IR: a tree of op matchers with named captures, alternatives,
// either-order matching of commutative ops and predicates. A fusion is a pattern, a check on the
// captures and a rewrite built from the captures; a failed match says why, so
// `onnxc inspect --fusions` can report near misses.
//
// Example: GELU written out with erf, 0.5 * x * (1 + erf(x / sqrt(2))), in any operand order:
//
//   using namespace onnxc::passes::pat;
//   Pattern x = any().capture("x");
//   Pattern erf = op("Erf", {op("Div", {x, const_value(1.41421356, 1e-5)})});
//   Pattern one_plus = op("Add", {erf, const_value(1.0)}).one_use();
//   Pattern gelu = alt({op("Mul", {op("Mul", {x, one_plus}), const_value(0.5)}),
//                       op("Mul", {x, op("Mul", {one_plus, const_value(0.5)})})})
//                      .capture("out");
//   if (MatchResult r = match(gelu, node.output(0)))
//     rewrite(r->value("x"), r->value("out"));   // Add and Mul match either way round
//   else
//     report(r.reason);  // e.g. "Mul.in0.Mul.in1.Add.in0: expected Erf, found Tanh node 'n'"
//
// Semantics:
//  - op(type, {inputs...}) matches a value produced by a `type` node (domain "" unless .domain())
//    as its output 0 (or .output(i)); the node must have exactly that many inputs (trailing
//    omitted optional inputs do not count). op(type) leaves the inputs unconstrained.
//  - Ops the op table marks commutative (Add, Mul, Max, Equal, ...) try both input orders;
//    .commutative(false) turns that off, .commutative() turns it on for any two-input op.
//  - A capture name used twice must bind the same value (x - mean(x) shares x); Match::node(name)
//    gives the producer of a captured op value.
//  - alt({...}) tries the alternatives in order; matching backtracks fully, so a later failure
//    retries earlier choices (an alternative, an input order).
//  - Predicates: one_use() (one use, not a graph output), constant() (an initializer or folded
//    constant; Constant nodes are folded first), scalar() (one element by its static shape),
//    where(pred, reason) on the value, where_node(check) on the matched node (check returns ""
//    when fine, else the reason), attr(name, value) on the node.
//  - Inputs: optional(p) matches an omitted input or p (LayerNormalization's bias); .variadic(p)
//    lets an op pattern take any number of further inputs, each matching p (Concat, Sum).
//  - Attribute and constant predicates: attr_ints(name, {..}) on a list attribute,
//    attr_ints_where(name, pred, reason), const_tensor(pred, reason) and const_all(v) on data.
//  - Failure reasons are "<path>: <what>", where path names the ops and input slots walked from
//    the root ("Add.in1.Mul.in0"). Of all the attempts, the one that got furthest is reported, with
//    the number of op nodes it matched (MatchResult::matched) to rank near misses.
//  - Match::nodes() lists every op node the match covers (root first); interior_use_outside()
//    says whether a value computed inside the match is read outside it, which one_use() cannot
//    say for values that are legitimately used twice inside (LayerNorm's x - mean).
//
// Fusion rules (a pattern, a check and a rewrite run by one driver) are in passes/fusion.h.
#pragma once

#include <any>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace onnxc::passes {

namespace pat_detail {
struct PatternNode;
}

class Pattern {
 public:
  // Modifiers return a new pattern; patterns are immutable values, cheap to copy and share.
  Pattern capture(std::string name) const;
  Pattern one_use() const;
  Pattern constant() const;
  Pattern scalar() const;
  // `pred` must hold for the value; `reason` is reported when it does not ("mask is not bool").
  Pattern where(std::function<bool(const ir::Value&)> pred, std::string reason) const;
  // For op patterns: `check` returns "" if the node is fine, else why not.
  Pattern where_node(std::function<std::string(const ir::Node&)> check) const;
  // For op patterns: an int/float attribute equals `v` (`def`: its value when absent).
  Pattern attr(const std::string& name, int64_t v, std::optional<int64_t> def = std::nullopt) const;
  Pattern attr_float(const std::string& name, float v, std::optional<float> def = std::nullopt) const;
  Pattern commutative(bool on = true) const;
  Pattern output(int index) const;
  Pattern domain(std::string d) const;
  // For op patterns: a list attribute equals `v` (`def`: its value when absent).
  Pattern attr_ints(const std::string& name, std::vector<int64_t> v,
                    std::optional<std::vector<int64_t>> def = std::nullopt) const;
  // For op patterns: `pred` holds for a list attribute (absent = empty list).
  Pattern attr_ints_where(const std::string& name, std::function<bool(const std::vector<int64_t>&)> pred,
                          std::string reason) const;
  // For op patterns: inputs after the listed ones are allowed, each must match `rest`.
  Pattern variadic(Pattern rest) const;

  const pat_detail::PatternNode& node() const { return *p_; }
  int output_index() const;  // the node output an op pattern matches (0 unless .output(i))
  int min_ops() const { return min_ops_; }  // the fewest op nodes a match of this pattern covers
  // The op types a value matching this pattern can be produced by (an op pattern's, or every
  // alternative's); empty when any value may match (any(), an alternative that is not an op).
  std::vector<std::string> root_ops() const;

 private:
  friend Pattern any();
  friend Pattern op(std::string);
  friend Pattern op(std::string, std::vector<Pattern>);
  friend Pattern alt(std::vector<Pattern>);
  friend Pattern optional(Pattern);
  explicit Pattern(std::shared_ptr<const pat_detail::PatternNode> p);
  Pattern with(const std::function<void(pat_detail::PatternNode&)>& edit) const;
  std::shared_ptr<const pat_detail::PatternNode> p_;
  // Computed once from the children's when the node is built: the matcher orders inputs by it on
  // every attempt, and recomputing it there walked whole subtrees per comparison.
  int min_ops_ = 0;
};

// Any value (not an omitted optional input).
Pattern any();
// A value produced by an op with exactly these inputs.
Pattern op(std::string op_type, std::vector<Pattern> inputs);
// A value produced by an op, whatever its inputs.
Pattern op(std::string op_type);
// The first alternative that leads to a full match.
Pattern alt(std::vector<Pattern> alternatives);
// A one-element constant of any numeric dtype equal to v (within tol).
Pattern const_value(double v, double tol = 0);
// `op_type(x)` or `x` itself: for exporter noise such as an optional Cast or Identity.
Pattern optional_op(const std::string& op_type, const Pattern& x);
// As an op input: the input may be omitted (ONNX ""), else it must match `p`. A capture on `p`
// is then absent from the match (Match::has).
Pattern optional(Pattern p);
// A constant whose tensor satisfies `pred`.
Pattern const_tensor(std::function<bool(const ir::Tensor&)> pred, std::string reason);
// A constant (any shape, any numeric dtype) whose every element equals v within tol.
Pattern const_all(double v, double tol = 0);

class Match {
 public:
  // The captured value; InternalError if the pattern has no such capture (a bug in the pass).
  ir::Value* value(const std::string& name) const;
  ir::Value* operator[](const std::string& name) const { return value(name); }
  // The node producing a captured op value; nullptr for values captured on any()/constants.
  ir::Node* node(const std::string& name) const;
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  const std::map<std::string, ir::Value*>& values() const { return values_; }
  // The value the match started from (the pattern's root).
  ir::Value* root() const { return root_; }
  // Every op node the match covers, root first, each once.
  const std::vector<ir::Node*>& nodes() const { return all_nodes_; }
  // "" if every value computed by a non-root node of the match is read only by nodes of the match
  // (so replacing the root makes them all dead); else which value escapes and to where. Values in
  // `may_escape` are exempt: the rewrite replaces them with outputs of the fused node.
  std::string interior_use_outside(const std::vector<const ir::Value*>& may_escape = {}) const;
  // What a rule's analysis worked out for this match (fusion.h, planned_rule): set by the driver once
  // the match is accepted, read by the rewrite. InternalError when absent or of another type.
  template <class Plan>
  const Plan& analysis() const {
    const Plan* p = std::any_cast<Plan>(&analysis_);
    if (!p) missing_analysis();
    return *p;
  }
  void set_analysis(std::any a) { analysis_ = std::move(a); }

 private:
  friend struct MatchEngine;
  [[noreturn]] static void missing_analysis();
  std::any analysis_;
  std::map<std::string, ir::Value*> values_;
  std::map<std::string, ir::Node*> nodes_;
  std::vector<ir::Node*> all_nodes_;
  ir::Value* root_ = nullptr;
};

struct MatchResult {
  std::optional<Match> match;
  std::string reason;  // why there is no match ("" on success)
  int matched = 0;     // op nodes matched: all of them on success, by the furthest attempt on failure

  explicit operator bool() const { return match.has_value(); }
  const Match& operator*() const { return *match; }
  const Match* operator->() const { return &*match; }
};

// Matches `p` against the value `v` (the pattern's root).
MatchResult match(const Pattern& p, ir::Value* v);
// Same, but a full match counts only when `accept` returns "" for it; otherwise matching goes on
// with the remaining choices, and the reason is reported if nothing else gets as far.
MatchResult match(const Pattern& p, ir::Value* v, const std::function<std::string(const Match&)>& accept);
// Matches `p` against output `p.output()` (default 0) of node `n`.
MatchResult match(const Pattern& p, ir::Node& n);

namespace pat {
using passes::alt;
using passes::any;
using passes::const_all;
using passes::const_tensor;
using passes::const_value;
using passes::match;
using passes::Match;
using passes::MatchResult;
using passes::op;
using passes::optional;
using passes::optional_op;
using passes::Pattern;
}  // namespace pat

}  // namespace onnxc::passes
