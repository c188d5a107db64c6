// Fusion rules and the one driver that runs them. A rule is a declarative pattern (pattern.h), a
// check on its captures and a rewrite built from the captures; the driver finds matches over the
// graph and its subgraphs, rejects matches whose interior values escape, records what fired and the
// near misses (with the reason) in a FusionReport that `onnxc inspect --fusions` prints.
//
// Example: GELU with erf as one rule (the real ones are in fuse_gelu.cpp, fuse_layer_norm.cpp, ...).
//
//   using namespace onnxc::passes::pat;
//   Pattern x = any().capture("x");
//   Pattern onep = op("Add", {op("Erf", {op("Div", {x, const_value(1.41421356, 1e-5)})}), const_value(1)});
//   FusionRule gelu{"gelu_erf", "gelu", op("Mul", {op("Mul", {x, onep}), const_value(0.5)}),
//       [](const Match& m, const FusionContext&) -> std::string {        // check: "" or why not
//         return ir::dtype_is_float(m["x"]->dtype()) ? "" : "the input is not floating point";
//       },
//       [](const Match& m, RewriteBuilder& b) {                           // rewrite: from captures
//         b.replace({m.root()}, "Gelu", {m["x"]}, {RewriteBuilder::attr("approximate", std::string("none"))});
//       },
//       /*opset=*/20};
//   run_fusion_rules(model, {gelu}, ctx);  // or: {"fuse_gelu", ..., fusion_pass(gelu_rules)} in registry.cpp
//
// The driver also rejects a match whose interior values are read outside it (fusing would
// recompute them), backtracks into smaller alternatives when a check fails, and raises the model's
// opset (raise_opset) when the rule needs a newer one.
// The rewrite never walks edges: the builder inserts new nodes before the match root, gives the
// nodes that replace values those values' names and types, and the driver removes what is dead.
//
// A rule whose check works out how to rewrite (attention: where Q, K, V, the masks and the scale
// are) is declared with planned_rule: its analysis runs once per match, in the check, and the
// rewrite reads the plan it returned (m.analysis<Plan>()).
//
// The same driver runs canonicalization (canonicalize.h): rules that respell an idiom rather than
// fuse, walked in program order and reported apart from the fusions (FusionReport::canonical).
#pragma once

#include <any>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/infer/infer.h"
#include "passes/pass.h"
#include "passes/pass_context.h"
#include "passes/pattern.h"

namespace onnxc::passes {

// What a check sees: the pass context plus helpers over inferred shapes.
struct FusionContext {
  ir::Model& model;
  const PassContext& pass;
  // The contents of `v` when known: a constant, or inferred shape values.
  std::optional<std::vector<int64_t>> ints(const ir::Value* v) const;
  // The same as dims, symbolic where inference tracked a shape expression (GPT-2's slice bounds).
  std::optional<std::vector<ir::Dim>> dims(const ir::Value* v) const;
  // Whether `axes` (a constant list) names exactly the last axes.size() axes of `x` (rank known).
  bool axes_are_last(const ir::Value* x, const ir::Value* axes) const;
};

class RewriteBuilder;

struct FusionRule {
  std::string name;    // e.g. "layer_norm_decomposed": what the report and --no-fuse name
  std::string family;  // e.g. "layer_norm": what counts and --no-fuse name
  Pattern pattern;     // its root (an op pattern or alternatives of them) is the node replaced
  std::function<std::string(const Match&, const FusionContext&)> check;  // "" = fuse; may be null
  std::function<void(const Match&, RewriteBuilder&)> rewrite;
  int64_t opset = 0;  // the ai.onnx opset the rewrite needs (the model is raised to it, see canonicalize.h)
  // Interior values may be used outside the match (they stay computed); off by default, because then
  // the fusion duplicates work instead of removing it.
  bool allow_shared_interior = false;
  // Failed attempts that matched fewer op nodes are not near misses; 0: half the pattern's
  // smallest form plus one (at least 3).
  int near_miss_min_matched = 0;
  // Captures whose values may be read outside the match because the rewrite replaces them with
  // outputs of the fused node (attention's softmax weights -> Attention's qk_matmul_output).
  std::vector<std::string> may_escape = {};
  // Roots this rule must account for: where no rule fires on such a node and no near miss of the
  // usual depth was found, the rule's failure there is reported whatever its depth, so a user always
  // learns why (attention: a product of softmax weights over a product of two inputs). May be null.
  std::function<bool(const ir::Node&)> must_explain = {};
  // Instead of check: a check that also leaves the plan the rewrite follows in `plan` (see
  // planned_rule); the driver hands the accepted match's plan to the rewrite. May be null.
  std::function<std::string(const Match&, const FusionContext&, std::any& plan)> analyse = {};
};

// A rule whose check is `analyse(match, context, plan)` ("" = fuse, `plan` filled) and whose rewrite
// is `build(match, plan, builder)`: the analysis runs once per match, not again in the rewrite.
template <class Plan>
FusionRule planned_rule(std::string name, std::string family, Pattern pattern,
                        std::string (*analyse)(const Match&, const FusionContext&, Plan&),
                        void (*build)(const Match&, const Plan&, RewriteBuilder&), int64_t opset = 0) {
  FusionRule r{std::move(name), std::move(family), std::move(pattern), nullptr,
               [build](const Match& m, RewriteBuilder& b) { build(m, m.analysis<Plan>(), b); }, opset};
  r.analyse = [analyse](const Match& m, const FusionContext& c, std::any& out) {
    Plan p{};
    std::string why = analyse(m, c, p);
    if (why.empty()) out = std::move(p);
    return why;
  };
  return r;
}

// Builds the replacement of one match. New nodes go just before the match root, so every captured
// value (all defined before the root) can feed them.
class RewriteBuilder {
 public:
  // `removed` (the driver's): where remove() records what it removed; may be null.
  RewriteBuilder(ir::Graph& g, ir::Node& root, const FusionContext& ctx, std::set<ir::Node*>* removed = nullptr)
      : g_(g), root_(root), ctx_(ctx), removed_(removed) {}

