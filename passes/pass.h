// A pass: one named graph rewrite with a one-line summary, and the table of all passes. The table is
// the single place where a pass is registered; the pass manager, `--help`, `--dump-after` and
// `onnxc inspect` all read it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "passes/pass_context.h"

namespace onnxc::passes {

class Pass {
 public:
  virtual ~Pass() = default;
  // Rewrites the model in place; returns whether anything changed.
  virtual bool run(ir::Model& model) = 0;
  // Same with the pass context (shapes, fusion report, disabled fusions); most passes ignore it.
  virtual bool run(ir::Model& model, PassContext& /*ctx*/) { return run(model); }
};

// A stateless pass made from a function (most passes are one).
class FunctionPass : public Pass {
 public:
  explicit FunctionPass(std::function<bool(ir::Model&)> fn) : fn_(std::move(fn)) {}
  bool run(ir::Model& model) override { return fn_(model); }
  using Pass::run;

 private:
  std::function<bool(ir::Model&)> fn_;
};

// The same for a function that reads the pass context (canonicalize: where its rules report).
class ContextFunctionPass : public Pass {
 public:
  explicit ContextFunctionPass(std::function<bool(ir::Model&, PassContext&)> fn) : fn_(std::move(fn)) {}
  bool run(ir::Model& model) override {
    PassContext ctx;
    return fn_(model, ctx);
  }
  bool run(ir::Model& model, PassContext& ctx) override { return fn_(model, ctx); }

 private:
  std::function<bool(ir::Model&, PassContext&)> fn_;
};

struct PassInfo {
  std::string name;     // the pass's file stem, e.g. "constant_folding": what --dump-after takes
  std::string summary;  // one line for --help and inspect
  std::function<std::unique_ptr<Pass>()> make;
  // The pass reads inferred types or shape values: the manager re-runs shape inference before it
  // when an earlier pass changed the graph.
  bool needs_shapes = false;
};

// Every pass, in the order --help lists them (see registry.cpp).
const std::vector<PassInfo>& pass_registry();
// The entry for `name`, or nullptr.
const PassInfo* find_pass(std::string_view name);

}  // namespace onnxc::passes
