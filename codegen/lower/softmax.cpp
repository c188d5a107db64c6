// Softmax, LogSoftmax and Hardmax. Opset < 13 normalizes over the input flattened to 2-D at `axis`
// (every dim from axis on); opset >= 13 over the single dim `axis`. One kernel: per row, the max,
// then exp(x - max) kept for the row, its sum, then the output.
#include "codegen/lower/lower_util.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;
using Halide::Func;

// The dims a softmax-like op reduces over (ONNX order, ascending).
std::vector<int> softmax_axes(const LowerContext& ctx, int rank) {
  int64_t def = ctx.opset < 13 ? 1 : -1;
  int axis = normalize_axis(ctx.node.attr_int("axis", def), rank, ctx.node);
  std::vector<int> axes;
  for (int a = axis; a < (ctx.opset < 13 ? rank : axis + 1); ++a) axes.push_back(a);
  return axes;
}

enum class Kind { Softmax, LogSoftmax, Hardmax };

LowerFn softmax_like(Kind kind) {
  return [kind](LowerContext& ctx) -> std::vector<HTensor> {
    skip_reads_if_empty(ctx);  // rows that may be none, or of length 0 (an empty output either way)
    const HTensor& x = ctx.in[0];
    RowSpace s(x, softmax_axes(ctx, x.rank()));
    Halide::Type ot = halide_type(x.dtype), at = accumulator_type(ot);
    auto xv = [&](const Index& i) { return Halide::cast(at, x.at(i)); };

    Func mx("softmax_max");
    mx(s.stat_args()) = at.min();
    mx(s.stat_args()) = Halide::max(mx(s.stat_args()), xv(s.ridx));
    Func out("softmax");
    std::vector<Func> stats = {mx};
    if (kind == Kind::Hardmax) {
      // 1 at the first maximum of the row: the first index whose value equals the max.
      Func first("hardmax_first");
      first(s.stat_args()) = Halide::Int(32).max();
      Expr flat = s.r.x;
      for (int k = 1; k < s.r.dimensions(); ++k) flat = flat * 65536 + s.r[k];
      first(s.stat_args()) = Halide::select(xv(s.ridx) == mx(s.stat_args()),
                                            Halide::min(first(s.stat_args()), flat), first(s.stat_args()));
      Expr here = s.idx[softmax_axes(ctx, x.rank())[0]];
      auto axes = softmax_axes(ctx, x.rank());
      for (size_t k = 1; k < axes.size(); ++k) here = here * 65536 + s.idx[axes[k]];
      out(s.all_args()) = Halide::cast(ot, Halide::select(here == first(s.stat_args()), 1, 0));
      stats.push_back(first);
    } else {
      Func ex("softmax_exp"), sum("softmax_sum");
      ex(s.all_args()) = exp_ieee(xv(s.idx) - mx(s.stat_args()));
      sum(s.stat_args()) = Halide::Internal::make_zero(at);
      sum(s.stat_args()) += ex(RowSpace::at(s.ridx));
      Expr value = kind == Kind::Softmax
                       ? Halide::cast(ot, ex(s.all_args()) / sum(s.stat_args()))
                       : Halide::cast(ot, xv(s.idx) - mx(s.stat_args()) - Halide::log(sum(s.stat_args())));
      // A NaN anywhere in the row makes the whole row NaN (NumPy, ONNX Runtime). Halide's max()
      // drops NaN and its float math assumes none, so the NaN is counted with is_nan (exact even
      // under fast math) and written as bits through an integer select no float flag can fold.
      Func nans("softmax_nans");
      nans(s.stat_args()) = Halide::cast<uint8_t>(0);
      nans(s.stat_args()) = Halide::max(nans(s.stat_args()), Halide::cast<uint8_t>(Halide::is_nan(xv(s.ridx))));
      out(s.all_args()) = nan_where(nans(s.stat_args()) != 0, value);
      stats.push_back(nans);
      stats.push_back(ex);
      stats.push_back(sum);
    }
    int inner = s.reduced_inner;
    ctx.schedule = [stats, inner](Func output, const Halide::Target& t) { schedule_rowwise(output, stats, inner, t); };
    HTensor r;
    r.func = out;
    r.shape = x.shape;
    r.dtype = x.dtype;
    return {r};
  };
}

Registrar reg_Softmax("", "Softmax", KernelClass::Softmax, softmax_like(Kind::Softmax));
Registrar reg_LogSoftmax("", "LogSoftmax", KernelClass::Softmax, softmax_like(Kind::LogSoftmax));
Registrar reg_Hardmax("", "Hardmax", KernelClass::Softmax, softmax_like(Kind::Hardmax));

}  // namespace

}  // namespace onnxc::codegen
