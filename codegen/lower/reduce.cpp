// Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare, ArgMax/ArgMin, TopK.
// Axes come from the attribute (ReduceSum before opset 13, the others before 18) or the optional
// second input; keepdims and noop_with_empty_axes as ONNX defines them. An accumulator Func over the
// output dims holds the running value; the output applies the finishing step (mean, sqrt, log).
#include <cmath>
#include <set>

#include "codegen/lower/lower_util.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;
using Halide::Func;

bool axes_at_run_time(const LowerContext& ctx, int64_t input_axes_from) {
  if (ctx.opset < input_axes_from || !has_input(ctx, 1) || const_ints(ctx, 1)) return false;
  const Expr& n = ctx.in[1].shape.at(0);
  user_check(Halide::Internal::as_const_int(n) != nullptr) << ctx.node.describe() << ": axes of dynamic length are not supported";
  return !Halide::Internal::is_const_zero(n);
}

// The reduced axes (ONNX order, ascending, unique); empty = identity (noop_with_empty_axes).
std::vector<int> reduce_axes(const LowerContext& ctx, int rank, int64_t input_axes_from) {
  std::vector<int64_t> axes;
  bool given = false;
  if (ctx.opset >= input_axes_from) {
    if (has_input(ctx, 1)) {
      if (auto c = const_ints(ctx, 1)) axes = *c;  // else an empty run-time tensor
      given = true;
    }
  } else if (ctx.node.has_attr("axes")) {
    axes = ctx.node.attr_ints("axes");
    given = true;
  }
  std::set<int> r;
  if (axes.empty()) {
    if (given && ctx.node.attr_int("noop_with_empty_axes", 0)) return {};
    if (!given && ctx.node.attr_int("noop_with_empty_axes", 0)) return {};
    for (int a = 0; a < rank; ++a) r.insert(a);
  }
  for (int64_t a : axes) r.insert(normalize_axis(a, rank, ctx.node));
  return {r.begin(), r.end()};
}

struct Reducer {
  enum Op { Sum, Prod, Max, Min } op;
  std::function<Expr(Expr)> pre;         // applied to each element (none: identity)
  std::function<Expr(Expr, Expr)> post;  // (accumulated, count) -> output (none: identity)
  // Elements enter `pre` less m, the largest finite element of their output's set (0 if none), and
  // m is added to the output: log-sum-exp then holds for any finite inputs (exp(x - m) <= 1).
  bool shift_by_max = false;
};
Reducer R(Reducer::Op op, std::function<Expr(Expr)> pre = nullptr, std::function<Expr(Expr, Expr)> post = nullptr) {
  return {op, std::move(pre), std::move(post)};
}