  // A node `op_type(inputs)` with attributes and `num_outputs` fresh outputs (types inferred).
  ir::Node* add(const std::string& op_type, const std::vector<ir::Value*>& inputs,
                std::vector<ir::Attribute> attrs = {}, size_t num_outputs = 1, const std::string& domain = "");
  // Same, with output i present only where present[i] (the others omitted, as ONNX writes "").
  ir::Node* add_outputs(const std::string& op_type, const std::vector<ir::Value*>& inputs,
                        std::vector<ir::Attribute> attrs, const std::vector<bool>& present,
                        const std::string& domain = "");
  // A node whose output i takes the name, type and every use of replaced[i] (null: an omitted
  // output). The values replaced are usually the match root's outputs.
  ir::Node* replace(const std::vector<ir::Value*>& replaced, const std::string& op_type,
                    const std::vector<ir::Value*>& inputs, std::vector<ir::Attribute> attrs = {},
                    const std::string& domain = "");
  // A constant (initializer) named after `hint`.
  ir::Value* constant(ir::Tensor t, const std::string& hint = "fused_const");
  // A constant of `dims` filled with v in `dtype` (scale = ones, bias = zeros).
  ir::Value* filled(ir::DType dtype, const std::vector<int64_t>& dims, double v, const std::string& hint);

  static ir::Attribute attr(const std::string& name, int64_t v);
  static ir::Attribute attr(const std::string& name, int v) { return attr(name, static_cast<int64_t>(v)); }
  static ir::Attribute attr(const std::string& name, float v);
  static ir::Attribute attr(const std::string& name, std::vector<int64_t> v);
  static ir::Attribute attr(const std::string& name, std::string v);

  // Removes `n`, which nothing reads any more, at once: for a node outside the match that the rewrite
  // left unread (a chain it rebuilt) and that must not count as a reader in what follows. The
  // driver, which removes the match's own dead nodes afterwards, then skips it.
  void remove(ir::Node* n);

  ir::Node& root() const { return root_; }
  const FusionContext& context() const { return ctx_; }
  ir::Graph& graph() const { return g_; }

 private:
  void infer(ir::Node& n);
  ir::Graph& g_;
  ir::Node& root_;
  const FusionContext& ctx_;
  std::set<ir::Node*>* removed_;
};

// How a rule set runs. Fusions: roots from the outputs backwards (so the largest match around a
// value wins), fired rules in report.fused, near misses in report.near_misses. Canonical rules:
// roots in program order (a later root sees its producers already respelled), fired rules in
// report.canonical, no near misses (a spelling left as it is loses nothing).
enum class RuleSetKind { kFusion, kCanonical };

// Runs `rules` over the model's graph and every subgraph (subgraphs first), each node at most once
// per call; nodes a rewrite adds are not visited in the same call. Rules whose family or name is in
// ctx.disabled are skipped. Returns whether anything changed.
bool run_fusion_rules(ir::Model& m, const std::vector<FusionRule>& rules, PassContext& ctx,
                      RuleSetKind kind = RuleSetKind::kFusion);

// A registry factory for a pass that runs the rules `make_rules` returns (built once).
std::function<std::unique_ptr<Pass>()> fusion_pass(std::function<std::vector<FusionRule>()> make_rules);

}  // namespace onnxc::passes
