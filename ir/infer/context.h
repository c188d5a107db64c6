// What an inference rule sees of its node: input types, constants and shape values; where it puts
// output types and shape values (merged into the graph by InferContext::commit); and helpers the
// op family files share (axes, broadcasting, attribute-or-input arguments).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/infer/infer.h"

namespace onnxc::ir {

// State of one inference run: the result being built and the names of symbols already in use.
struct InferState {
  InferenceResult& result;
  const OpsetMap& opsets;
  std::optional<std::set<std::string>> used_symbols;  // filled on first need
  std::map<std::string, int> next_id;

  Dim fresh_symbol(const std::string& prefix, const Graph& g);
};

class InferContext {
 public:
  InferContext(Node& n, int64_t opset, InferState& st);
  Node& node() const { return node_; }
  int64_t opset() const { return opset_; }
  InferState& state() const { return st_; }
  // "Reshape node 'r' (opset 13): " - the prefix of every message about this node.
  std::string where() const;

  // ---- inputs (absent optional inputs read as unknown) ----
  size_t num_inputs() const { return node_.num_inputs(); }
  bool has_input(size_t i) const { return node_.input(i) != nullptr; }
  const Type& in_type(size_t i) const;
  DType in_dtype(size_t i) const { return in_type(i).dtype; }
  const std::optional<Shape>& in_shape(size_t i) const;  // nullopt: absent, not a tensor, or rank unknown
  int64_t in_rank(size_t i) const;                       // -1 when unknown
  const Tensor* in_const(size_t i) const;
  std::optional<std::vector<Dim>> in_value(size_t i) const;     // shape value
  std::optional<std::vector<int64_t>> in_ints(size_t i) const;  // shape value, all constant
  std::optional<int64_t> in_int(size_t i) const;                // one-element constant
  std::optional<double> in_scalar_f64(size_t i) const;          // one-element constant, any dtype
  // A size given by input i's value: its shape value when known, else the value symbol of a
  // one-element integer tensor (see value_symbol), else unknown.
  Dim in_size(size_t i) const;

  // ---- outputs ----
  size_t num_outputs() const { return node_.num_outputs(); }
  bool has_output(size_t i) const { return node_.output(i) != nullptr; }
  const Type& out_type(size_t i) const;  // what the output holds now
  void set_output(size_t i, Type t);
  void set_tensor(size_t i, DType dt, std::optional<Shape> s) { set_output(i, Type::tensor(dt, std::move(s))); }
  void set_value(size_t i, std::vector<Dim> contents);
  // The size of a data-dependent dim: the dim output `out` already has at `axis` when that is known
  // or named, else a fresh symbol `<prefix>_<n>`.
  Dim fresh_dim(size_t out, size_t axis, const std::string& prefix);

  // Infers a subgraph whose inputs get `input_types` (merged with their declared types); returns
  // the types of its outputs.
  std::vector<Type> infer_subgraph(Graph& g, const std::vector<Type>& input_types);

  // Merges the pending outputs into the node's output values (see infer.h for the rules).
  void commit();

 private:
  Node& node_;
  int64_t opset_;
  InferState& st_;
  std::vector<std::optional<Type>> out_types_;
  std::vector<std::optional<std::vector<Dim>>> out_values_;
};

// infer_check(ctx, cond) << "what is wrong";  throws UserError prefixed with ctx.where().
#define infer_check(ctx, cond) user_check(cond) << (ctx).where()
#define infer_fail(ctx) user_error << (ctx).where()

// Runs the nodes of `g` (and their subgraphs) through their rules.
void infer_graph_nodes(Graph& g, InferState& st);
// Merges `inferred` into `existing` for `what` (a message prefix); see infer.h for the rules.
Type merge_types(const Type& existing, const Type& inferred, const std::string& what);
// Joins two types a value may have on different paths (If branches, loop iterations): dims that
// differ become unknown.
Type join_types(const Type& a, const Type& b);

// ---- helpers shared by the rule files ----
Shape unknown_shape(int64_t rank);
std::vector<Dim> to_dims(const std::vector<int64_t>& v);
// Axis in [-rank, rank) to [0, rank); UserError otherwise.
int64_t norm_axis(const InferContext& ctx, int64_t axis, int64_t rank);
std::vector<int64_t> norm_axes(const InferContext& ctx, std::vector<int64_t> axes, int64_t rank);
// Multidirectional (numpy) broadcasting; nullopt when a rank is unknown.
Dim broadcast_dim(const InferContext& ctx, const Dim& a, const Dim& b);
std::optional<Shape> broadcast_shapes(const InferContext& ctx, const std::vector<std::optional<Shape>>& shapes);

// An integer-list argument given as an attribute (older opsets) or as an input (newer ones).
struct IntsArg {
  bool present = false;                        // given at all
  std::optional<std::vector<int64_t>> values;  // nullopt: an input whose contents are unknown
};
IntsArg ints_arg(const InferContext& ctx, const std::string& attr, size_t input);
// Same, with the contents as dims (an input may be a shape value).
struct DimsArg {
  bool present = false;
  std::optional<std::vector<Dim>> values;
};
DimsArg dims_arg(const InferContext& ctx, const std::string& attr, size_t input);

// Contents of a small constant (rank <= 1, at most ShapeValues::kMaxElements) as dims.
std::optional<std::vector<Dim>> tensor_dims(const Tensor& t);
// The shape value of input `in` (if any) becomes that of output `out` (same contents, e.g. Reshape).
void pass_value(InferContext& ctx, size_t in = 0, size_t out = 0);
// An element-type attribute (Cast's `to`, `dtype`, ...), or `def` when absent; UserError when the
// code is not a type the IR has.
DType dtype_attr(const InferContext& ctx, const std::string& name, DType def);
// Output 0 has the type of input `i` (dtype, shape); its shape value passes through.
void same_as_input(InferContext& ctx, size_t i = 0);

}  // namespace onnxc::ir
