// Shape and layout ops: Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Concat, Transpose,
// Expand, Tile, ConstantOfShape, Constant, Range, EyeLike, Trilu, CenterCropPad, DepthToSpace,
// SpaceToDepth.
// These are where shape values start (Shape, Size, Constant) and end (Reshape, Expand, ...).
#include <cmath>

#include "ir/infer/context.h"

namespace onnxc::ir {
namespace {

int64_t clamp(int64_t x, int64_t lo, int64_t hi) { return std::max(lo, std::min(x, hi)); }

void infer_shape(InferContext& ctx) {
  int64_t r = ctx.in_rank(0);
  if (r < 0) {
    ctx.set_tensor(0, DType::Int64, unknown_shape(1));
    return;
  }
  int64_t start = ctx.node().attr_int("start", 0), end = ctx.node().attr_int("end", r);
  start = clamp(start < 0 ? start + r : start, 0, r);
  end = clamp(end < 0 ? end + r : end, 0, r);
  const Shape& s = *ctx.in_shape(0);
  std::vector<Dim> dims(s.begin() + start, s.begin() + std::max(start, end));
  ctx.set_tensor(0, DType::Int64, Shape{static_cast<int64_t>(dims.size())});
  ctx.set_value(0, dims);
}

void infer_size(InferContext& ctx) {
  ctx.set_tensor(0, DType::Int64, Shape{});
  if (const auto& s = ctx.in_shape(0)) ctx.set_value(0, {shape_numel(*s)});
}

// Reshape's target: 0 copies the input dim (unless allowzero), -1 takes what is left.
Shape reshape_target(InferContext& ctx, const std::vector<Dim>& target) {
  const auto& in = ctx.in_shape(0);
  bool allowzero = ctx.node().attr_int("allowzero", 0) != 0;
  Shape out;
  int64_t infer_at = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    const Dim& d = target[i];
    if (d == Dim(0) && !allowzero) {
      infer_check(ctx, !in || i < in->size()) << "shape element " << i << " is 0 but the input has rank " << in->size();
      out.push_back(in ? (*in)[i] : Dim::unknown());
    } else if (d == Dim(-1)) {
      infer_check(ctx, infer_at < 0) << "more than one -1 in the target shape";
      infer_at = static_cast<int64_t>(i);
      out.push_back(Dim(1));
    } else {
      infer_check(ctx, !d.is_const() || d.value() >= 0) << "invalid target shape element " << d.str();
      out.push_back(d);
    }
  }
  if (in) {
    Dim total = shape_numel(*in), known = shape_numel(out);
    if (infer_at >= 0) {
      Dim q = floordiv(total, known);
      infer_check(ctx,
                  !(total.is_const() && known.is_const()) || known.value() == 0 || total.value() % known.value() == 0)
          << "cannot reshape " << shape_str(*in) << " into " << shape_str(out) << " with -1";
      // A valid model divides exactly, so even an unsimplified floordiv is the size.
      out[infer_at] = known == Dim(0) ? Dim::unknown() : q;
    } else {
      infer_check(ctx, !(total.is_const() && known.is_const()) || total == known)
          << "cannot reshape " << shape_str(*in) << " (" << total.str() << " elements) into " << shape_str(out);
    }
  } else if (infer_at >= 0) {
    out[infer_at] = Dim::unknown();
  }
  return out;
}

void infer_reshape(InferContext& ctx) {
  DimsArg target = dims_arg(ctx, "shape", 1);
  std::optional<Shape> out;
  if (target.values) out = reshape_target(ctx, *target.values);
  else if (ctx.in_rank(1) == 1 && (*ctx.in_shape(1))[0].is_const()) out = unknown_shape((*ctx.in_shape(1))[0].value());
  ctx.set_tensor(0, ctx.in_dtype(0), out);
  pass_value(ctx);
}

void infer_flatten(InferContext& ctx) {
  std::optional<Shape> out;
  if (const auto& s = ctx.in_shape(0)) {
    int64_t r = static_cast<int64_t>(s->size()), axis = ctx.node().attr_int("axis", 1);
    infer_check(ctx, axis >= -r && axis <= r) << "axis " << axis << " is out of range for rank " << r;
    if (axis < 0) axis += r;
    out = Shape{shape_numel(Shape(s->begin(), s->begin() + axis)), shape_numel(Shape(s->begin() + axis, s->end()))};
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
  pass_value(ctx);
}

void infer_squeeze(InferContext& ctx) {
  IntsArg axes = ints_arg(ctx, "axes", 1);
  const auto& s = ctx.in_shape(0);
  std::optional<Shape> out;
  if (s && axes.present && axes.values) {
    auto ax = norm_axes(ctx, *axes.values, static_cast<int64_t>(s->size()));
    out.emplace();
    for (size_t i = 0; i < s->size(); ++i) {
      bool drop = std::find(ax.begin(), ax.end(), static_cast<int64_t>(i)) != ax.end();
      infer_check(ctx, !drop || !(*s)[i].is_const() || (*s)[i] == Dim(1))
          << "cannot squeeze axis " << i << " of " << shape_str(*s);
      if (!drop) out->push_back((*s)[i]);
    }
  } else if (s && !axes.present && shape_is_static(*s)) {
    out.emplace();
    for (const auto& d : *s)
      if (d != Dim(1)) out->push_back(d);
  } else if (s && axes.present && ctx.in_rank(1) == 1 && (*ctx.in_shape(1))[0].is_const()) {
    out = unknown_shape(static_cast<int64_t>(s->size()) - (*ctx.in_shape(1))[0].value());
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
  pass_value(ctx);
}

void infer_unsqueeze(InferContext& ctx) {
  IntsArg axes = ints_arg(ctx, "axes", 1);
  const auto& s = ctx.in_shape(0);
  std::optional<Shape> out;
  if (s && axes.values) {
    int64_t r = static_cast<int64_t>(s->size() + axes.values->size());
    auto ax = norm_axes(ctx, *axes.values, r);
    out.emplace();
    size_t k = 0;
    for (int64_t i = 0; i < r; ++i) {
      if (std::find(ax.begin(), ax.end(), i) != ax.end()) out->push_back(Dim(1));
      else {
        infer_check(ctx, k < s->size()) << "repeated axes";
        out->push_back((*s)[k++]);
      }
    }
  } else if (s && ctx.in_rank(1) == 1 && (*ctx.in_shape(1))[0].is_const()) {
    out = unknown_shape(static_cast<int64_t>(s->size()) + (*ctx.in_shape(1))[0].value());
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
  pass_value(ctx);
}

// Two dims that must be equal: the more precise one.
Dim same_dim(const InferContext& ctx, const Dim& a, const Dim& b) {
  infer_check(ctx, !(a.is_const() && b.is_const()) || a == b) << "dims " << a.str() << " and " << b.str() << " differ";
  if (a.is_const()) return a;
  if (b.is_const() || a.is_unknown()) return b;
  return a;
}

void infer_concat(InferContext& ctx) {
  DType dt = DType::Undefined;
  std::optional<Shape> out;
  bool all_ranked = true;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (dt == DType::Undefined) dt = ctx.in_dtype(i);
    const auto& s = ctx.in_shape(i);
    if (!s) {
      all_ranked = false;
      continue;
    }
    if (!out) {
      out = s;
      int64_t axis = norm_axis(ctx, ctx.node().attr_int("axis", 0), static_cast<int64_t>(s->size()));
      (*out)[axis] = Dim(0);
    }
    infer_check(ctx, s->size() == out->size()) << "inputs have ranks " << out->size() << " and " << s->size();
    int64_t axis = norm_axis(ctx, ctx.node().attr_int("axis", 0), static_cast<int64_t>(s->size()));
    for (size_t k = 0; k < s->size(); ++k)
      (*out)[k] = static_cast<int64_t>(k) == axis ? (*out)[k] + (*s)[k] : same_dim(ctx, (*out)[k], (*s)[k]);
  }
  if (out && !all_ranked) {
    int64_t axis = norm_axis(ctx, ctx.node().attr_int("axis", 0), static_cast<int64_t>(out->size()));
    (*out)[axis] = Dim::unknown();
  }
  ctx.set_tensor(0, dt, out);
  std::vector<Dim> value;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    auto v = ctx.in_value(i);
    if (!v || ctx.in_rank(i) != 1) return;
    value.insert(value.end(), v->begin(), v->end());
  }
  ctx.set_value(0, value);
}

void infer_transpose(InferContext& ctx) {
  std::optional<Shape> out;
  if (const auto& s = ctx.in_shape(0)) {
    int64_t r = static_cast<int64_t>(s->size());
    std::vector<int64_t> perm = ctx.node().attr_ints("perm");
    if (perm.empty())
      for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
    infer_check(ctx, static_cast<int64_t>(perm.size()) == r) << "perm has " << perm.size() << " entries for rank " << r;
    out.emplace();
    for (int64_t p : perm) out->push_back((*s)[norm_axis(ctx, p, r)]);
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
  if (ctx.in_rank(0) <= 1) pass_value(ctx);
}

void infer_expand(InferContext& ctx) {
  std::optional<Shape> target;
  if (auto v = ctx.in_value(1)) target = *v;
  else if (ctx.in_rank(1) == 1 && (*ctx.in_shape(1))[0].is_const())
    target = unknown_shape((*ctx.in_shape(1))[0].value());
  std::optional<Shape> out = broadcast_shapes(ctx, {ctx.in_shape(0), target});
  ctx.set_tensor(0, ctx.in_dtype(0), out);
  auto v = ctx.in_value(0);
  if (v && out && out->size() <= 1 && v->size() == 1) {
    if (out->empty()) ctx.set_value(0, *v);
    else if ((*out)[0].is_const() && (*out)[0].value() <= ShapeValues::kMaxElements)
      ctx.set_value(0, std::vector<Dim>((*out)[0].value(), (*v)[0]));
  } else if (v && out && out->size() == 1 && Dim(static_cast<int64_t>(v->size())) == (*out)[0]) {
    ctx.set_value(0, *v);
  }
}

void infer_tile(InferContext& ctx) {
  const auto& s = ctx.in_shape(0);
  auto reps = ctx.in_value(1);
  std::optional<Shape> out;
  if (s && reps) {
    infer_check(ctx, reps->size() == s->size()) << "repeats has " << reps->size() << " entries for rank " << s->size();
    out.emplace();
    for (size_t i = 0; i < s->size(); ++i) out->push_back((*s)[i] * (*reps)[i]);
  } else if (s) {
    out = unknown_shape(static_cast<int64_t>(s->size()));
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
  auto v = ctx.in_value(0);
  auto n = ctx.in_ints(1);
  if (v && n && n->size() == 1 && ctx.in_rank(0) == 1 &&
      (*n)[0] * static_cast<int64_t>(v->size()) <= ShapeValues::kMaxElements) {
    std::vector<Dim> r;
    for (int64_t k = 0; k < (*n)[0]; ++k) r.insert(r.end(), v->begin(), v->end());
    ctx.set_value(0, r);
  }
}

void infer_constant_of_shape(InferContext& ctx) {
  const Attribute* a = ctx.node().attr("value");
  DType dt = a && a->kind == Attribute::Kind::Tensor ? a->t.dtype() : DType::Float32;
  std::optional<Shape> out;
  if (auto v = ctx.in_value(0)) out = *v;
  else if (ctx.in_rank(0) == 1 && (*ctx.in_shape(0))[0].is_const()) out = unknown_shape((*ctx.in_shape(0))[0].value());
  for (const Dim& d : out ? *out : Shape{})
    infer_check(ctx, !d.is_const() || d.value() >= 0) << "negative dim in shape " << shape_str(*out);
  ctx.set_tensor(0, dt, out);
  std::optional<std::vector<Dim>> fill =
      a && a->kind == Attribute::Kind::Tensor ? tensor_dims(a->t) : std::vector<Dim>{0};
  if (!out || out->size() > 1 || !fill || fill->size() != 1) return;
  if (out->empty()) ctx.set_value(0, *fill);
  else if ((*out)[0].is_const() && (*out)[0].value() <= ShapeValues::kMaxElements)
    ctx.set_value(0, std::vector<Dim>((*out)[0].value(), (*fill)[0]));
}

void infer_constant(InferContext& ctx) {
  const Node& n = ctx.node();
  for (const auto& a : n.attributes()) {
    if (a.name == "value" && a.kind == Attribute::Kind::Tensor) {
      ctx.set_tensor(0, a.t.dtype(), Shape(a.t.dims().begin(), a.t.dims().end()));
      if (auto v = tensor_dims(a.t)) ctx.set_value(0, *v);
    } else if (a.name == "value_float") {
      ctx.set_tensor(0, DType::Float32, Shape{});
    } else if (a.name == "value_floats") {
      ctx.set_tensor(0, DType::Float32, Shape{static_cast<int64_t>(a.floats.size())});
    } else if (a.name == "value_int") {
      ctx.set_tensor(0, DType::Int64, Shape{});
      ctx.set_value(0, {a.i});
    } else if (a.name == "value_ints") {
      ctx.set_tensor(0, DType::Int64, Shape{static_cast<int64_t>(a.ints.size())});
      ctx.set_value(0, to_dims(a.ints));
    } else if (a.name == "value_string") {
      ctx.set_tensor(0, DType::String, Shape{});
    } else if (a.name == "value_strings") {
      ctx.set_tensor(0, DType::String, Shape{static_cast<int64_t>(a.strings.size())});
    } else if (a.name == "sparse_value") {
      ctx.set_tensor(0, DType::Undefined, std::nullopt);  // dims live in the opaque bytes
    }
  }
}

// Number of elements of Range(start, limit, delta): max(ceil((limit - start) / delta), 0).
std::optional<Dim> range_count(const InferContext& ctx) {
  auto s = ctx.in_scalar_f64(0), l = ctx.in_scalar_f64(1), d = ctx.in_scalar_f64(2);
  if (s && l && d) {
    infer_check(ctx, *d != 0) << "delta is 0";
    return Dim(std::max<int64_t>(static_cast<int64_t>(std::ceil((*l - *s) / *d)), 0));
  }
  auto vs = ctx.in_value(0), vl = ctx.in_value(1);
  auto vd = ctx.in_int(2);
  if (!vs || !vl || !vd || vs->size() != 1 || vl->size() != 1 || *vd == 0) return std::nullopt;
  Dim span = *vd > 0 ? (*vl)[0] - (*vs)[0] : (*vs)[0] - (*vl)[0];
  return max(ceildiv(span, Dim(std::abs(*vd))), Dim(0));
}

void infer_range(InferContext& ctx) {
  auto n = range_count(ctx);
  ctx.set_tensor(0, ctx.in_dtype(0), Shape{n ? *n : Dim::unknown()});
  auto start = ctx.in_value(0);
  auto delta = ctx.in_value(2);
  if (!n || !n->is_const() || n->value() > ShapeValues::kMaxElements || !start || !delta) return;
  if (start->size() != 1 || delta->size() != 1) return;
  std::vector<Dim> v;
  for (int64_t i = 0; i < n->value(); ++i) v.push_back((*start)[0] + (*delta)[0] * Dim(i));
  ctx.set_value(0, v);
}

void infer_eye_like(InferContext& ctx) {
  DType dt = dtype_attr(ctx, "dtype", ctx.in_dtype(0));
  ctx.set_tensor(0, dt, ctx.in_shape(0));
}

void infer_center_crop_pad(InferContext& ctx) {
  const auto& x = ctx.in_shape(0);
  std::optional<Shape> out;
  if (x) {
    int64_t r = static_cast<int64_t>(x->size());
    std::vector<int64_t> axes = ctx.node().attr_ints("axes");
    if (axes.empty())
      for (int64_t i = 0; i < r; ++i) axes.push_back(i);
    axes = norm_axes(ctx, axes, r);
    auto sizes = ctx.in_value(1);
    out = *x;
    for (size_t i = 0; i < axes.size(); ++i)
      (*out)[axes[i]] = sizes && sizes->size() == axes.size() ? (*sizes)[i] : Dim::unknown();
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
}

void infer_trilu(InferContext& ctx) { ctx.set_tensor(0, ctx.in_dtype(0), ctx.in_shape(0)); }

void space_depth(InferContext& ctx, bool to_space) {
  std::optional<Shape> out;
  if (const auto& s = ctx.in_shape(0)) {
    infer_check(ctx, s->size() == 4) << "expects a 4-D input, got " << shape_str(*s);
    Dim b = ctx.node().attr_int("blocksize", 1), bb = b * b;
    if (to_space) out = Shape{(*s)[0], floordiv((*s)[1], bb), (*s)[2] * b, (*s)[3] * b};
    else out = Shape{(*s)[0], (*s)[1] * bb, floordiv((*s)[2], b), floordiv((*s)[3], b)};
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
}

void infer_depth_to_space(InferContext& ctx) { space_depth(ctx, true); }
void infer_space_to_depth(InferContext& ctx) { space_depth(ctx, false); }

}  // namespace

void add_shape_ops(OpTable& t) {
  t.add_all({"Shape"}, kShapeOnly, infer_shape);
  t.add_all({"Size"}, kShapeOnly, infer_size);
  t.add_all({"Reshape"}, kShapeArgs | kView, infer_reshape);
  t.add_all({"Flatten"}, kView, infer_flatten);
  t.add_all({"Squeeze"}, kShapeArgs | kView, infer_squeeze);
  t.add_all({"Unsqueeze"}, kShapeArgs | kView, infer_unsqueeze);
  t.add_all({"Concat"}, 0, infer_concat);
  t.add_all({"Transpose"}, 0, infer_transpose);
  t.add_all({"Expand"}, kShapeArgs, infer_expand);
  t.add_all({"Tile"}, kShapeArgs, infer_tile);
  t.add_all({"ConstantOfShape"}, kShapeArgs, infer_constant_of_shape);
  t.add_all({"Constant"}, 0, infer_constant);
  t.add_all({"Range"}, kShapeArgs, infer_range);
  t.add_all({"EyeLike"}, 0, infer_eye_like);
  t.add_all({"Trilu"}, 0, infer_trilu);
  t.add_all({"CenterCropPad"}, kShapeArgs, infer_center_crop_pad);
  t.add_all({"DepthToSpace"}, 0, infer_depth_to_space);
  t.add_all({"SpaceToDepth"}, 0, infer_space_to_depth);
}

}  // namespace onnxc::ir
