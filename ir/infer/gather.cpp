// Indexing ops: Gather (also on shape values: `Shape(x)[1]`), GatherElements, GatherND, the
// scatters, OneHot, and the data-dependent NonZero, Unique, Compress, NonMaxSuppression whose sizes
// get fresh symbols.
#include "ir/infer/context.h"

namespace onnxc::ir {
namespace {

void gather_value(InferContext& ctx) {
  auto data = ctx.in_value(0);
  auto idx = ctx.in_ints(1);
  if (!data || !idx || ctx.in_rank(0) != 1 || ctx.in_rank(1) > 1) return;
  int64_t n = static_cast<int64_t>(data->size());
  std::vector<Dim> r;
  for (int64_t i : *idx) {
    infer_check(ctx, i >= -n && i < n) << "index " << i << " is out of range for " << n << " elements";
    r.push_back((*data)[i < 0 ? i + n : i]);
  }
  ctx.set_value(0, r);
}

void infer_gather(InferContext& ctx) {
  const auto &data = ctx.in_shape(0), &idx = ctx.in_shape(1);
  std::optional<Shape> out;
  if (data && idx) {
    int64_t axis = norm_axis(ctx, ctx.node().attr_int("axis", 0), static_cast<int64_t>(data->size()));
    out = Shape(data->begin(), data->begin() + axis);
    out->insert(out->end(), idx->begin(), idx->end());
    out->insert(out->end(), data->begin() + axis + 1, data->end());
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
  if (ctx.node().attr_int("axis", 0) == 0) gather_value(ctx);
}

void infer_gather_elements(InferContext& ctx) { ctx.set_tensor(0, ctx.in_dtype(0), ctx.in_shape(1)); }

void infer_gather_nd(InferContext& ctx) {
  const auto &data = ctx.in_shape(0), &idx = ctx.in_shape(1);
  std::optional<Shape> out;
  if (data && idx && !idx->empty() && idx->back().is_const()) {
    int64_t b = ctx.node().attr_int("batch_dims", 0), m = idx->back().value();
    infer_check(ctx, b + m <= static_cast<int64_t>(data->size()))
        << "indices " << shape_str(*idx) << " too deep for " << shape_str(*data);
    out = Shape(idx->begin(), idx->end() - 1);
    out->insert(out->end(), data->begin() + b + m, data->end());
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
}

void infer_scatter(InferContext& ctx) { ctx.set_tensor(0, ctx.in_dtype(0), ctx.in_shape(0)); }

void infer_one_hot(InferContext& ctx) {
  const auto& idx = ctx.in_shape(0);
  std::optional<Shape> out;
  if (idx) {
    int64_t r = static_cast<int64_t>(idx->size()) + 1;
    int64_t axis = norm_axis(ctx, ctx.node().attr_int("axis", -1), r);
    auto depth = ctx.in_scalar_f64(1);
    out = *idx;
    out->insert(out->begin() + axis, depth ? Dim(static_cast<int64_t>(*depth)) : Dim::unknown());
  }
  ctx.set_tensor(0, ctx.in_dtype(2), out);
}

void infer_nonzero(InferContext& ctx) {
  int64_t r = ctx.in_rank(0);
  ctx.set_tensor(0, DType::Int64, Shape{r >= 0 ? Dim(r) : Dim::unknown(), ctx.fresh_dim(0, 1, "nonzero")});
}

void infer_unique(InferContext& ctx) {
  const auto& x = ctx.in_shape(0);
  const Attribute* axis_attr = ctx.node().attr("axis");
  size_t u_axis =
      axis_attr && x ? static_cast<size_t>(norm_axis(ctx, axis_attr->i, static_cast<int64_t>(x->size()))) : 0;
  Dim u = ctx.has_output(1) ? ctx.fresh_dim(1, 0, "unique") : ctx.fresh_dim(0, u_axis, "unique");
  std::optional<Shape> y = Shape{u}, inverse;
  if (x && axis_attr) {
    int64_t axis = norm_axis(ctx, axis_attr->i, static_cast<int64_t>(x->size()));
    y = *x;
    (*y)[axis] = u;
    inverse = Shape{(*x)[axis]};
  } else if (x) {
    inverse = Shape{shape_numel(*x)};
  } else if (axis_attr) {
    y.reset();
  }
  ctx.set_tensor(0, ctx.in_dtype(0), y);
  ctx.set_tensor(1, DType::Int64, Shape{u});
  ctx.set_tensor(2, DType::Int64, inverse ? inverse : std::optional<Shape>(Shape{Dim::unknown()}));
  ctx.set_tensor(3, DType::Int64, Shape{u});
}

void infer_compress(InferContext& ctx) {
  const auto& x = ctx.in_shape(0);
  const Attribute* axis_attr = ctx.node().attr("axis");
  std::optional<Dim> count;
  if (auto cond = ctx.in_ints(1)) {
    Dim limit = x && axis_attr ? (*x)[norm_axis(ctx, axis_attr->i, static_cast<int64_t>(x->size()))]
                : x            ? shape_numel(*x)
                               : Dim::unknown();
    size_t lim = limit.is_const() ? static_cast<size_t>(limit.value()) : cond->size();
    int64_t n = 0;
    for (size_t k = 0; k < cond->size() && k < lim; ++k) n += (*cond)[k] != 0 ? 1 : 0;
    count = Dim(n);
  }
  std::optional<Shape> out;
  if (!axis_attr) {
    out = Shape{count ? *count : ctx.fresh_dim(0, 0, "compress")};
  } else if (x) {
    int64_t axis = norm_axis(ctx, axis_attr->i, static_cast<int64_t>(x->size()));
    out = *x;
    (*out)[axis] = count ? *count : ctx.fresh_dim(0, axis, "compress");
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
}

void infer_nms(InferContext& ctx) { ctx.set_tensor(0, DType::Int64, Shape{ctx.fresh_dim(0, 0, "nms"), 3}); }

void infer_same(InferContext& ctx) { ctx.set_tensor(0, ctx.in_dtype(0), ctx.in_shape(0)); }

}  // namespace

void add_index_ops(OpTable& t) {
  t.add_all({"Gather"}, 0, infer_gather);
  t.add_all({"GatherElements"}, 0, infer_gather_elements);
  t.add_all({"GatherND"}, 0, infer_gather_nd);
  t.add_all({"Scatter", "ScatterElements", "ScatterND"}, 0, infer_scatter);
  t.add_all({"OneHot"}, kShapeArgs, infer_one_hot);
  t.add_all({"NonZero"}, kDataDependent, infer_nonzero);
  t.add_all({"Unique"}, kDataDependent, infer_unique);
  t.add_all({"Compress"}, kDataDependent, infer_compress);
  t.add_all({"NonMaxSuppression"}, kDataDependent, infer_nms);
  t.add_all({"ReverseSequence"}, 0, infer_same);
  t.add_all({"TensorScatter"}, 0, infer_same);  // opset 24: present_cache has past_cache's type
}

}  // namespace onnxc::ir
