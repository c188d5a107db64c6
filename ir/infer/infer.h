// Shape and type inference over the IR. Per node, the op table's rule (ir/op_registry.h) computes
// output dtypes and symbolic shapes from the input types, constant inputs and *shape values*: the
// contents of small integer tensors known as dims. Models compute shapes at run time
// (`Shape -> Gather -> Unsqueeze -> Concat -> Reshape`); tracking those contents symbolically lets
// `Reshape(x, Concat(Shape(x)[0], Shape(x)[1], 4, 16))` infer `[batch,seq,4,16]`, and lets passes
// replace such subgraphs by constants or shape expressions.
//
// Merging with what a value already holds (imported from ONNX, or from an earlier run):
//  - an op without a rule, or a dim the rule cannot decide, keeps the existing information; a known
//    dim never becomes unknown;
//  - a more precise result replaces the old one (a constant or an expression of named symbols
//    over `?`);
//  - two different constants (or ranks, or dtypes) are a model error: UserError naming the node,
//    except where the existing type is an intermediate value's value_info annotation
//    (Value::type_is_annotation): exporters write wrong ones (ORT GenAI's builder declares a
//    Constant's i64[1] output as i64[]), and ONNX Runtime runs such models. There the inferred type
//    wins and InferenceResult::warnings gets (and stderr shows) one line naming the value, the node and both types.
//    Graph inputs and graph outputs stay contracts: their declared types are the compiled
//    function's signature that callers size buffers by, so a conflict there is still an error.
// Data-dependent sizes (NonZero, Unique, ...) get fresh symbols (`nonzero_0`), or keep the symbol a
// value already has. Symbols stand for dimensions and are taken to be >= 0.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/dim.h"
#include "ir/graph.h"
#include "ir/op_registry.h"

namespace onnxc::ir {

// Shape values: the contents of small tensors (rank <= 1, at most kMaxElements elements) as dims.
// E.g. for x:[batch,seq,64], `s = Shape(x)` holds [batch,seq,64], `Gather(s, 1)` holds [seq], and
// `Mul(Gather(s,0), Gather(s,1))` holds [batch*seq]. An element may be an unknown dim (`?`).
// Keys are Value pointers: valid until the graph is mutated; re-run inference after rewrites.
class ShapeValues {
 public:
  static constexpr int64_t kMaxElements = 64;

  // Contents of `v`: tracked by inference, or read from an integer (or integral float/bool)
  // constant with at most kMaxElements elements. nullopt when unknown.
  std::optional<std::vector<Dim>> get(const Value* v) const;
  void set(const Value* v, std::vector<Dim> contents) { values_[v] = std::move(contents); }
  void erase(const Value* v) { values_.erase(v); }
  // Everything tracked (constants are not copied here).
  const std::map<const Value*, std::vector<Dim>>& tracked() const { return values_; }

 private:
  std::map<const Value*, std::vector<Dim>> values_;
};

struct InferenceResult {
  ShapeValues shape_values;
  // Element types of sequences whose length is known (built by SequenceConstruct, SequenceInsert,
  // SplitToSequence, ...), so SequenceAt, SequenceLength and ConcatFromSequence stay precise.
  std::map<const Value*, std::vector<Type>> sequence_elements;
  // Ops met without an inference rule ("domain.op_type@opset"); their outputs keep their types.
  std::set<std::string> missing_rules;
  // Declared value_info types that inference overrode (see the merging rules above), one line each.
  std::vector<std::string> warnings;
};

// Infers every node of the model's graph and subgraphs, in place, at the model's opsets.
InferenceResult infer_shapes(Model& m);
// Same for one graph (and its subgraphs); values of enclosing graphs must already be typed.
InferenceResult infer_graph(Graph& g, const OpsetMap& opsets);
// Re-infers one node, e.g. one a pass just built; reads and extends `result`'s shape values.
void infer_node(Node& n, const OpsetMap& opsets, InferenceResult& result);

// Sizes given as the value of a run-time scalar integer tensor (HannWindow's size, STFT's frame_length):
// the symbol `value:NAME` stands for the value of tensor NAME. Code generation binds it with a host step
// that reads the tensor when the run reaches it (codegen/host_steps.h).
std::string value_symbol(const Value& v);
// The tensor name a value symbol stands for, or nullopt for any other symbol.
std::optional<std::string> value_symbol_source(const std::string& symbol);

// The contents of `v` as dims when known (see ShapeValues::get): what a pass uses to replace a shape
// subgraph by a constant (all elements constant) or by a symbolic shape expression.
std::optional<std::vector<Dim>> shape_value(const InferenceResult& r, const Value* v);

}  // namespace onnxc::ir
