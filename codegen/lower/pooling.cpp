// Pooling: MaxPool (with its optional Indices output), AveragePool (count_include_pad), LpPool and
// the Global* forms. Windows of up to 32 positions are unrolled into one vectorizable expression;
// larger ones (global pooling) reduce over an RDom. Positions outside the input never count; with
// count_include_pad, positions inside the declared pads count as zeros.
#include <limits>

#include "codegen/lower/window.h"
#include "codegen/schedule/pool.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;

Window read_window_impl(const LowerContext& ctx, const HTensor& x, const std::vector<Expr>& out,
                        std::vector<int64_t> kernel) {
  const ir::Node& n = ctx.node;
  int sp = x.rank() - 2;
  Window w;
  w.kernel = kernel.empty() ? n.attr_ints("kernel_shape") : kernel;
  user_check(static_cast<int>(w.kernel.size()) == sp) << n.describe() << ": kernel_shape needs " << sp << " entries";
  w.strides = n.attr_ints("strides", std::vector<int64_t>(sp, 1));
  w.dilations = n.attr_ints("dilations", std::vector<int64_t>(sp, 1));
  std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  std::vector<int64_t> pads = n.attr_ints("pads", std::vector<int64_t>(2 * sp, 0));
  for (int i = 0; i < sp; ++i) {
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      Expr in = x.shape[i + 2];
      Expr total = Halide::max((out[i + 2] - 1) * static_cast<int32_t>(w.strides[i]) +
                                   static_cast<int32_t>((w.kernel[i] - 1) * w.dilations[i] + 1) - in, 0);
      Expr small = total / 2, big = total - total / 2;
      w.pad_begin.push_back(auto_pad == "SAME_UPPER" ? small : big);
      w.pad_end.push_back(auto_pad == "SAME_UPPER" ? big : small);
    } else if (auto_pad == "VALID") {
      w.pad_begin.push_back(0);
      w.pad_end.push_back(0);
    } else {
      w.pad_begin.push_back(static_cast<int32_t>(pads[i]));
      w.pad_end.push_back(static_cast<int32_t>(pads[i + sp]));
    }
  }
  return w;
}

// Every kernel offset vector of the window, in row-major order.
std::vector<std::vector<int>> offsets(const Window& w) {
  std::vector<std::vector<int>> all = {{}};
  for (int i = 0; i < w.spatial(); ++i) {
    std::vector<std::vector<int>> next;
    for (const auto& o : all)
      for (int r = 0; r < w.kernel[i]; ++r) {
        auto v = o;
        v.push_back(r);
        next.push_back(v);
      }
    all = std::move(next);
  }
  return all;
}

enum class Pool { Max, Avg, Lp };

// LpPool's p, an integer >= 1.
int64_t lp_order(const ir::Node& n) {
  int64_t p = n.attr_int("p", 2);
  user_check(p >= 1) << n.describe() << ": p must be a positive integer, got " << p;
  return p;
}

// |v|^p by products, and s^(1/p) with sqrt for p = 2: Halide's pow_f32 returned 2^64 for an
// infinite or NaN argument (ONNX's reference, numpy's power, gives inf and NaN).
Expr lp_power(const Expr& v, int64_t p) {
  Expr r, b = Halide::abs(v);
  for (; p > 0; p >>= 1, b = b * b)
    if (p & 1) r = r.defined() ? r * b : b;
  return r;
}
Expr lp_root(const Expr& s, int64_t p) {
  if (p == 1) return s;
  if (p == 2) return Halide::sqrt(s);
  return Halide::select(Halide::is_nan(s) || Halide::is_inf(s) || s == 0, s, Halide::pow(s, literal(s.type(), 1.0 / p)));
}

// The largest of `v` over the RDom it reads, NaN when any is NaN (Halide's maximum, as the x86 max
// instruction, keeps a NaN only when it comes last).
Expr maximum_nan(const Expr& v) {
  if (!v.type().is_float()) return Halide::maximum(v);
  return nan_where(Halide::maximum(Halide::cast<uint8_t>(Halide::is_nan(v))) != 0, Halide::maximum(v));
}

