// Data movement: ops that only move elements (Transpose, Concat, Split, Slice, Gather,
// GatherElements, Expand, Tile, Pad, Trilu, DepthToSpace, SpaceToDepth, ReverseSequence) and onnxc.Copy (a dense copy into another shape, used
// for graph outputs that are views, inputs or weights). Every output index maps to one input index;
// indices a Halide select would evaluate on a branch not taken are clamped into the input.
#include "codegen/lower/lower_util.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;
constexpr auto DM = KernelClass::DataMovement;

std::vector<HTensor> transpose(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  int r = x.rank();
  std::vector<int64_t> perm = ctx.node.attr_ints("perm");
  if (perm.empty())
    for (int i = r - 1; i >= 0; --i) perm.push_back(i);
  user_check(static_cast<int>(perm.size()) == r) << ctx.node.describe() << ": perm has " << perm.size()
                                                 << " entries for rank " << r;
  return {define("Transpose", out_shape(ctx), out_dtype(ctx), [&](const Index& o) {
    Index in(r);
    for (int k = 0; k < r; ++k) in[normalize_axis(perm[k], r, ctx.node)] = o[k];
    return x.at(in);
  })};
}

// A Concat whose parts of run-time length (any of which may be empty, with no row to clamp a read
// to) are more than the kernel can still specialize on (LowerContext::empty_reads_left): one copy
// per part, each an update over that part's own length. An empty part's copy runs no iteration and
// reads nothing; its bounds are the empty range, which Halide's checks accept. Computed root (a Func
// with updates is never inlined), and written twice (zeros first), so only the fallback.
HTensor concat_copies(LowerContext& ctx, int axis) {
  const auto& shape = out_shape(ctx);
  HTensor y = define("Concat_copies", shape, out_dtype(ctx),
                     [&](const Index&) { return Halide::Internal::make_zero(halide_type(out_dtype(ctx))); });
  const int r = static_cast<int>(shape.size());
  Index pure = onnx_index(y.func.args());
  Expr offset = 0;
  for (const HTensor& t : ctx.in) {
    if (!t.defined()) continue;
    Halide::RDom row(0, t.shape[axis], "row");
    Index src = pure, dst = pure;
    src[axis] = row;
    dst[axis] = offset + row;
    y.func(std::vector<Expr>(dst.rbegin(), dst.rend())) = t.at(src);
    offset = offset + t.shape[axis];
  }
  schedule_copies(y.func, r - 1 - axis, ctx.target);
  return y;
}

// Parts of run-time length may be empty, and then have no row to clamp a read to: Halide
// bounds-checks the read even where the select skips it. Such a part is read only where its length
// is not zero, written as the negation of the very condition the kernel specializes on
// (LowerContext::empty_reads), so that in the specialization on it being empty the read folds away,
// whatever the length's expression (Halide substitutes a plain symbol's value, and otherwise folds
// what the condition itself states).
std::vector<HTensor> concat(LowerContext& ctx) {
  const auto& shape = out_shape(ctx);
  int r = static_cast<int>(shape.size());
  int axis = normalize_axis(ctx.node.attr_int("axis", 0), r, ctx.node);
  std::vector<Expr> empty;  // per input: the condition that it is empty, where it may be
  for (const HTensor& t : ctx.in)
    empty.push_back(t.defined() && !Halide::Internal::is_const(t.shape[axis]) ? is_zero_extent(t.shape[axis]) : Expr());
  size_t runtime = 0, nonempty = 0;  // parts of run-time length; parts not known to be empty
  for (size_t k = 0; k < ctx.in.size(); ++k) {
    runtime += empty[k].defined();
    nonempty += ctx.in[k].defined() && !Halide::Internal::is_const_zero(ctx.in[k].shape[axis]);
  }
  if (nonempty > 1 && runtime > ctx.empty_reads_left) return {concat_copies(ctx, axis)};
  if (nonempty > 1)  // one part is read alone, with no choice to fold (and then it is the output)
    for (const Expr& e : empty)
      if (e.defined()) ctx.empty_reads.push_back(e);
  return {define("Concat", shape, out_dtype(ctx), [&](const Index& o) {
    struct Part {
      Expr here, value, empty;  // empty: undefined where the length is known when compiling
    };
    std::vector<Part> parts;
    Expr offset = 0;
    for (size_t k = 0; k < ctx.in.size(); ++k) {
      const HTensor& t = ctx.in[k];
      if (!t.defined() || Halide::Internal::is_const_zero(t.shape[axis])) continue;
      Index i = o;
      i[axis] = Halide::clamp(o[axis] - offset, 0, t.shape[axis] - 1);
      offset = offset + t.shape[axis];
      Part p{o[axis] < offset, t.at(i), empty[k]};
      if (p.empty.defined()) p.here = !p.empty && p.here;
      parts.push_back(p);
    }
    internal_check(!parts.empty()) << ctx.node.describe() << ": no inputs";
    if (parts.size() == 1) return parts[0].value;  // nothing else to read: an empty part, an empty output
    // The select chain tests the first part first; the last part is the rest. Where it may be
    // empty, the rest is a zero where it is: an index past the other parts is then past the output.
    const Part& last = parts.back();
    Expr v = last.value;
    if (last.empty.defined()) v = Halide::select(!last.empty, v, Halide::Internal::make_zero(v.type()));
    for (int k = static_cast<int>(parts.size()) - 2; k >= 0; --k) v = Halide::select(parts[k].here, parts[k].value, v);
    return v;
  })};
}

