// keep_ieee_semantics(): wraps each definition value that computes a float in strict_float. Halide's own
// StrictifyFloat lowering step then propagates strictness to every float subexpression, and LLVM
// gets per-instruction fast-math flags, so the non-strict accumulators still contract to FMAs.
//
// A float select inside strict_float is written as a select of bit patterns. Halide 14's simplifier
// leaves every float expression under strict_float alone, selects included, so a select whose
// condition a specialization makes constant (a part that is empty, a one-row decode step) stayed,
// with both of its branches computed and read. A select computes nothing: choosing among the bits
// gives the same value, IEEE or not, and an unsigned select is one the simplifier folds. Once
// Halide's lowering has folded what it could, a custom lowering pass turns the selects that are
// left back into the float selects they were, so LLVM gets the same code as before.
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

// Rewrites each float select as reinterpret(select(c, bits(a), bits(b))), with the same lanes.
class SelectBits : public Halide::Internal::IRMutator {
  using Halide::Internal::IRMutator::visit;
  Expr visit(const Halide::Internal::Select* op) override {
    if (!op->type.is_float()) return Halide::Internal::IRMutator::visit(op);
    Expr c = mutate(op->condition), a = mutate(op->true_value), b = mutate(op->false_value);
    Halide::Type bits = Halide::UInt(op->type.bits(), op->type.lanes());
    return Halide::reinterpret(op->type, Halide::Internal::Select::make(c, Halide::reinterpret(bits, a),
                                                                        Halide::reinterpret(bits, b)));
  }
};

const Call* as_reinterpret(const Expr& e) {
  const Call* c = e.as<Call>();
  return c && c->is_intrinsic(Call::reinterpret) ? c : nullptr;
}

// The inverse of SelectBits, run on the lowered statement: reinterpret(select(c, bits(a), bits(b)))
// becomes select(c, a, b) again, and a bit cast of a bit cast of x becomes x.
class FloatSelects : public Halide::Internal::IRMutator {
  using Halide::Internal::IRMutator::visit;
  Expr visit(const Call* op) override {
    if (!op->is_intrinsic(Call::reinterpret)) return Halide::Internal::IRMutator::visit(op);
    Expr arg = mutate(op->args[0]);
    if (const auto* s = arg.as<Halide::Internal::Select>()) {
      const Call *a = as_reinterpret(s->true_value), *b = as_reinterpret(s->false_value);
      if (a && b && a->args[0].type() == op->type && b->args[0].type() == op->type)
        return Halide::Internal::Select::make(s->condition, a->args[0], b->args[0]);
    }
    if (const Call* inner = as_reinterpret(arg); inner && inner->args[0].type() == op->type) return inner->args[0];
    return arg.same_as(op->args[0]) ? Expr(op) : Halide::reinterpret(op->type, arg);
  }
};

// Wraps the top of each expression it is given (a definition's value or an update's argument)
// that computes a float, whatever its own type: a uint8 quantized value or a bool mask built from
// float arithmetic needs the guard as much as a float output does. Does not recurse.
class WrapStrict : public Halide::Internal::IRMutator {
 public:
  Expr mutate(const Expr& e) override {
    if (!e.defined() || e.as<Halide::Internal::Variable>() || !has_float(e)) return e;
    SelectBits bits;
    if (const Call* c = e.as<Call>(); c && c->is_intrinsic(Call::strict_float)) return bits.mutate(e);
    return Halide::strict_float(bits.mutate(e));
  }
  using Halide::Internal::IRMutator::mutate;
};

}  // namespace

void restore_float_selects(Halide::Pipeline& p) { p.add_custom_lowering_pass(new FloatSelects); }

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