// The pooled value at output index `o` (ONNX order, [n, c, spatial...]).
Expr pool_at(const LowerContext& ctx, const HTensor& x, const Window& w, Pool kind, const Index& o) {
  Halide::Type ty = halide_type(x.dtype), at = kind == Pool::Max ? ty : accumulator_type(ty);
  bool include_pad = ctx.node.attr_int("count_include_pad", 0) != 0;
  const int64_t p = kind == Pool::Lp ? lp_order(ctx.node) : 2;
  // Max: the plain maximum and whether any tap is NaN, made NaN once at the end (nan_where), instead
  // of a NaN-keeping max per tap (two tests and two selects each).
  Expr acc, any_nan, count = Halide::cast(at, 0);
  const bool float_max = kind == Pool::Max && at.is_float();
  auto visit = [&](const std::vector<Expr>& r) {
    Index i = {o[0], o[1]};
    Expr valid = Halide::Internal::const_true(), in_pads = Halide::Internal::const_true();
    for (int s = 0; s < w.spatial(); ++s) {
      Expr pos = w.input_pos(s, o[s + 2], r[s]);
      valid = valid && pos >= 0 && pos < x.shape[s + 2];
      in_pads = in_pads && pos >= -w.pad_begin[s] && pos < x.shape[s + 2] + w.pad_end[s];
      i.push_back(Halide::clamp(pos, 0, x.shape[s + 2] - 1));
    }
    Expr v = Halide::cast(at, x.at(i));
    Expr term;
    if (kind == Pool::Max) term = Halide::select(valid, v, at.min());
    else if (kind == Pool::Avg) term = Halide::select(valid, v, Halide::cast(at, 0));
    else term = Halide::select(valid, lp_power(v, p), Halide::cast(at, 0));
    if (float_max) any_nan = any_nan.defined() ? any_nan || Halide::is_nan(term) : Halide::is_nan(term);
    acc = !acc.defined() ? term : kind == Pool::Max ? (float_max ? Halide::max(acc, term) : max_nan(acc, term)) : acc + term;
    count = count + Halide::cast(at, include_pad ? in_pads : valid);
  };
  int64_t volume = 1;
  for (int64_t k : w.kernel) volume *= k;
  // Unrolled windows compile in time that grows faster than their size: 200 taps (MaxPool1d, kernel
  // 200, dilation 10) took over 300 s in Halide and LLVM; 32 covers the usual 2x2 to 5x5 windows.
  if (volume <= 32) {
    for (const auto& off : offsets(w)) visit(std::vector<Expr>(off.begin(), off.end()));
    if (float_max) acc = nan_where(any_nan, acc);
  } else {  // large windows: an inline reduction
    std::vector<Halide::Range> ranges;
    for (int64_t k : w.kernel) ranges.emplace_back(0, static_cast<int32_t>(k));
    Halide::RDom rd(Halide::Region(ranges.begin(), ranges.end()));
    std::vector<Expr> r;
    for (int s = 0; s < rd.dimensions(); ++s) r.push_back(rd[s]);
    Expr a0, c0;
    visit(r);
    a0 = acc;
    c0 = count;
    acc = kind == Pool::Max ? maximum_nan(a0) : Halide::sum(a0);
    count = Halide::sum(c0);
  }
  if (kind == Pool::Avg) acc = acc / Halide::max(count, Halide::cast(at, 1));
  if (kind == Pool::Lp) acc = lp_root(acc, p);
  return acc;
}

// Global pooling: a reduction over an RDom as wide as the input's spatial extents, static or known
// only at run time (one library for every image size). One sum per (image, channel), in parallel:
// the output's innermost dims have extent 1, and the default schedule, vectorizing them, computed 16
// lanes of which one was kept.
HTensor global_max_or_gpu(LowerContext& ctx, const HTensor& x, Pool kind, const std::vector<Expr>& shape) {
  ctx.schedule = [](Halide::Func out, const Halide::Target& t) {
    if (t.has_gpu_feature()) return schedule_output(out, KernelClass::Elementwise, t);
    out.parallel(fuse_vars(out, out.args()), 64, Halide::TailStrategy::GuardWithIf);
  };
  Halide::Type ty = halide_type(x.dtype), at = kind == Pool::Max ? ty : accumulator_type(ty);
  std::vector<Halide::Range> ranges;
  for (int i = 2; i < x.rank(); ++i) ranges.emplace_back(0, x.shape[i]);
  Halide::RDom r(Halide::Region(ranges.begin(), ranges.end()));
  const int64_t p = kind == Pool::Lp ? lp_order(ctx.node) : 2;
  return define(ctx.node.op_type(), shape, out_dtype(ctx), [&](const Index& o) {
    Index i = {o[0], o[1]};
    Expr count = Halide::cast(at, 1);
    for (int s = 0; s < r.dimensions(); ++s) {
      i.push_back(r[s]);
      count = count * Halide::cast(at, x.shape[s + 2]);
    }
    Expr v = Halide::cast(at, x.at(i));
    if (kind == Pool::Max) return Halide::cast(ty, maximum_nan(v));
    if (kind == Pool::Avg) return Halide::cast(ty, Halide::sum(v) / Halide::max(count, Halide::cast(at, 1)));
    return Halide::cast(ty, lp_root(Halide::sum(lp_power(v, p)), p));
  });
}

