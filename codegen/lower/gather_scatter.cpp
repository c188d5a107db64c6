// Data-dependent indexing: GatherND, ScatterElements (and its deprecated alias Scatter), ScatterND,
// OneHot, CumSum, CumProd, TensorScatter. Scatters copy the data, then apply one update definition over the updates' index
// space, with the written position computed from the indices tensor (reduction none/add/mul/max/min).
#include "codegen/lower/lower_util.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;
using Halide::Func;

Expr wrap(Expr idx, Expr dim) {
  idx = Halide::cast<int32_t>(idx);
  return Halide::clamp(Halide::select(idx < 0, idx + dim, idx), 0, dim - 1);
}

int static_extent(const LowerContext& ctx, const Expr& e, const char* what) {
  auto k = Halide::Internal::as_const_int(e);
  user_check(k != nullptr) << ctx.node.describe() << ": " << what << " of dynamic extent is not supported";
  return static_cast<int>(*k);
}

std::vector<HTensor> gather_nd(LowerContext& ctx) {
  const HTensor& data = ctx.in[0];
  const HTensor& ind = ctx.in[1];
  int b = static_cast<int>(ctx.node.attr_int("batch_dims", 0));
  int q = ind.rank(), k = static_extent(ctx, ind.shape[q - 1], "the last dim of indices");
  return {define("GatherND", out_shape(ctx), out_dtype(ctx), [&](const Index& o) {
    Index di(o.begin(), o.begin() + b);  // batch dims
    Index ii(o.begin(), o.begin() + q - 1);
    for (int j = 0; j < k; ++j) {
      Index t = ii;
      t.push_back(j);
      di.push_back(wrap(ind.at(t), data.shape[b + j]));
    }
    di.insert(di.end(), o.begin() + q - 1, o.end());
    return data.at(di);
  })};
}

Expr combine(const std::string& reduction, Expr old, Expr v, const ir::Node& n) {
  if (reduction == "none") return v;
  if (reduction == "add") return old + v;
  if (reduction == "mul") return old * v;
  if (reduction == "max") return Halide::max(old, v);
  if (reduction == "min") return Halide::min(old, v);
  user_error << n.describe() << ": unknown reduction '" << reduction << "'";
}

HTensor scatter_result(LowerContext& ctx, Func out) {
  ctx.schedule = [](Func output, const Halide::Target& t) {
    // The update writes data-dependent positions: keep it serial; vectorize only the copy.
    int w = vector_width(output, t);
    if (w > 1 && output.dimensions() > 0)
      output.vectorize(output.args()[0], w, Halide::TailStrategy::GuardWithIf);
    // Serial on purpose; saying so keeps Halide from warning the user about an unscheduled update.
    for (int u = 0; u < output.num_update_definitions(); ++u) output.update(u).unscheduled();
  };
  HTensor h;
  h.func = out;
  h.shape = ctx.in[0].shape;
  h.dtype = ctx.in[0].dtype;
  return h;
}

// out = data; out[idx with axis replaced by indices[j]] (op)= updates[j] for every j.
std::vector<HTensor> scatter_elements(LowerContext& ctx) {
  const HTensor& data = ctx.in[0];
  const HTensor& ind = ctx.in[1];
  const HTensor& upd = ctx.in[2];
  int r = data.rank(), axis = normalize_axis(ctx.node.attr_int("axis", 0), r, ctx.node);
  auto vars = make_vars(r);
  Func out("ScatterElements");
  out(vars) = data.at(onnx_index(vars));
  std::vector<Halide::Range> ranges;
  for (const Expr& e : upd.shape) ranges.emplace_back(0, e);
  Halide::RDom rd(Halide::Region(ranges.begin(), ranges.end()));
  Index j;
  for (int k = 0; k < rd.dimensions(); ++k) j.push_back(rd[k]);
  Index dst = j;
  dst[axis] = wrap(ind.at(j), data.shape[axis]);
  auto args = RowSpace::at(dst);
  out(args) = combine(ctx.node.attr_string("reduction", "none"), out(args), upd.at(j), ctx.node);
  return {scatter_result(ctx, out)};
}