std::vector<HTensor> split(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  int axis = normalize_axis(ctx.node.attr_int("axis", 0), x.rank(), ctx.node);
  std::vector<HTensor> outs;
  Expr offset = 0;
  for (size_t k = 0; k < ctx.node.num_outputs(); ++k) {
    if (!ctx.node.output(k)) {
      outs.emplace_back();
      continue;
    }
    const auto& shape = out_shape(ctx, static_cast<int>(k));
    Expr off = offset;
    outs.push_back(define("Split", shape, out_dtype(ctx, static_cast<int>(k)), [&](const Index& o) {
      Index i = o;
      i[axis] = o[axis] + off;
      return x.at(i);
    }));
    offset = offset + shape[axis];
  }
  return outs;
}

// Slice parameters as Exprs: attributes before opset 10, inputs (constant or not) after.
struct SliceAxis {
  int axis;
  Expr start, step;
};

// The first element a slice along a dim of extent `dim` reads: negative starts count from the end;
// positive steps clamp into [0, dim], negative ones into [0, dim - 1].
Expr slice_start(Expr s, Expr step, Expr dim) {
  s = Halide::select(s < 0, s + dim, s);
  return Halide::select(step > 0, Halide::clamp(s, 0, dim), Halide::clamp(s, 0, dim - 1));
}

std::vector<SliceAxis> slice_axes(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  int r = x.rank();
  std::vector<Expr> starts, steps;
  std::vector<int64_t> axes;
  bool runtime_axes = false;
  if (ctx.opset < 10) {
    for (int64_t s : ctx.node.attr_ints("starts")) starts.push_back(Expr(static_cast<int32_t>(std::clamp<int64_t>(s, INT32_MIN / 2, INT32_MAX / 2))));
    axes = ctx.node.attr_ints("axes");
  } else {
    const auto& st = ctx.in[1];
    int n = st.rank() == 0 ? 1 : 0;
    if (st.rank() == 1) {
      auto c = const_ints(ctx, 1);
      user_check(c || Halide::Internal::as_const_int(st.shape[0]))
          << ctx.node.describe() << ": starts of dynamic length are not supported";
      n = c ? static_cast<int>(c->size()) : static_cast<int>(*Halide::Internal::as_const_int(st.shape[0]));
    }
    for (int k = 0; k < n; ++k) starts.push_back(element_i32(ctx, 1, k));
    if (has_input(ctx, 3)) {
      auto a = const_ints(ctx, 3);
      runtime_axes = !a.has_value();
      if (a) axes = *a;
    }
    if (has_input(ctx, 4))
      for (size_t k = 0; k < starts.size(); ++k) steps.push_back(element_i32(ctx, 4, static_cast<int>(k)));
  }
  auto step_of = [&](size_t k) { return k < steps.size() ? steps[k] : Expr(1); };
  std::vector<SliceAxis> r_axes;
  if (runtime_axes) {  // which dim each entry slices is known at run time only: select per dim
    for (int d = 0; d < r; ++d) {
      Expr start = 0, step = 1;
      for (size_t k = 0; k < starts.size(); ++k) {
        Expr a = element_i32(ctx, 3, static_cast<int>(k));
        Expr hit = Halide::select(a < 0, a + r, a) == d;
        start = Halide::select(hit, slice_start(starts[k], step_of(k), x.shape[d]), start);
        step = Halide::select(hit, step_of(k), step);
      }
      r_axes.push_back({d, start, step});
    }
    return r_axes;
  }
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  for (size_t k = 0; k < starts.size(); ++k) {
    int a = normalize_axis(axes[k], r, ctx.node);
    r_axes.push_back({a, Halide::Internal::simplify(slice_start(starts[k], step_of(k), x.shape[a])), step_of(k)});
  }
  return r_axes;
}

