// Ops that cut or grow dims by index arguments: Slice (with ONNX's clamping of negative and
// out-of-range indices, kept symbolic with min/max), Split, Pad.
#include <limits>

#include "ir/infer/context.h"

namespace onnxc::ir {
namespace {

// Indices at least this large mean "to the end" (exporters write INT64_MAX or INT32_MAX); a
// symbolic dim is taken to be smaller.
constexpr int64_t kBig = std::numeric_limits<int32_t>::max();

int64_t clamp(int64_t x, int64_t lo, int64_t hi) { return std::max(lo, std::min(x, hi)); }

// Exact ONNX semantics for a constant dim.
int64_t slice_len_const(int64_t d, int64_t s, int64_t e, int64_t step) {
  if (s < 0) s += d;
  if (e < 0) e += d;
  if (step > 0) {
    s = clamp(s, 0, d);
    e = clamp(e, 0, d);
    return e > s ? (e - s + step - 1) / step : 0;
  }
  s = clamp(s, 0, d - 1);
  e = clamp(e, -1, d - 1);
  return s > e ? (s - e - step - 1) / -step : 0;
}

// Start or end for a positive step, clamped to [0, d]. Symbolic indices are dims (>= 0).
Dim clamp_forward(const Dim& d, const Dim& x) {
  if (!x.is_const()) return min(x, d);
  int64_t v = x.value();
  if (v >= kBig) return d;
  if (v <= -kBig) return Dim(0);
  return v >= 0 ? min(x, d) : max(d + x, Dim(0));
}

// Length of a positive-step slice of a symbolic dim; closed forms for the usual constant cases
// (x[-k:], x[a:b], x[a:-b]) so the result reads `min(k,seq)` rather than nested clamps.
Dim slice_len_forward(const Dim& d, const Dim& s, const Dim& e) {
  auto cs = s.as_const(), ce = e.as_const();
  if (cs && ce) {
    int64_t a = std::max(*cs, -kBig), b = std::min(*ce, kBig);
    if (a < 0 && b >= kBig) return min(Dim(-a), d);
    if (a < 0 && b < 0) return b <= a ? Dim(0) : min(Dim(b - a), max(d + b, Dim(0)));
    if (a >= 0 && b >= kBig) return max(d - a, Dim(0));
    if (a >= 0 && b >= 0) return b <= a ? Dim(0) : min(Dim(b - a), max(d - a, Dim(0)));
    if (a >= 0 && b < 0) return max(d + b - a, Dim(0));
  }
  return max(clamp_forward(d, e) - clamp_forward(d, s), Dim(0));
}

std::optional<Dim> slice_len(const Dim& d, const Dim& s, const Dim& e, const Dim& step) {
  if (!step.is_const() || step.value() == 0) return std::nullopt;
  int64_t st = step.value();
  if (d.is_const() && s.is_const() && e.is_const()) return Dim(slice_len_const(d.value(), s.value(), e.value(), st));
  if (st > 0) return ceildiv(slice_len_forward(d, s, e), Dim(st));
  // Backwards: only the full reversal x[::-k] has a simple form.
  bool from_end = s.is_const() && (s.value() == -1 || s.value() >= kBig);
  bool to_start = e.is_const() && e.value() <= -kBig;
  if (from_end && to_start) return ceildiv(d, Dim(-st));
  return std::nullopt;
}

struct SliceArgs {
  std::optional<std::vector<Dim>> starts, ends, steps;
  std::optional<std::vector<int64_t>> axes;
  bool axes_present = false;
};

SliceArgs slice_args(const InferContext& ctx) {
  SliceArgs a;
  a.starts = dims_arg(ctx, "starts", 1).values;
  a.ends = dims_arg(ctx, "ends", 2).values;
  IntsArg axes = ints_arg(ctx, "axes", 3);
  a.axes_present = axes.present;
  a.axes = axes.values;
  DimsArg steps = dims_arg(ctx, "steps", 4);
  if (steps.present) a.steps = steps.values;
  else if (a.starts) a.steps = std::vector<Dim>(a.starts->size(), Dim(1));
  return a;
}

void slice_value(InferContext& ctx, const SliceArgs& a) {
  auto v = ctx.in_value(0);
  if (!v || ctx.in_rank(0) != 1 || !a.starts || a.starts->size() != 1 || !a.ends || !a.steps) return;
  const Dim &s = (*a.starts)[0], &e = (*a.ends)[0], &st = (*a.steps)[0];
  if (!s.is_const() || !e.is_const() || !st.is_const() || st.value() == 0) return;
  int64_t d = static_cast<int64_t>(v->size()), b = s.value(), step = st.value();
  int64_t n = slice_len_const(d, b, e.value(), step);
  if (b < 0) b += d;
  b = step > 0 ? clamp(b, 0, d) : clamp(b, 0, d - 1);
  std::vector<Dim> r;
  for (int64_t i = 0; i < n; ++i) r.push_back((*v)[b + i * step]);
  ctx.set_value(0, r);
}

void infer_slice(InferContext& ctx) {
  const auto& in = ctx.in_shape(0);
  if (!in) {
    ctx.set_tensor(0, ctx.in_dtype(0), std::nullopt);
    return;
  }
  int64_t r = static_cast<int64_t>(in->size());
  SliceArgs a = slice_args(ctx);
  Shape out = *in;
  if (!a.starts || !a.ends || !a.steps || (a.axes_present && !a.axes)) {
    // Which axes change is unknown (or how): those dims become unknown.
    if (a.axes && a.axes_present)
      for (int64_t ax : norm_axes(ctx, *a.axes, r)) out[ax] = Dim::unknown();
    else out = unknown_shape(r);
  } else {
    size_t n = a.starts->size();
    infer_check(ctx, a.ends->size() == n && a.steps->size() == n) << "starts, ends and steps differ in length";
    std::vector<int64_t> axes = a.axes_present ? norm_axes(ctx, *a.axes, r) : std::vector<int64_t>();
    if (!a.axes_present)
      for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
    infer_check(ctx, axes.size() == n) << "axes and starts differ in length";
    for (size_t i = 0; i < n; ++i) {
      auto len = slice_len((*in)[axes[i]], (*a.starts)[i], (*a.ends)[i], (*a.steps)[i]);
      out[axes[i]] = len ? *len : Dim::unknown();
    }
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
  slice_value(ctx, a);
}

// Sizes of Split's outputs along the axis: given, or equal parts (the last one smaller from
// opset 18, where num_outputs need not divide the dim).
std::vector<Dim> split_sizes(InferContext& ctx, const Dim& d, size_t n, bool uneven) {
  DimsArg split = dims_arg(ctx, "split", 1);
  if (split.present && split.values) {
    infer_check(ctx, split.values->size() == n)
        << "split has " << split.values->size() << " sizes for " << n << " outputs";
    return *split.values;
  }
  if (split.present) return unknown_shape(static_cast<int64_t>(n));
  Dim nn(static_cast<int64_t>(n));
  if (!uneven) {
    infer_check(ctx, !d.is_const() || d.value() % static_cast<int64_t>(n) == 0)
        << "dim " << d.str() << " does not split into " << n << " equal parts";
    return std::vector<Dim>(n, floordiv(d, nn));
  }
  Dim part = ceildiv(d, nn);
  std::vector<Dim> r(n, part);
  r.back() = d - part * Dim(static_cast<int64_t>(n - 1));
  return r;
}

void split(InferContext& ctx, bool uneven) {
  const auto& in = ctx.in_shape(0);
  size_t n = ctx.num_outputs();
  if (!in) {
    for (size_t i = 0; i < n; ++i) ctx.set_tensor(i, ctx.in_dtype(0), std::nullopt);
    return;
  }
  int64_t axis = norm_axis(ctx, ctx.node().attr_int("axis", 0), static_cast<int64_t>(in->size()));
  std::vector<Dim> sizes = split_sizes(ctx, (*in)[axis], n, uneven);
  auto v = ctx.in_value(0);
  int64_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    Shape s = *in;
    s[axis] = sizes[i];
    ctx.set_tensor(i, ctx.in_dtype(0), s);
    if (!v || in->size() != 1 || offset < 0 || !sizes[i].is_const()) {
      offset = -1;
      continue;
    }
    int64_t len = sizes[i].value();
    if (offset + len <= static_cast<int64_t>(v->size()))
      ctx.set_value(i, std::vector<Dim>(v->begin() + offset, v->begin() + offset + len));
    offset += len;
  }
}

void infer_split(InferContext& ctx) { split(ctx, false); }
void infer_split_v18(InferContext& ctx) { split(ctx, true); }

void infer_pad(InferContext& ctx) {
  const auto& in = ctx.in_shape(0);
  std::optional<Shape> out;
  if (in) {
    int64_t r = static_cast<int64_t>(in->size());
    DimsArg pads = dims_arg(ctx, ctx.node().has_attr("paddings") ? "paddings" : "pads", 1);
    IntsArg axes_arg = ints_arg(ctx, "axes", 3);
    std::optional<std::vector<int64_t>> axes = axes_arg.values;
    if (!axes_arg.present) {
      axes.emplace();
      for (int64_t i = 0; i < r; ++i) axes->push_back(i);
    }
    out = *in;
    if (pads.values && axes) {
      auto ax = norm_axes(ctx, *axes, r);
      infer_check(ctx, pads.values->size() == 2 * ax.size())
          << "pads has " << pads.values->size() << " entries for " << ax.size() << " axes";
      for (size_t i = 0; i < ax.size(); ++i)
        (*out)[ax[i]] = (*in)[ax[i]] + (*pads.values)[i] + (*pads.values)[i + ax.size()];
    } else if (axes) {
      for (int64_t a : norm_axes(ctx, *axes, r)) (*out)[a] = Dim::unknown();
    } else {
      out = unknown_shape(r);
    }
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
}

}  // namespace

void add_slice_ops(OpTable& t) {
  t.add_all({"Slice"}, kShapeArgs, infer_slice);
  t.add({"", "Split", 1, 17, kShapeArgs, infer_split});
  t.add({"", "Split", 18, OpInfo::kLatest, kShapeArgs, infer_split_v18});
  t.add_all({"Pad"}, kShapeArgs, infer_pad);
}

}  // namespace onnxc::ir
