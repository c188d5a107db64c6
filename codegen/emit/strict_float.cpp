// keep_ieee_semantics(): wraps each definition value that computes a float in strict_float. Halide's own
// StrictifyFloat lowering step then propagates strictness to every float subexpression, and LLVM
// gets per-instruction fast-math flags, so the non-strict accumulators still contract to FMAs.
#include "codegen/emit/strict_float.h"

#include <map>

namespace onnxc::codegen {

namespace {

using Halide::Expr;
using Halide::Internal::Call;

// Whether an expression computes a float anywhere inside it (a bool comparison of float sums, an
// integer cast of a float product).
class HasFloat : public Halide::Internal::IRGraphVisitor {
 public:
  bool found = false;
  void include(const Expr& e) override {
    if (found) return;
    if (e.type().is_float()) {
      found = true;
      return;
    }
    Halide::Internal::IRGraphVisitor::include(e);
  }
};

bool has_float(const Expr& e) {
  HasFloat v;
  e.accept(&v);
  return v.found;
}

// Wraps the top of each expression it is given (a definition's value or an update's argument)
// that computes a float, whatever its own type: a uint8 quantized value or a bool mask built from
// float arithmetic needs the guard as much as a float output does. Does not recurse.
class WrapStrict : public Halide::Internal::IRMutator {
 public:
  Expr mutate(const Expr& e) override {
    if (!e.defined() || e.as<Halide::Internal::Variable>() || !has_float(e)) return e;
    if (const Call* c = e.as<Call>(); c && c->is_intrinsic(Call::strict_float)) return e;
    return Halide::strict_float(e);
  }
  using Halide::Internal::IRMutator::mutate;
};

}  // namespace

void keep_ieee_semantics(const std::vector<Halide::Func>& outputs, const std::set<std::string>& reassociable) {
  std::map<std::string, Halide::Internal::Function> env;
  for (const Halide::Func& f : outputs) {
    auto calls = Halide::Internal::find_transitive_calls(f.function());
    env.insert(calls.begin(), calls.end());
  }
  WrapStrict wrap;
  for (auto& [name, fn] : env) {
    if (reassociable.count(name) || !fn.has_pure_definition() || fn.has_extern_definition()) continue;
    // Halide 14 mis-lowers a strict Tuple update: its elements no longer all read the old values
    // (the online softmax's (max, sum, acc) update then rescales by the new max). Tuple-valued
    // Funcs (attention state, arg-reductions) keep their plain definitions; their element
    // expressions are written so that they need no reassociation guard.
    if (fn.outputs() > 1) continue;
    fn.mutate(&wrap);
  }
}

}  // namespace onnxc::codegen