std::vector<HTensor> slice(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  auto axes = slice_axes(ctx);
  return {define("Slice", out_shape(ctx), out_dtype(ctx), [&](const Index& o) {
    Index i = o;
    for (const auto& a : axes) i[a.axis] = a.start + o[a.axis] * a.step;
    return x.at(i);
  })};
}

// A possibly negative index into a dim of extent `dim`, wrapped and clamped into range.
Expr wrap_index(Expr idx, Expr dim) {
  idx = Halide::cast<int32_t>(idx);
  return Halide::clamp(Halide::select(idx < 0, idx + dim, idx), 0, dim - 1);
}

std::vector<HTensor> gather(LowerContext& ctx) {
  const HTensor& data = ctx.in[0];
  const HTensor& ind = ctx.in[1];
  int axis = normalize_axis(ctx.node.attr_int("axis", 0), data.rank(), ctx.node);
  int q = ind.rank();
  return {define("Gather", out_shape(ctx), out_dtype(ctx), [&](const Index& o) {
    Index ii(o.begin() + axis, o.begin() + axis + q);
    Index i(o.begin(), o.begin() + axis);
    i.push_back(wrap_index(ind.at(ii), data.shape[axis]));
    i.insert(i.end(), o.begin() + axis + q, o.end());
    return data.at(i);
  })};
}

std::vector<HTensor> gather_elements(LowerContext& ctx) {
  const HTensor& data = ctx.in[0];
  const HTensor& ind = ctx.in[1];
  int axis = normalize_axis(ctx.node.attr_int("axis", 0), data.rank(), ctx.node);
  return {define("GatherElements", out_shape(ctx), out_dtype(ctx), [&](const Index& o) {
    Index i = o;
    i[axis] = wrap_index(ind.at(o), data.shape[axis]);
    return data.at(i);
  })};
}

std::vector<HTensor> expand(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  const auto& shape = out_shape(ctx);
  return {define("Expand", shape, out_dtype(ctx), [&](const Index& o) { return broadcast_at(x, o, shape); })};
}

std::vector<HTensor> tile(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  return {define("Tile", out_shape(ctx), out_dtype(ctx), [&](const Index& o) {
    Index i(o.size());
    for (size_t k = 0; k < o.size(); ++k)
      i[k] = Halide::Internal::is_const_one(x.shape[k]) ? Expr(0) : o[k] % x.shape[k];
    return x.at(i);
  })};
}

std::vector<HTensor> pad(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  int r = x.rank();
  std::string mode = ctx.node.attr_string("mode", "constant");
  std::vector<Expr> begin(r, Expr(0));
  std::vector<int64_t> axes;
  if (ctx.opset < 11) {
    auto p = ctx.node.attr_ints("pads");
    for (int k = 0; k < r && k < static_cast<int>(p.size()); ++k) begin[k] = Expr(static_cast<int32_t>(p[k]));
  } else {
    std::optional<std::vector<int64_t>> a;
    if (has_input(ctx, 3)) a = const_ints(ctx, 3);
    if (has_input(ctx, 3) && !a) {
      // Axes given at run time (a count fixed by its shape): each dim takes the pad of the entry
      // naming it, or none.
      const HTensor& ax = ctx.in[3];
      user_check(ax.rank() == 1 && Halide::Internal::as_const_int(ax.shape[0]))
          << ctx.node.describe() << ": run-time axes need a fixed count";
      int n = static_cast<int>(*Halide::Internal::as_const_int(ax.shape[0]));
      for (int j = 0; j < n; ++j) {
        Expr aj = element_i32(ctx, 3, j);
        aj = Halide::select(aj < 0, aj + r, aj);
        for (int k = 0; k < r; ++k) begin[k] = Halide::select(aj == k, element_i32(ctx, 1, j), begin[k]);
      }
    } else {
      if (a) axes = *a;
      if (axes.empty())
        for (int k = 0; k < r; ++k) axes.push_back(k);
      for (size_t k = 0; k < axes.size(); ++k)
        begin[normalize_axis(axes[k], r, ctx.node)] = element_i32(ctx, 1, static_cast<int>(k));
    }
  }
  Halide::Type ty = halide_type(x.dtype);
  Expr value = Halide::Internal::make_zero(ty);
  if (ctx.opset < 11) value = literal(ty, ctx.node.attr_float("value", 0));
  else if (has_input(ctx, 2)) value = element(ctx, 2, 0);
  user_check(mode == "constant" || mode == "edge" || mode == "reflect" || mode == "wrap")
      << ctx.node.describe() << ": pad mode '" << mode << "' is not supported";
  return {define("Pad", out_shape(ctx), out_dtype(ctx), [&](const Index& o) {
    Index i(r);
    Expr inside = Halide::Internal::const_true();
    for (int k = 0; k < r; ++k) {
      Expr j = o[k] - begin[k], n = x.shape[k];
      if (mode == "reflect") {
        Expr period = Halide::max(2 * n - 2, 1);
        Expr m = j % period;  // Euclidean: in [0, period)
        // The clamp is a no-op that tells bounds inference the index stays inside the input.
        j = Halide::clamp(Halide::select(m >= n, period - m, m), 0, n - 1);
      } else if (mode == "wrap") {
        j = Halide::clamp(j % n, 0, n - 1);
      } else {
        inside = inside && j >= 0 && j < n;
        j = Halide::clamp(j, 0, n - 1);
      }
      i[k] = j;
    }
    Expr v = x.at(i);
    return mode == "constant" ? Halide::select(inside, v, Halide::cast(v.type(), value)) : v;
  })};
}