// Global average and Lp pooling on a CPU: the sum over a channel's plane, as one scalar chain, waited
// ~4 cycles per element on the add before it (a 112×112 plane: 50k cycles). Here the innermost
// spatial dim is summed in vector lanes (rows read with dense loads, the last vector of a row masked),
// then the lanes: ceil(W / lanes)·H vector adds per channel (a short static row: one vector as wide
// as the row, H adds, then W lane adds). ONNX fixes no order for the sum; each add
// stays IEEE (as for the row sums of schedule.cpp's vectorize_row_sum). Max keeps the serial form:
// reordering a max could lose a NaN.
HTensor global_pool(LowerContext& ctx, const HTensor& x, Pool kind, const std::vector<Expr>& shape) {
  if (kind == Pool::Max || is_gpu(ctx.target) || !ir::dtype_is_float(x.dtype)) return global_max_or_gpu(ctx, x, kind, shape);
  const int sp = x.rank() - 2;
  Halide::Type ty = halide_type(x.dtype), at = accumulator_type(ty);
  std::vector<Halide::Range> ranges;  // innermost spatial dim first: the loop over it is innermost
  for (int s = sp - 1; s >= 0; --s) ranges.emplace_back(0, x.shape[s + 2]);
  Halide::RDom r(Halide::Region(ranges.begin(), ranges.end()), "gpool_r");
  const int64_t p = kind == Pool::Lp ? lp_order(ctx.node) : 2;
  Halide::Var c("c"), n("n");
  Index i = {n, c};
  Expr count = Halide::cast(at, 1);
  for (int s = 0; s < sp; ++s) {
    i.push_back(r[sp - 1 - s]);
    count = count * Halide::cast(at, x.shape[s + 2]);
  }
  Expr v = Halide::cast(at, x.at(i));
  Halide::Func total("gpool_sum");
  total(c, n) = Halide::cast(at, 0);
  const int lanes = std::max(1, ctx.target.natural_vector_size(at));
  const int64_t* width = Halide::Internal::as_const_int(x.shape[sp + 1]);
  if (width && *width > 1 && *width % lanes != 0 && *width <= 4 * lanes) {
    // A static row that is not a whole number of vectors (SE blocks' 7, 14, 28, 56): one vector as
    // wide as the row collects the column sums over the other dims, then its lanes are added. Split
    // into vectors, the row's last (or only) vector was masked, and so was each store of the
    // accumulator, which then lived in memory and waited on store forwarding for every row.
    std::vector<Halide::Range> outer(ranges.begin() + 1, ranges.end());
    if (outer.empty()) outer.emplace_back(0, 1);
    Halide::RDom ro(Halide::Region(outer.begin(), outer.end()), "gpool_rows");
    Halide::RDom rw(0, static_cast<int32_t>(*width), "gpool_w");
    Halide::Var lane("gpool_lane");
    Index li = {n, c};
    for (int s = 0; s + 1 < sp; ++s) li.push_back(ro[sp - 2 - s]);
    li.push_back(lane);
    Expr lv = Halide::cast(at, x.at(li));
    Halide::Func cols("gpool_cols");
    cols(lane, c, n) = Halide::cast(at, 0);
    cols(lane, c, n) += kind == Pool::Avg ? lv : lp_power(lv, p);
    total(c, n) += cols(rw, c, n);
    total.compute_root();
    cols.compute_root();
    const int32_t w32 = static_cast<int32_t>(*width);
    ctx.schedule = [total, cols, w32](Halide::Func out, const Halide::Target&) mutable {
      Halide::Var po("gpool_po"), pi("gpool_pi");
      out.split(fuse_vars(out, out.args()), po, pi, 64, Halide::TailStrategy::GuardWithIf).parallel(po);
      total.compute_at(out, pi);
      Halide::Var l = cols.args()[0];
      cols.compute_at(out, pi).bound(l, 0, w32).vectorize(l);
      cols.update().vectorize(l);
    };
  } else {
    total(c, n) += kind == Pool::Avg ? v : lp_power(v, p);
    ctx.schedule = [total, r](Halide::Func out, const Halide::Target& t) mutable {
      const int vec = std::max(1, t.natural_vector_size(total.output_types()[0]));
      Halide::Var po("gpool_po"), pi("gpool_pi"), lane("gpool_lane");
      Halide::Var fused = fuse_vars(out, out.args());
      out.split(fused, po, pi, 64, Halide::TailStrategy::GuardWithIf).parallel(po);
      total.compute_at(out, pi);
      Halide::RVar rx(r[0].name()), ro("gpool_ro"), ri("gpool_ri");
      Halide::Func lanes = total.update().split(rx, ro, ri, vec, Halide::TailStrategy::GuardWithIf).rfactor(ri, lane);
      lanes.compute_at(out, pi).vectorize(lane);
      lanes.update().vectorize(lane);
    };
  }
  total.compute_root();  // until the schedule places it
  return define(ctx.node.op_type(), shape, out_dtype(ctx), [&](const Index& o) {
    Expr sum = total(o[1], o[0]);
    if (kind == Pool::Avg) return Halide::cast(ty, sum / Halide::max(count, Halide::cast(at, 1)));
    return Halide::cast(ty, lp_root(sum, p));
  });
}