// out = data; out[indices[j, :k], rest...] (op)= updates[j, rest...].
std::vector<HTensor> scatter_nd(LowerContext& ctx) {
  const HTensor& data = ctx.in[0];
  const HTensor& ind = ctx.in[1];
  const HTensor& upd = ctx.in[2];
  int q = ind.rank(), k = static_extent(ctx, ind.shape[q - 1], "the last dim of indices");
  auto vars = make_vars(data.rank());
  Func out("ScatterND");
  out(vars) = data.at(onnx_index(vars));
  std::vector<Halide::Range> ranges;
  for (const Expr& e : upd.shape) ranges.emplace_back(0, e);
  Halide::RDom rd(Halide::Region(ranges.begin(), ranges.end()));
  Index u;
  for (int d = 0; d < rd.dimensions(); ++d) u.push_back(rd[d]);
  Index dst;
  for (int c = 0; c < k; ++c) {
    Index t(u.begin(), u.begin() + q - 1);
    t.push_back(c);
    dst.push_back(wrap(ind.at(t), data.shape[c]));
  }
  dst.insert(dst.end(), u.begin() + q - 1, u.end());
  auto args = RowSpace::at(dst);
  out(args) = combine(ctx.node.attr_string("reduction", "none"), out(args), upd.at(u), ctx.node);
  return {scatter_result(ctx, out)};
}

// out[..., j (at axis), ...] = values[1] if wrap(indices[...]) == j else values[0].
std::vector<HTensor> one_hot(LowerContext& ctx) {
  const HTensor& ind = ctx.in[0];
  const auto& shape = out_shape(ctx);
  int r = static_cast<int>(shape.size()), axis = normalize_axis(ctx.node.attr_int("axis", -1), r, ctx.node);
  Expr depth = Halide::cast<int32_t>(element(ctx, 1, 0));
  Expr off = element(ctx, 2, 0), on = element(ctx, 2, 1);
  return {define("OneHot", shape, out_dtype(ctx), [&](const Index& o) {
    Index i = o;
    i.erase(i.begin() + axis);
    Expr idx = Halide::cast<int32_t>(ind.at(i));
    idx = Halide::select(idx < 0, idx + depth, idx);
    return Halide::select(idx == o[axis], on, off);
  })};
}

// TensorScatter (opset 24): a KV cache with `update` written along `axis` from write_indices[b]
// (per batch entry, dim 0; absent: 0), wrapping around the cache length in circular mode. Each
// output element reads either the update or the past cache, so no scatter is needed.
std::vector<HTensor> tensor_scatter(LowerContext& ctx) {
  const HTensor& past = ctx.in[0];
  const HTensor& upd = ctx.in[1];
  int r = past.rank(), axis = normalize_axis(ctx.node.attr_int("axis", -2), r, ctx.node);
  user_check(axis >= 1) << ctx.node.describe() << ": axis must not be the batch dim (0)";
  std::string mode = ctx.node.attr_string("mode", "linear");
  user_check(mode == "linear" || mode == "circular")
      << ctx.node.describe() << ": mode '" << mode << "' is not one of linear, circular";
  bool circular = mode == "circular";
  Expr cache_len = past.shape[axis], upd_len = upd.shape[axis];
  return {define("TensorScatter", past.shape, past.dtype, [&](const Index& o) {
    Expr start = has_input(ctx, 2) ? Halide::cast<int32_t>(ctx.in[2].at({o[0]})) : Expr(0);
    Expr j = o[axis] - start;
    if (circular) j = j % Halide::max(cache_len, 1);  // Euclidean: in [0, cache_len)
    Expr from_update = j >= 0 && j < upd_len;
    Index ui = o;
    ui[axis] = Halide::clamp(j, 0, upd_len - 1);
    return Halide::select(from_update, upd.at(ui), past.at(o));
  })};
}