// Accumulator over the output dims; `in_index` maps output vars + the RDom to an input index.
LowerFn reduction(Reducer red, int64_t input_axes_from) {
  return [red, input_axes_from](LowerContext& ctx) -> std::vector<HTensor> {
    const HTensor& x = ctx.in[0];
    int rank = x.rank();
    bool dynamic = axes_at_run_time(ctx, input_axes_from);
    // Axes known at run time only: every dim is in the RDom, and a dim not reduced is pinned to
    // its first position by the RDom's predicate (slow, but such graphs are rare).
    std::vector<int> axes;
    if (dynamic) {
      user_check(ctx.node.attr_int("keepdims", 1) != 0)
          << ctx.node.describe() << ": axes given at run time with keepdims=0 are not supported";
      for (int a = 0; a < rank; ++a) axes.push_back(a);
    } else {
      axes = reduce_axes(ctx, rank, input_axes_from);
    }
    bool keep = ctx.node.attr_int("keepdims", 1) != 0;
    const auto& oshape = out_shape(ctx);
    Halide::Type ot = halide_type(out_dtype(ctx)), at = accumulator_type(halide_type(x.dtype));
    auto ovars = make_vars(static_cast<int>(oshape.size()));
    Index oidx = onnx_index(ovars);
    std::vector<Halide::Range> ranges;
    for (int a : axes) ranges.emplace_back(0, x.shape[a]);
    Index iidx(rank);
    Halide::RDom r;
    if (!ranges.empty()) r = Halide::RDom(Halide::Region(ranges.begin(), ranges.end()));
    Expr count = Halide::cast(at, 1);
    if (dynamic) {
      Expr pred = Halide::Internal::const_true();
      int n = static_cast<int>(*Halide::Internal::as_const_int(ctx.in[1].shape[0]));
      for (int a = 0; a < rank; ++a) {
        Expr hit = Halide::Internal::const_false();
        for (int k = 0; k < n; ++k) {
          Expr v = element_i32(ctx, 1, k);
          hit = hit || Halide::select(v < 0, v + rank, v) == a;
        }
        iidx[a] = Halide::select(hit, r[a], oidx[a]);
        pred = pred && (hit || r[a] == 0);
        count = count * Halide::select(hit, Halide::cast(at, x.shape[a]), Halide::cast(at, 1));
      }
      r.where(pred);
    } else {
      for (int a = 0, o = 0, k = 0; a < rank; ++a) {
        bool reduced = std::find(axes.begin(), axes.end(), a) != axes.end();
        if (reduced) {
          iidx[a] = r[k++];
          if (keep) ++o;
        } else {
          iidx[a] = oidx[o++];
        }
      }
      for (int a : axes) count = count * Halide::cast(at, x.shape[a]);
    }
    std::vector<Expr> args(ovars.begin(), ovars.end());
    Func acc("reduce_acc"), out("reduce"), top("reduce_top");
    Expr e = Halide::cast(at, x.at(iidx)), shift;
    if (red.shift_by_max && !axes.empty()) {
      const Expr inf = literal(at, INFINITY);
      top(args) = -inf;
      top(args) = Halide::max(top(args), Halide::select(Halide::is_finite(e), e, -inf));
      shift = Halide::select(Halide::is_finite(top(args)), top(args), Halide::Internal::make_zero(at));
      e = e - shift;
    }
    if (red.pre) e = red.pre(e);
    if (axes.empty()) {
      acc(args) = e;
    } else {
      switch (red.op) {
        case Reducer::Sum: acc(args) = Halide::Internal::make_zero(at); acc(args) += e; break;
        case Reducer::Prod: acc(args) = Halide::Internal::make_one(at); acc(args) *= e; break;
        case Reducer::Max: acc(args) = at.min(); acc(args) = max_nan(acc(args), e); break;
        case Reducer::Min: acc(args) = at.max(); acc(args) = min_nan(acc(args), e); break;
      }
    }
    Expr result = red.post ? red.post(acc(args), count) : acc(args);
    if (shift.defined()) result = result + shift;
    out(args) = Halide::cast(ot, result);
    bool inner_reduced = !axes.empty() && axes.back() == rank - 1;
    ctx.schedule = [acc, top, inner_reduced](Func output, const Halide::Target& t) {
      schedule_output(output, KernelClass::Elementwise, t);
      for (Func a : {top, acc}) {
        if (!a.defined()) continue;
        a.compute_root();
        schedule_reduction(a, !inner_reduced, worth_parallel(output), t);
      }
    };
    HTensor h;
    h.func = out;
    h.shape = oshape;
    h.dtype = out_dtype(ctx);
    return {h};
  };
}

// Whether float `x` is NaN, from its bits (exponent all ones, mantissa not zero): an integer test no
// fast-math flag or float simplification can drop.
Expr nan_bits(const Expr& x) {
  const int b = x.type().bits();
  const Halide::Type u = Halide::UInt(b);
  const int mant = b == 64 ? 52 : b == 32 ? 23 : x.type().is_bfloat() ? 7 : 10;
  const uint64_t sign = uint64_t{1} << (b - 1), inf = (sign - 1) >> mant << mant;
  Expr bits = Halide::reinterpret(u, x) & Halide::Internal::make_const(u, sign - 1);
  return bits > Halide::Internal::make_const(u, inf);
}