// MaxPool over 2-D float32 images on a CPU, without Indices: separable. Each input row's horizontal
// windows first (rows), then the vertical maximum of those over the window's rows: kh + kw taps per
// output instead of kh·kw, every tap a dense (or evenly spaced) vector load. The taps read a copy of
// the image with -inf around it (padded), so no tap is clamped or selected: padding never wins a
// maximum (max(-inf, v) = v for every v but NaN), a window entirely in the pads gives -inf as
// pool_at's does, and a NaN in a window gives NaN at both stages (nan_where over an "any tap is
// NaN" flag, as pool_at). The direct form, with a clamped read and a select per tap, loaded each
// tap as a gather (ResNet's 3×3/2 pool ran at 3.5× ONNX Runtime's time).
bool max_pool_rows_fits(const LowerContext& ctx, const HTensor& x, const Window& w) {
  constexpr int64_t kMaxTaps = 32;  // per dim, unrolled
  return !is_gpu(ctx.target) && x.dtype == ir::DType::Float32 && w.spatial() == 2 && !ctx.node.output(1) &&
         w.kernel[0] <= kMaxTaps && w.kernel[1] <= kMaxTaps;
}

HTensor max_pool_rows(LowerContext& ctx, const HTensor& x, const Window& w, const std::vector<Expr>& shape) {
  Halide::Var ix("mp_ix"), iy("mp_iy"), ox("mp_ox"), oy("mp_oy"), c("mp_c"), n("mp_n");
  MaxPoolRowsFuncs g;
  g.padded = Halide::Func("maxpool_padded");
  g.padded(ix, iy, c, n) = Expr(-std::numeric_limits<float>::infinity());
  g.interior = Halide::RDom({{0, x.shape[3]}, {0, x.shape[2]}}, "maxpool_image");
  g.padded(g.interior.x, g.interior.y, c, n) = x.at({n, c, g.interior.y, g.interior.x});
  // The maximum over the taps of one dim, NaN when any tap is.
  auto window_max = [](int64_t taps, const std::function<Expr(int32_t)>& tap) {
    Expr m, any_nan;
    for (int32_t r = 0; r < taps; ++r) {
      Expr v = tap(r);
      m = m.defined() ? Halide::max(m, v) : v;
      any_nan = any_nan.defined() ? any_nan || Halide::is_nan(v) : Halide::is_nan(v);
    }
    return nan_where(any_nan, m);
  };
  g.rows = Halide::Func("maxpool_rows");
  g.rows(ox, iy, c, n) = window_max(w.kernel[1], [&](int32_t r) { return g.padded(w.input_pos(1, ox, r), iy, c, n); });
  Halide::Func out("maxpool");
  out(ox, oy, c, n) = window_max(w.kernel[0], [&](int32_t r) { return g.rows(ox, w.input_pos(0, oy, r), c, n); });
  ctx.schedule = [g](Halide::Func output, const Halide::Target& t) { schedule_max_pool_rows(g, output, t); };
  g.padded.compute_root();  // until the schedule places them
  g.rows.compute_root();
  return HTensor{out, shape, out_dtype(ctx)};
}