// Inclusive scan along `axis` of the (optionally reversed) input. CumSum's exclusive form subtracts
// the element; CumProd's (opset 26) cannot divide (a zero element), so its scan starts from 1 and
// reads the element before. A run-time axis selects among the scans along every dim (rare:
// exporters write a constant).
std::vector<HTensor> cum_scan(LowerContext& ctx, bool product) {
  const HTensor& x = ctx.in[0];
  int r = x.rank();
  bool exclusive = ctx.node.attr_int("exclusive", 0), reverse = ctx.node.attr_int("reverse", 0);
  auto vars = make_vars(r);
  Index o = onnx_index(vars);
  std::vector<Func> scans;
  auto scan_along = [&](int axis) {
    Expr n = x.shape[axis];
    auto at_pos = [&](Index i, Expr p) {
      i[axis] = reverse ? n - 1 - p : p;
      return x.at(i);
    };
    Func scan(product ? "cumprod_scan" : "cumsum_scan");
    if (product && exclusive) {
      Expr one = Halide::Internal::make_one(halide_type(x.dtype));
      scan(vars) = Halide::select(o[axis] == 0, one, at_pos(o, Halide::max(o[axis] - 1, 0)));
    } else {
      scan(vars) = at_pos(o, o[axis]);
    }
    Halide::RDom rk(1, Halide::max(n - 1, 0));
    Index cur = o, prev = o;
    cur[axis] = rk;
    prev[axis] = rk - 1;
    if (product) scan(RowSpace::at(cur)) = scan(RowSpace::at(prev)) * (exclusive ? at_pos(o, rk - 1) : at_pos(o, rk));
    else scan(RowSpace::at(cur)) = scan(RowSpace::at(prev)) + at_pos(o, rk);
    scans.push_back(scan);
    Index src = o;
    src[axis] = reverse ? n - 1 - o[axis] : o[axis];
    Expr v = scan(RowSpace::at(src));
    return exclusive && !product ? v - x.at(o) : v;
  };
  Expr v;
  if (auto ax = const_ints(ctx, 1)) {
    v = scan_along(normalize_axis((*ax)[0], r, ctx.node));
  } else {
    Expr a = element_i32(ctx, 1, 0);
    a = Halide::select(a < 0, a + r, a);
    v = scan_along(r - 1);
    for (int d = r - 2; d >= 0; --d) v = Halide::select(a == d, scan_along(d), v);
  }
  Func out(product ? "CumProd" : "CumSum");
  out(vars) = v;
  ctx.schedule = [scans](Func output, const Halide::Target& t) {
    for (Func s : scans) s.compute_root();
    schedule_output(output, KernelClass::Elementwise, t);
  };
  HTensor h;
  h.func = out;
  h.shape = x.shape;
  h.dtype = x.dtype;
  return {h};
}

Registrar reg_GatherND("", "GatherND", KernelClass::DataMovement, gather_nd);
Registrar reg_ScatterElements("", "ScatterElements", KernelClass::Other, scatter_elements);
Registrar reg_Scatter("", "Scatter", KernelClass::Other, scatter_elements);
Registrar reg_ScatterND("", "ScatterND", KernelClass::Other, scatter_nd);
Registrar reg_OneHot("", "OneHot", KernelClass::DataMovement, one_hot);
Registrar reg_CumSum("", "CumSum", KernelClass::Other, [](LowerContext& c) { return cum_scan(c, false); });
Registrar reg_CumProd("", "CumProd", KernelClass::Other, [](LowerContext& c) { return cum_scan(c, true); });
Registrar reg_TensorScatter("", "TensorScatter", KernelClass::DataMovement, tensor_scatter);

}  // namespace

}  // namespace onnxc::codegen