// ArgMax / ArgMin: index (int64) of the first (or last, select_last_index) extreme along axis.
LowerFn arg_extreme(bool is_max) {
  return [is_max](LowerContext& ctx) -> std::vector<HTensor> {
    const HTensor& x = ctx.in[0];
    int rank = x.rank();
    int axis = normalize_axis(ctx.node.attr_int("axis", 0), rank, ctx.node);
    bool keep = ctx.node.attr_int("keepdims", 1) != 0, last = ctx.node.attr_int("select_last_index", 0) != 0;
    const auto& oshape = out_shape(ctx);
    auto ovars = make_vars(static_cast<int>(oshape.size()));
    Index oidx = onnx_index(ovars);
    Halide::RDom r(0, x.shape[axis]);
    Index iidx;
    for (int a = 0, o = 0; a < rank; ++a) {
      if (a == axis) {
        iidx.push_back(r);
        if (keep) ++o;
      } else {
        iidx.push_back(oidx[o++]);
      }
    }
    std::vector<Expr> args(ovars.begin(), ovars.end());
    Func acc("arg_acc"), out("arg");
    Halide::Type vt = halide_type(x.dtype);
    acc(args) = Halide::Tuple(Halide::cast<int64_t>(-1), is_max ? vt.min() : vt.max());
    Expr v = x.at(iidx), best = acc(args)[1], first = acc(args)[0] < 0;
    Expr better = is_max ? (last ? v >= best : v > best) : (last ? v <= best : v < best);
    if (vt.is_float()) {
      // NaN is the extreme either way, as ReduceMax/ReduceMin propagate it and ONNX's reference
      // (NumPy) answers: the first NaN (the last with select_last_index). The comparisons alone
      // depended on how the simplifier wrote them (v > best as !(v <= best) took every NaN), and
      // is_nan in this tuple's update was folded away under fast math: NaN is told by its bits.
      Expr vn = nan_bits(v), bn = nan_bits(best);
      better = Halide::select(bn, last && vn, vn || better);
    }
    Expr take = first || better;
    acc(args) = Halide::Tuple(Halide::select(take, Halide::cast<int64_t>(Expr(r)), acc(args)[0]),
                              Halide::select(take, v, acc(args)[1]));
    // No index exists along an empty axis (ONNX's reference raises; the -1 start would come out 0):
    // a constant empty axis is refused here, a run-time one fails the run with this message.
    const Expr len = x.shape[axis];
    const std::string what = ctx.node.describe() + ": the axis to take the index along is empty (no element to index)";
    user_check(!Halide::Internal::is_const_zero(len)) << what;
    Expr index = Halide::max(acc(args)[0], Halide::cast<int64_t>(0));
    out(args) = Halide::Internal::is_const(len) ? index : Halide::require(len > 0, index, what);
    ctx.schedule = [acc, inner = axis == rank - 1](Func output, const Halide::Target& t) {
      schedule_output(output, KernelClass::Elementwise, t);
      Func a = acc;
      a.compute_root();
      schedule_reduction(a, !inner, worth_parallel(output), t);
    };
    HTensor h;
    h.func = out;
    h.shape = oshape;
    h.dtype = ir::DType::Int64;
    return {h};
  };
}