std::vector<HTensor> trilu(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  int r = x.rank();
  user_check(r >= 2) << ctx.node.describe() << ": Trilu needs rank >= 2";
  Expr k = has_input(ctx, 1) ? element_i32(ctx, 1, 0) : Expr(0);
  bool upper = ctx.node.attr_int("upper", 1) != 0;
  return {define("Trilu", out_shape(ctx), out_dtype(ctx), [&](const Index& o) {
    Expr d = o[r - 1] - o[r - 2];
    Expr keep = upper ? d >= k : d <= k;
    Expr v = x.at(o);
    return Halide::select(keep, v, Halide::Internal::make_zero(v.type()));
  })};
}

// DepthToSpace (DCR or CRD) and SpaceToDepth on [N, C, H, W] with block size b.
std::vector<HTensor> depth_to_space(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  int32_t b = static_cast<int32_t>(ctx.node.attr_int("blocksize", 1));
  bool crd = ctx.node.attr_string("mode", "DCR") == "CRD";
  const auto& shape = out_shape(ctx);
  Expr c_out = shape[1];
  return {define("DepthToSpace", shape, out_dtype(ctx), [&](const Index& o) {
    Expr bh = o[2] % b, bw = o[3] % b;
    Expr c = crd ? o[1] * (b * b) + bh * b + bw : (bh * b + bw) * c_out + o[1];
    return x.at({o[0], c, o[2] / b, o[3] / b});
  })};
}

std::vector<HTensor> space_to_depth(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  int32_t b = static_cast<int32_t>(ctx.node.attr_int("blocksize", 1));
  Expr c_in = x.shape[1];
  // Opset 28 adds mode: CRD orders the output channels (c, block row, block col), DCR (the only
  // order before 28) (block row, block col, c).
  bool crd = ctx.node.attr_string("mode", "DCR") == "CRD";
  return {define("SpaceToDepth", out_shape(ctx), out_dtype(ctx), [&](const Index& o) {
    Expr blk = crd ? o[1] % (b * b) : o[1] / c_in, c = crd ? o[1] / (b * b) : o[1] % c_in;
    return x.at({o[0], c, o[2] * b + blk / b, o[3] * b + blk % b});
  })};
}

// ReverseSequence: the first sequence_lens[b] steps of each batch entry reversed along time_axis.
std::vector<HTensor> reverse_sequence(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  int r = x.rank();
  int bax = normalize_axis(ctx.node.attr_int("batch_axis", 1), r, ctx.node);
  int tax = normalize_axis(ctx.node.attr_int("time_axis", 0), r, ctx.node);
  return {define("ReverseSequence", x.shape, out_dtype(ctx), [&](const Index& o) {
    Expr len = Halide::clamp(Halide::cast<int32_t>(ctx.in[1].at({o[bax]})), 0, x.shape[tax]);
    Index i = o;
    i[tax] = Halide::clamp(Halide::select(o[tax] < len, len - 1 - o[tax], o[tax]), 0, x.shape[tax] - 1);
    return x.at(i);
  })};
}

// Row-major linear index of `o` in `shape`, and back.
Expr linearize(const Index& o, const std::vector<Expr>& shape) {
  Expr lin = 0;
  for (size_t k = 0; k < o.size(); ++k) lin = lin * shape[k] + o[k];
  return lin;
}
Index delinearize(Expr lin, const std::vector<Expr>& shape) {
  Index i(shape.size());
  for (int k = static_cast<int>(shape.size()) - 1; k >= 0; --k) {
    i[k] = k == 0 ? lin : lin % shape[k];
    if (k) lin = lin / shape[k];
  }
  return i;
}

