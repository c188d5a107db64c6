// Compile-time sequences and optionals (see resolve_sequences.h). One walk in topological order
// records, for each sequence or optional value, the tensors it holds when they are known (`Known`);
// the readers of a known value are then rewritten into plain tensor ops:
//
//   s1 = SequenceConstruct(X, Y, Z)          s = SplitToSequence(X) {axis 0, keepdims 0}   X: [2,3,4]
//   s2 = SequenceErase(s1, pos=0)     ==>    y = SequenceAt(s, 1)
//   y  = SequenceAt(s2, 1)                   ==>  a, b = Split(X, [1,1]); y = Squeeze(b, [0])
//   ==>  y = Identity(Z)
#include "passes/resolve_sequences.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

// What a sequence or optional value holds, as far as the compiler knows: its elements (an optional
// has zero or one), or only how many there are. A SplitToSequence's parts are built (`make`) only
// when a reader is rewritten, so a sequence nobody resolves leaves no dead Split behind that the
// next round of the fixpoint would build again.
struct Known {
  std::optional<std::vector<ir::Value*>> elems;
  std::optional<int64_t> count;
  std::function<std::vector<ir::Value*>()> make;
  static std::shared_ptr<Known> of(std::vector<ir::Value*> e) {
    auto k = std::make_shared<Known>();
    k->count = static_cast<int64_t>(e.size());
    k->elems = std::move(e);
    return k;
  }
};

bool is(const ir::Node& n, const char* op) { return n.domain().empty() && n.op_type() == op; }

// A constant scalar (or one-element) integer input, or nullopt.
std::optional<int64_t> const_int(const ir::Value* v) {
  if (!v || !v->is_constant() || v->constant().numel() != 1) return std::nullopt;
  if (v->dtype() != ir::DType::Int64 && v->dtype() != ir::DType::Int32) return std::nullopt;
  return v->constant().get_i64(0);
}

class Resolver {
 public:
  explicit Resolver(int64_t opset) : opset_(opset) {}

  bool run(ir::Graph& g) {
    bool changed = false;
    for (ir::Node* n : g.nodes()) {
      if (!is(*n, "SequenceMap"))
        for (ir::Graph* sg : n->subgraphs()) changed |= run(*sg);
      changed |= visit(*n);
    }
    return changed;
  }

 private:
  int64_t opset_;
  // Shared, so an Identity's result and its input build a pending Split once.
  std::map<const ir::Value*, std::shared_ptr<Known>> known_;

  Known* known(const ir::Value* v) {
    auto it = v ? known_.find(v) : known_.end();
    return it == known_.end() ? nullptr : it->second.get();
  }
  // The elements of `v` when known (building a pending Split's parts first).
  const std::vector<ir::Value*>* elems(const ir::Value* v) {
    Known* k = known(v);
    if (k && !k->elems && k->make) k->elems = std::exchange(k->make, nullptr)();
    return k && k->elems ? &*k->elems : nullptr;
  }

  // An index into `n` elements from an optional position input (ONNX's default when absent), or
  // nullopt when it is not a constant or out of range (inference reports the latter).
  static std::optional<size_t> position(const ir::Value* pos, size_t n, bool insert) {
    int64_t limit = static_cast<int64_t>(insert ? n : n - 1);
    std::optional<int64_t> p = pos ? const_int(pos) : std::optional<int64_t>(limit);
    if (!p) return std::nullopt;
    int64_t k = *p < 0 ? *p + static_cast<int64_t>(n) : *p;
    if (k < 0 || k > limit) return std::nullopt;
    return static_cast<size_t>(k);
  }

  // Readers of `out` read `v` instead; `out` keeps its name on an Identity (it may be a graph output).
  static void forward(ir::Node& n, ir::Value* out, ir::Value* v) {
    ir::Node* id = n.graph()->insert_node_before(&n, "Identity", {v}, {out->name()});
    replace_all_uses_everywhere(out, id->output(0));
  }

  // Forwards output 0 of `n` to `v` and removes `n`.
  static bool forward_and_remove(ir::Node& n, ir::Value* v) {
    forward(n, n.output(0), v);
    n.graph()->remove_node(&n);
    return true;
  }

  ir::Value* constant(ir::Graph& g, const std::string& hint, ir::Tensor t) {
    return g.add_initializer(g.unique_name(hint), std::move(t));
  }

  // Op(x) with `axes` as an attribute before opset 13 and as an input from 13 on (Squeeze, Unsqueeze,
  // and Split's `split`).
  ir::Node* with_ints(ir::Node& pos, const char* op, const char* attr, ir::Value* x, const std::vector<int64_t>& v,
                      const std::vector<std::string>& names) {
    ir::Graph& g = *pos.graph();
    if (opset_ < 13) {
      ir::Node* m = g.insert_node_before(&pos, op, {x}, names);
      m->set_attr_ints(attr, v);
      return m;
    }
    ir::Value* c = constant(g, names[0] + "_" + attr, i64_tensor(v));
    return g.insert_node_before(&pos, op, {x, c}, names);
  }

