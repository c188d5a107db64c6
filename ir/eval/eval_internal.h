// Shared helpers for the constant evaluator's op families (elementwise, movement, reduce): element
// access in two lanes (int64 for integers/bool, double for floats), broadcasting and index maps.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/eval/eval.h"
#include "ir/float8.h"
#include "ir/op_registry.h"

namespace onnxc::ir::eval_detail {

// Thrown inside an op to give up quietly: evaluate() turns it into nullopt.
struct NotEvaluable {};

class Ctx {
 public:
  Ctx(const Node& n, const std::vector<const Tensor*>& in, const EvalOptions& opt)
      : node(n), inputs_(in), opt_(opt) {}
  const Node& node;
  size_t num_inputs() const { return inputs_.size(); }
  // Input i, or null when absent/omitted.
  const Tensor* opt_in(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  // Input i; the model is wrong if it is missing.
  const Tensor& in(size_t i) const;
  // A zero-filled output tensor; gives up when it would be larger than the limit.
  Tensor make(DType dt, const std::vector<int64_t>& dims) const;
  // Gives up when a tensor with `dims` would be larger than the limit (call before building index maps).
  void check_size(const std::vector<int64_t>& dims) const;
  // "Concat node 'x': " prefix for user errors.
  std::string where() const { return node.describe() + ": "; }

 private:
  const std::vector<const Tensor*>& inputs_;
  const EvalOptions& opt_;
};

using EvalFn = std::vector<Tensor> (*)(Ctx&);
// The evaluator's table, keyed as the op table is (ir/op_registry.h); tests/codegen/op_table_test.cpp checks
// its ranges against that table. The ops it knows are all of the default domain.
class EvalTable : public OpImplTable<EvalFn> {
 public:
  // Every opset of `op_type` (the op families tell forms apart by the inputs present).
  void add(const std::string& op_type, EvalFn fn) { add({"", op_type}, {}, fn); }
  void add(OpKey key, OpsetRange range, EvalFn fn) {
    internal_check(OpImplTable::add(key, range, fn)) << "evaluator for " << key.str() << " added twice";
  }
};
// The one table, built on first use from the families below.
const EvalTable& eval_table();
void add_elementwise_evals(EvalTable& t);
void add_movement_evals(EvalTable& t);
void add_reduce_evals(EvalTable& t);
void add_nn_evals(EvalTable& t);

// ---- elements ----
inline bool float_lane(DType t) { return dtype_is_float(t) || dtype_is_narrow_float(t); }
void set_f64(Tensor& t, int64_t i, double v);
void set_i64(Tensor& t, int64_t i, int64_t v);
// Requires a numeric or bool dtype (gives up on strings/complex).
void require_numeric(const Tensor& t);
std::vector<int64_t> to_ints(const Tensor& t);
// A rank-0 or one-element tensor as an int / double.
int64_t scalar_int(const Ctx& c, const Tensor& t);
double scalar_f64(const Ctx& c, const Tensor& t);

// ---- shapes and indexing ----
int64_t numel(const std::vector<int64_t>& dims);
std::vector<int64_t> strides(const std::vector<int64_t>& dims);
int64_t normalize_axis(const Ctx& c, int64_t axis, int64_t rank);
// Numpy broadcasting of several shapes; user error if incompatible.
std::vector<int64_t> broadcast(const Ctx& c, const std::vector<std::vector<int64_t>>& shapes);
// For each element of `out_dims`, the flat index of the element of a tensor with `in_dims` that
// broadcasting reads.
std::vector<int64_t> broadcast_index(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims);
// out[i] = src[idx[i]] for any dtype (strings included).
Tensor take(const Ctx& c, const Tensor& src, const std::vector<int64_t>& out_dims, const std::vector<int64_t>& idx);
// Axes from input `input_index` if present, else from attribute "axes".
std::optional<std::vector<int64_t>> axes_arg(const Ctx& c, size_t input_index);

}  // namespace onnxc::ir::eval_detail