bool provably_equal(const Expr& a, const Expr& b) { return Halide::Internal::can_prove(a == b); }

// a / b when b provably divides a (a symbolic extent like batch·768 over 64 included); undefined if not.
Expr exact_quotient(const Expr& a, const Expr& b) {
  Expr q = Halide::Internal::simplify(a / b);
  return Halide::Internal::can_prove(q * b == a) ? q : Expr();
}

// The input index of output element `o` of a row-major reshape from `in` to `out`, matched as
// mixed-radix digits from the innermost dim outwards. Where one extent divides the other, an output
// index either adds `index · stride` to the input dim it falls in (a split) or gives its remainder
// and passes the quotient on (a merge), so splitting and merging dims stay affine in the inner dims
// (torch's [s, b, h·d] -> [s, b·h, d] becomes (s, i / h, (i % h)·d + j), divisions only in the
// outer index). Unit dims map to index 0. Returns an empty index when the extents do not nest that
// way; the caller then goes through the flat index.
Index reshape_index(const Index& o, const std::vector<Expr>& out, const std::vector<Expr>& in) {
  Index r(in.size());
  int i = static_cast<int>(out.size()) - 1;
  Expr digit, digit_extent;  // the part of an output index not yet placed, and its extent
  for (int k = static_cast<int>(in.size()) - 1; k >= 0; --k) {
    Expr acc = 0, stride = 1, left = in[k];  // input dim k: its index so far, and the extent still to fill
    while (!Halide::Internal::is_const_one(left)) {
      if (!digit.defined()) {
        while (i >= 0 && Halide::Internal::is_const_one(out[i])) --i;
        if (i < 0) return {};
        digit = o[i];
        digit_extent = out[i];
        --i;
      }
      if (provably_equal(digit_extent, left)) {
        acc = acc + digit * stride;
        digit = Expr();
        break;
      }
      if (Expr q = exact_quotient(left, digit_extent); q.defined()) {  // the output dim splits this one
        acc = acc + digit * stride;
        stride = stride * digit_extent;
        left = q;
        digit = Expr();
      } else if (Expr q2 = exact_quotient(digit_extent, left); q2.defined()) {  // it merges this one with outer dims
        acc = acc + (digit % left) * stride;
        digit = digit / left;
        digit_extent = q2;
        break;
      } else {
        return {};
      }
    }
    r[k] = Halide::Internal::simplify(acc);
  }
  if (digit.defined()) return {};
  for (; i >= 0; --i)
    if (!Halide::Internal::is_const_one(out[i])) return {};
  return r;
}

// onnxc.Copy, and the view ops when a kernel computes them: the input's elements in row-major
// order, into the output's shape.
std::vector<HTensor> copy(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  const auto& shape = out_shape(ctx);
  bool same = x.rank() == static_cast<int>(shape.size());
  for (int k = 0; same && k < x.rank(); ++k) same = Halide::Internal::equal(x.shape[k], shape[k]);
  return {define("Copy", shape, out_dtype(ctx), [&](const Index& o) {
    if (same) return x.at(o);
    Index i = reshape_index(o, shape, x.shape);
    return x.at(i.empty() && !x.shape.empty() ? delinearize(linearize(o, shape), x.shape) : i);
  })};
}

Registrar reg_Transpose("", "Transpose", DM, transpose);
Registrar reg_Concat("", "Concat", DM, concat);
Registrar reg_Split("", "Split", DM, split);
Registrar reg_Slice("", "Slice", DM, slice);
Registrar reg_Gather("", "Gather", DM, gather);
Registrar reg_GatherElements("", "GatherElements", DM, gather_elements);
Registrar reg_Expand("", "Expand", DM, expand);
Registrar reg_Tile("", "Tile", DM, tile);
Registrar reg_Pad("", "Pad", DM, pad);
Registrar reg_Trilu("", "Trilu", DM, trilu);
Registrar reg_DepthToSpace("", "DepthToSpace", DM, depth_to_space);
Registrar reg_SpaceToDepth("", "SpaceToDepth", DM, space_to_depth);
Registrar reg_ReverseSequence("", "ReverseSequence", DM, reverse_sequence);
Registrar reg_Copy("onnxc", "Copy", DM, copy);
// The view ops, for when one must run as a kernel (they are normally views: no kernel at all).
Registrar reg_Reshape("", "Reshape", DM, copy);
Registrar reg_Flatten("", "Flatten", DM, copy);
Registrar reg_Squeeze("", "Squeeze", DM, copy);
Registrar reg_Unsqueeze("", "Unsqueeze", DM, copy);

}  // namespace

}  // namespace onnxc::codegen