LowerFn pool(Pool kind, bool global) {
  return [kind, global](LowerContext& ctx) -> std::vector<HTensor> {
    const HTensor& x = ctx.in[0];
    user_check(x.rank() >= 3) << ctx.node.describe() << ": pooling needs [N, C, spatial...]";
    const auto& shape = out_shape(ctx);
    if (global) return {global_pool(ctx, x, kind, shape)};
    Window w = read_window(ctx, x, shape);
    if (kind == Pool::Max && max_pool_rows_fits(ctx, x, w)) return {max_pool_rows(ctx, x, w, shape)};
    std::vector<HTensor> outs = {define(ctx.node.op_type(), shape, out_dtype(ctx), [&](const Index& o) {
      return pool_at(ctx, x, w, kind, o);
    })};
    if (kind == Pool::Max && ctx.node.output(1)) {  // Indices: flat input index of the first maximum
      bool column_major = ctx.node.attr_int("storage_order", 0) != 0;
      outs.push_back(define("MaxPoolIndices", out_shape(ctx, 1), ir::DType::Int64, [&](const Index& o) {
        Expr best = outs[0].at(o), found = Halide::cast<int64_t>(-1);
        const bool is_float = best.type().is_float();  // a NaN maximum: the index of the first NaN
        auto all = offsets(w);
        for (auto it = all.rbegin(); it != all.rend(); ++it) {  // reverse: the first match wins
          Index i = {o[0], o[1]};
          Expr valid = Halide::Internal::const_true();
          for (int s = 0; s < w.spatial(); ++s) {
            Expr pos = w.input_pos(s, o[s + 2], (*it)[s]);
            valid = valid && pos >= 0 && pos < x.shape[s + 2];
            i.push_back(Halide::clamp(pos, 0, x.shape[s + 2] - 1));
          }
          Expr flat = Halide::cast<int64_t>(i[0]) * Halide::cast<int64_t>(x.shape[1]) + Halide::cast<int64_t>(i[1]);
          Expr spatial = Halide::cast<int64_t>(0), stride = Halide::cast<int64_t>(1);
          for (int s = w.spatial() - 1; s >= 0; --s) {  // row-major spatial offset
            spatial = spatial + Halide::cast<int64_t>(i[s + 2]) * stride;
            stride = stride * Halide::cast<int64_t>(x.shape[s + 2]);
          }
          if (column_major) {
            spatial = Halide::cast<int64_t>(0);
            Expr cs = Halide::cast<int64_t>(1);
            for (int s = 0; s < w.spatial(); ++s) {
              spatial = spatial + Halide::cast<int64_t>(i[s + 2]) * cs;
              cs = cs * Halide::cast<int64_t>(x.shape[s + 2]);
            }
          }
          Expr hit = x.at(i) == best;
          if (is_float) hit = hit || (Halide::is_nan(best) && Halide::is_nan(x.at(i)));
          found = Halide::select(valid && hit, flat * stride + spatial, found);
        }
        return found;
      }));
    }
    return outs;
  };
}

constexpr auto DM = KernelClass::Reduction;  // not inlined into consumers: windows overlap
Registrar reg_MaxPool("", "MaxPool", DM, pool(Pool::Max, false));
Registrar reg_AveragePool("", "AveragePool", DM, pool(Pool::Avg, false));
Registrar reg_LpPool("", "LpPool", DM, pool(Pool::Lp, false));
Registrar reg_GlobalMaxPool("", "GlobalMaxPool", DM, pool(Pool::Max, true));
Registrar reg_GlobalAveragePool("", "GlobalAveragePool", DM, pool(Pool::Avg, true));
Registrar reg_GlobalLpPool("", "GlobalLpPool", DM, pool(Pool::Lp, true));

}  // namespace

Window read_window(const LowerContext& ctx, const HTensor& x, const std::vector<Expr>& out, std::vector<int64_t> kernel) {
  return read_window_impl(ctx, x, out, std::move(kernel));
}

}  // namespace onnxc::codegen