// TopK: each element's rank along the axis (how many elements precede it in the order: larger, or
// equal with a lower index, for largest=1), then output k picks the element of rank k. Quadratic in
// the axis length; exact, sorted, with ties in index order as ONNX specifies.
std::vector<HTensor> top_k(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  int r = x.rank(), axis = normalize_axis(ctx.node.attr_int("axis", -1), r, ctx.node);
  bool largest = ctx.node.attr_int("largest", 1) != 0;
  Expr n = x.shape[axis];
  auto vars = make_vars(r);
  Index o = onnx_index(vars);
  Halide::RDom j(0, n);
  Index oj = o;
  oj[axis] = j;
  Expr a = x.at(o), b = x.at(oj);
  Expr before = largest ? (b > a || (b == a && j < o[axis])) : (b < a || (b == a && j < o[axis]));
  Func rank("topk_rank");
  rank(vars) = Halide::sum(Halide::select(before, 1, 0));
  Halide::RDom i(0, n);
  Index oi = o;
  oi[axis] = i;
  Expr hit = rank(RowSpace::at(oi)) == o[axis];
  Func pick("topk_pick");
  pick(vars) = Halide::Tuple(x.at(o), Halide::cast<int64_t>(0));
  pick(vars) = Halide::Tuple(Halide::select(hit, x.at(oi), pick(vars)[0]),
                             Halide::select(hit, Halide::cast<int64_t>(Expr(i)), pick(vars)[1]));
  std::vector<Expr> args(vars.begin(), vars.end());
  std::vector<HTensor> outs = {define("TopK", out_shape(ctx, 0), out_dtype(ctx, 0), [&](const Index&) { return pick(args)[0]; })};
  if (ctx.node.output(1))
    outs.push_back(define("TopKIndices", out_shape(ctx, 1), ir::DType::Int64, [&](const Index&) { return pick(args)[1]; }));
  ctx.schedule = [rank, pick](Func output, const Halide::Target& t) {
    Func rk = rank, p = pick;
    rk.compute_root();
    p.compute_root();
    schedule_output(output, KernelClass::Elementwise, t);
  };
  return outs;
}

constexpr auto RED = KernelClass::Reduction;
Expr sq(Expr x) { return x * x; }
Expr absx(Expr x) { return x.type().is_uint() ? x : Halide::cast(x.type(), Halide::abs(x)); }

Registrar reg_ReduceSum("", "ReduceSum", RED, reduction(R(Reducer::Sum), 13));
Registrar reg_ReduceMean("", "ReduceMean", RED, reduction(R(Reducer::Sum, nullptr, [](Expr a, Expr n) { return a / n; }), 18));
Registrar reg_ReduceMax("", "ReduceMax", RED, reduction(R(Reducer::Max), 18));
Registrar reg_ReduceMin("", "ReduceMin", RED, reduction(R(Reducer::Min), 18));
Registrar reg_ReduceProd("", "ReduceProd", RED, reduction(R(Reducer::Prod), 18));
Registrar reg_ReduceL1("", "ReduceL1", RED, reduction(R(Reducer::Sum, absx), 18));
Registrar reg_ReduceL2("", "ReduceL2", RED, reduction(R(Reducer::Sum, sq, [](Expr a, Expr) { return Halide::sqrt(a); }), 18));
Registrar reg_ReduceSumSquare("", "ReduceSumSquare", RED, reduction(R(Reducer::Sum, sq), 18));
// log and exp with IEEE results at NaN and ±inf (Halide's own polynomials give log(inf) = 88.7,
// log(NaN) finite, exp(NaN) = 0).
Expr log_of(Expr a) { return log_ieee(a); }
Registrar reg_ReduceLogSum("", "ReduceLogSum", RED, reduction(R(Reducer::Sum, nullptr, [](Expr a, Expr) { return log_of(a); }), 18));
// log(sum(exp(x - m))) + m, m the largest finite element: exact in form for every finite input
// (log(sum(exp(x))) overflowed from x = 88.7), NaN for a set holding NaN, +inf with +inf in it,
// -inf for a set of -inf only or an empty one, as ONNX's formula gives.
Reducer log_sum_exp() {
  Reducer r = R(Reducer::Sum, exp_ieee, [](Expr a, Expr) { return log_of(a); });
  r.shift_by_max = true;
  return r;
}
Registrar reg_ReduceLogSumExp("", "ReduceLogSumExp", RED, reduction(log_sum_exp(), 18));
Registrar reg_TopK("", "TopK", RED, top_k);
Registrar reg_ArgMax("", "ArgMax", RED, arg_extreme(true));
Registrar reg_ArgMin("", "ArgMin", RED, arg_extreme(false));

}  // namespace

}  // namespace onnxc::codegen