  bool visit(ir::Node& n) {
    if (!n.domain().empty()) return false;
    const std::string& op = n.op_type();
    ir::Value* out = n.output(0);
    if (op == "SequenceEmpty") known_[out] = Known::of({});
    if (op == "SequenceConstruct" || op == "Optional") {
      std::vector<ir::Value*> in;
      for (ir::Value* v : n.inputs())
        if (v) in.push_back(v);
      known_[out] = Known::of(in);
    }
    if (op == "Identity" && known(n.input(0))) known_[out] = known_.at(n.input(0));
    if (op == "SequenceInsert" || op == "SequenceErase") return edit(n, op == "SequenceInsert");
    if (op == "SequenceAt" || op == "OptionalGetElement") return element(n, op == "SequenceAt");
    if (op == "SequenceLength" || op == "OptionalHasElement") return count(n, op == "SequenceLength");
    if (op == "SplitToSequence") return split(n);
    if (op == "ConcatFromSequence") return concat(n);
    if (op == "SequenceMap") return map(n);
    return false;
  }

  // SequenceInsert/Erase of a known sequence at a known position: a known sequence (nothing to
  // rewrite yet; its readers are).
  bool edit(ir::Node& n, bool insert) {
    const std::vector<ir::Value*>* in = elems(n.input(0));
    if (!in || (!insert && in->empty())) return false;
    std::optional<size_t> at = position(n.input(insert ? 2 : 1), in->size(), insert);
    if (!at) return false;
    std::vector<ir::Value*> e = *in;
    if (insert) e.insert(e.begin() + static_cast<int64_t>(*at), n.input(1));
    else e.erase(e.begin() + static_cast<int64_t>(*at));
    known_[n.output(0)] = Known::of(e);
    return false;
  }

  // SequenceAt / OptionalGetElement of a known value: the element. OptionalGetElement of a tensor
  // (opset 18 allows it) is that tensor. An empty optional is left for the run-time error.
  bool element(ir::Node& n, bool seq_at) {
    ir::Value* in = n.input(0);
    if (!seq_at && in && in->type().is_tensor()) return forward_and_remove(n, in);
    const std::vector<ir::Value*>* e = elems(in);
    if (!e || e->empty()) return false;
    std::optional<size_t> at = seq_at ? position(n.input(1), e->size(), false) : std::optional<size_t>(0);
    return at && forward_and_remove(n, (*e)[*at]);
  }

  // SequenceLength / OptionalHasElement of a value whose count is known: a constant; OptionalHasElement
  // of no input at all is false.
  bool count(ir::Node& n, bool length) {
    if (!length && (n.num_inputs() == 0 || !n.input(0))) {  // no input (opset 18): an empty optional
      replace_with_constant(n.output(0), ir::Tensor::scalar<uint8_t>(ir::DType::Bool, 0));
      return true;
    }
    const Known* k = known(n.input(0));
    if (!k || !k->count) return false;
    if (length) replace_with_constant(n.output(0), i64_scalar(*k->count));
    else replace_with_constant(n.output(0), ir::Tensor::scalar<uint8_t>(ir::DType::Bool, *k->count > 0));
    return true;
  }

  // SplitToSequence with known part sizes: a Split (then a Squeeze per part for keepdims=0 without
  // `split`). A run-time 1-D split of static length fixes the count alone.
  bool split(ir::Node& n) {
    ir::Value *x = n.input(0), *sizes = n.input(1), *out = n.output(0);
    if (!x->shape()) return false;
    const ir::Shape& xs = *x->shape();
    int64_t rank = static_cast<int64_t>(xs.size()), axis = n.attr_int("axis", 0);
    if (axis < -rank || axis >= rank) return false;
    if (axis < 0) axis += rank;
    std::vector<int64_t> parts;
    std::optional<int64_t> dim = xs[static_cast<size_t>(axis)].as_const();
    if (sizes && sizes->shape() && sizes->shape()->size() == 1 && !sizes->is_constant()) {
      std::optional<int64_t> c = (*sizes->shape())[0].as_const();
      if (c) {
        known_[out] = std::make_shared<Known>();
        known_[out]->count = *c;
      }
      return false;
    }
    if (sizes && sizes->is_constant() && sizes->constant().rank() == 1) {
      int64_t total = 0;
      for (int64_t i = 0; i < sizes->constant().numel(); ++i) {
        parts.push_back(sizes->constant().get_i64(i));
        if (parts.back() < 0) return false;  // an invalid model: inference and codegen refuse it
        total += parts.back();
      }
      if (dim && total != *dim) return false;
    } else if (dim) {
      std::optional<int64_t> step = sizes ? const_int(sizes) : std::optional<int64_t>(1);
      if (!step || *step <= 0) return false;
      for (int64_t left = *dim; left > 0; left -= *step) parts.push_back(std::min(left, *step));
    } else {
      return false;
    }
    auto k = known_[out] = std::make_shared<Known>();
    k->count = static_cast<int64_t>(parts.size());
    if (parts.empty()) k->elems.emplace();
    else k->make = [this, &n, x, sizes, parts, axis] { return split_parts(n, x, parts, axis, !sizes); };
    return false;
  }

