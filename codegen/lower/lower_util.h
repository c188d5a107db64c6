// Helpers shared by the op-family lowering files: defining tensors by an index function,
// numpy-style broadcasting over symbolic extents, axis normalisation and reading constant or
// runtime-valued operands (axes, starts, pads...).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/lower/lower.h"
#include "ir/error.h"

namespace onnxc::codegen {

using Index = std::vector<Halide::Expr>;  // an element index in ONNX order (outermost first)

// Pure Vars for a Func of `rank` dims, in Halide order (innermost first).
std::vector<Halide::Var> make_vars(int rank);
// The ONNX-order index of those Vars.
Index onnx_index(const std::vector<Halide::Var>& vars);

// Halide::cast, except that a float -> float16/bfloat16 conversion keeps NaN a NaN (Halide's turns
// it into inf).
Halide::Expr cast_keep_nan(Halide::Type t, Halide::Expr v);
// max/min that propagate NaN, as numpy (ONNX's reference) does: the x86 max/min instructions return
// their second operand when either is NaN, so Relu(NaN) would be 0, Clip would drop a NaN and a
// running maximum would forget one unless it came last. Integer types take Halide's max/min.
Halide::Expr max_nan(Halide::Expr a, Halide::Expr b);
Halide::Expr min_nan(Halide::Expr a, Halide::Expr b);
// `value`, or a quiet NaN of its type where `cond` holds (written as bits through an integer select
// that no float flag can fold).
Halide::Expr nan_where(const Halide::Expr& cond, const Halide::Expr& value);
// Whether a float is -inf, compared as bits: where LLVM's fast-math flags apply (a Tuple-valued
// Func, which keep_ieee_semantics leaves alone) `x == -inf` may fold to false, as no-infs allows.
Halide::Expr is_minus_infinity(const Halide::Expr& x);
// A new tensor whose element at ONNX index i is body(i).
HTensor define(const std::string& name, std::vector<Halide::Expr> shape, ir::DType dtype,
               const std::function<Halide::Expr(const Index&)>& body);

// Element of `t` that a broadcast result reads at `out_idx` (right-aligned numpy rules). A dim of t
// that is statically 1 reads index 0; a dim that is neither 1 nor provably the result's extent is
// clamped, so a runtime extent of 1 also broadcasts.
Halide::Expr broadcast_at(const HTensor& t, const Index& out_idx, const std::vector<Halide::Expr>& out_shape);

// Axis in [0, rank); negative axes count from the end. UserError names the node when out of range.
int normalize_axis(int64_t axis, int rank, const ir::Node& node);

// The dtype ONNX declares for output i of the node.
ir::DType out_dtype(const LowerContext& ctx, int i = 0);
// Output i's extents (ctx.out_shape[i]); UserError if the output's shape was not inferred.
const std::vector<Halide::Expr>& out_shape(const LowerContext& ctx, int i = 0);

// True if input i is present (not omitted).
bool has_input(const LowerContext& ctx, int i);

// `extent == 0` for an extent known only at run time, written on the kernel parameter itself where
// the extent is a symbol (an int64 parameter cast to int32): Halide substitutes a specialization's
// `variable == constant` into the code it guards, which folds a read guarded by `extent > 0` away.
// Any other extent (p - 1) gives the condition simplified: a read guarded by its negation (`!e`,
// the very Expr) folds away in the specialization on `e`.
Halide::Expr is_zero_extent(const Halide::Expr& extent);
// For a lowering whose output has the shape of its input 0 and is computed row by row (softmax,
// norms): where that shape may be empty at run time (an extent not known when compiling, such as a
// Slice's n - 1 rows), the inputs are read only where it is not, under one condition the kernel
// specializes on (LowerContext::empty_reads). An empty output then computes and reads nothing:
// Halide bounds-checks a read even of a loop that runs no iteration. Nothing changes where every
// extent is a constant or the kernel has no specialization left.
void skip_reads_if_empty(LowerContext& ctx);
// Integer contents of a constant input, or nullopt when absent or not constant.
std::optional<std::vector<int64_t>> const_ints(const LowerContext& ctx, int i);
// Floating contents of a constant input.
std::optional<std::vector<double>> const_floats(const LowerContext& ctx, int i);
// Element k of a 1-D (or scalar) input as an Expr of its own type: a literal when the input is
// constant, otherwise a load from the tensor (runtime-valued operand).
Halide::Expr element(const LowerContext& ctx, int i, int k);
// Same, cast to Int(32) and clamped into int32 range first (for starts/ends/pads).
Halide::Expr element_i32(const LowerContext& ctx, int i, int k);

// Bool tensors are Halide Bool() values; these convert from any numeric value and to 0/1 bytes.
inline Halide::Expr to_bool(const Halide::Expr& e) { return e != Halide::Internal::make_zero(e.type()); }
inline Halide::Expr from_bool(const Halide::Expr& e) { return Halide::cast(Halide::UInt(8), e); }
// A literal of a Halide type (float types from a double, integer types from an int64).
Halide::Expr literal(Halide::Type t, double v);

// exp, log and erf with IEEE results at NaN and ±inf (and finfo.max). f32 exp is fast_math.h's
// exp_f32 (FMAs, within 1.02 ulp, subnormal results kept). For log and erf, Halide's polynomials
// reduce the argument to a float->int conversion that overflows there: log(inf) came out 88.7,
// erf(±inf) NaN. Inside the range the polynomial is used unchanged.
Halide::Expr exp_ieee(const Halide::Expr& x);
Halide::Expr log_ieee(const Halide::Expr& x);
Halide::Expr erf_ieee(const Halide::Expr& x);
// tanh that vectorizes (Halide 14 calls libm's tanhf once per lane) and keeps IEEE results: NaN
// stays NaN, ±inf and large |x| give exactly ±1, -0 stays -0, odd symmetry; within 1.6 ulp of
// the correctly rounded value over every f32. Other types take Halide::tanh (libm).
Halide::Expr tanh_ieee(const Halide::Expr& x);

// Type used for accumulating a reduction of `t`: f32 for f16/bf16, else t itself.
Halide::Type accumulator_type(Halide::Type t);

// Declares buffer `p` dense, starting at 0, with extents `onnx_shape` (ONNX order): what the
// runtime passes every kernel (extents are not constrained). Static extents make strides constants.
void constrain_dense(const Halide::OutputImageParam& p, const std::vector<Halide::Expr>& onnx_shape);
// A buffer whose rows are dense (innermost stride 1, mins 0) but whose outer strides are the
// caller's: a KV cache the runtime keeps with capacity along its sequence axis.
void constrain_rows(const Halide::OutputImageParam& p);

// The index space of a row-wise op (softmax, norms, reductions) over input `x`: `reduced` are the
// ONNX axes a row spans. Per-row statistics are Funcs over stat_vars (the other dims, Halide order);
// `r` walks a row and `ridx` is the element index with the reduced dims taken from r.
struct RowSpace {
  RowSpace(const HTensor& x, const std::vector<int>& reduced);
  std::vector<Halide::Var> vars;       // all dims, Halide order
  Index idx;                           // the same, ONNX order
  std::vector<Halide::Var> stat_vars;  // vars without the reduced dims
  Halide::RDom r;
  Index ridx;
  int reduced_inner = 0;  // how many innermost dims a row is, when it is exactly those; else 0

  std::vector<Halide::Expr> stat_args() const { return {stat_vars.begin(), stat_vars.end()}; }
  std::vector<Halide::Expr> all_args() const { return {vars.begin(), vars.end()}; }
  // Func arguments (Halide order) for an ONNX-order index.
  static std::vector<Halide::Expr> at(const Index& onnx);
};

}  // namespace onnxc::codegen