  std::vector<ir::Value*> split_parts(ir::Node& n, ir::Value* x, const std::vector<int64_t>& parts, int64_t axis,
                                      bool may_squeeze) {
    ir::Graph& g = *n.graph();
    std::vector<std::string> names;
    const std::string& base = n.output(0)->name();
    for (size_t i = 0; i < parts.size(); ++i) names.push_back(g.unique_name(base + "_" + std::to_string(i)));
    ir::Node* s = with_ints(n, "Split", "split", x, parts, names);
    s->set_attr_int("axis", axis);
    std::vector<ir::Value*> e(s->outputs().begin(), s->outputs().end());
    if (may_squeeze && n.attr_int("keepdims", 1) == 0)
      for (ir::Value*& v : e) v = with_ints(n, "Squeeze", "axes", v, {axis}, {g.unique_name(v->name() + "_sq")})->output(0);
    return e;
  }

  // ConcatFromSequence of known elements: Concat (after an Unsqueeze of each for new_axis).
  bool concat(ir::Node& n) {
    const std::vector<ir::Value*>* in = elems(n.input(0));
    if (!in || in->empty()) return false;
    int64_t axis = n.attr_int("axis", 0);
    std::vector<ir::Value*> parts = *in;
    ir::Graph& g = *n.graph();
    if (n.attr_int("new_axis", 0) != 0)
      for (ir::Value*& v : parts)
        v = with_ints(n, "Unsqueeze", "axes", v, {axis}, {g.unique_name(n.output(0)->name() + "_part")})->output(0);
    ir::Node* c = g.insert_node_before(&n, "Concat", parts, {g.unique_name(n.output(0)->name())});
    c->set_attr_int("axis", axis);
    return forward_and_remove(n, c->output(0));
  }

  // SequenceMap whose sequence inputs are all known and equally long: the body once per element;
  // each output is then a known sequence of the copies' results.
  bool map(ir::Node& n) {
    const ir::Attribute* a = n.attr("body");
    if (!a || !a->g || a->g->inputs().size() != n.num_inputs() || a->g->outputs().size() != n.num_outputs())
      return false;
    const ir::Graph& body = *a->g;
    for (const ir::Node* b : body.nodes())
      if (!b->subgraphs().empty()) return false;
    std::optional<size_t> len;
    for (size_t i = 0; i < n.num_inputs(); ++i) {
      if (n.input(i)->type().is_tensor()) continue;
      const std::vector<ir::Value*>* e = elems(n.input(i));
      if (!e || (len && *len != e->size())) return false;
      len = e->size();
    }
    if (!len || *len == 0) return false;
    std::vector<std::vector<ir::Value*>> results(n.num_outputs());
    for (size_t j = 0; j < *len; ++j) {
      std::map<const ir::Value*, ir::Value*> moved;
      for (size_t i = 0; i < n.num_inputs(); ++i) {
        const std::vector<ir::Value*>* e = elems(n.input(i));
        moved[body.inputs()[i]] = e ? (*e)[j] : n.input(i);
      }
      copy_graph_nodes(body, *n.graph(), &n, moved, /*keep_types=*/false);
      for (size_t k = 0; k < n.num_outputs(); ++k) {
        auto it = moved.find(body.outputs()[k]);
        results[k].push_back(it == moved.end() ? body.outputs()[k] : it->second);
      }
    }
    // The outputs become SequenceConstructs of the copies (same names), which later readers resolve.
    ir::Graph& g = *n.graph();
    for (size_t k = 0; k < n.num_outputs(); ++k) {
      ir::Value* out = n.output(k);
      if (!out) continue;
      ir::Node* c = g.insert_node_before(&n, "SequenceConstruct", results[k], {out->name()});
      c->output(0)->set_type(out->type());
      replace_all_uses_everywhere(out, c->output(0));
      known_[c->output(0)] = Known::of(results[k]);
    }
    g.remove_node(&n);
    return true;
  }
};

}  // namespace

bool resolve_sequences(ir::Model& model) { return Resolver(model.opset("")).run(*model.graph); }

}  // namespace onnxc::passes
