// Ops whose values come from shapes rather than data: Shape, Size, onnxc.SymbolicShape (dims from
// the kernel's symbol parameters; the inputs' data is never read, so they are not kernel arguments),
// and generators whose output shape inference already knows: ConstantOfShape, Range, EyeLike.
#include "codegen/lower/lower_util.h"
#include "ir/eval/symbolic_shape.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;
constexpr auto DM = KernelClass::DataMovement;

// A 1-D int64 tensor (or a scalar when `scalar`) holding `values`.
HTensor int_vector(const std::string& name, const std::vector<Expr>& values, bool scalar) {
  std::vector<Expr> shape;
  if (!scalar) shape.push_back(Expr(static_cast<int32_t>(values.size())));
  return define(name, shape, ir::DType::Int64, [&](const Index& o) {
    if (scalar || values.empty()) return values.empty() ? Expr(int64_t(0)) : Halide::cast<int64_t>(values[0]);
    Expr v = Halide::cast<int64_t>(values.back());
    for (int k = static_cast<int>(values.size()) - 2; k >= 0; --k)
      v = Halide::select(o[0] == k, Halide::cast<int64_t>(values[k]), v);
    return v;
  });
}

std::vector<HTensor> shape(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  int r = x.rank();
  int64_t start = ctx.node.attr_int("start", 0), end = ctx.node.attr_int("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, start, r);
  std::vector<Expr> dims(x.shape.begin() + start, x.shape.begin() + end);
  return {int_vector("Shape", dims, false)};
}

std::vector<HTensor> size(LowerContext& ctx) {
  Expr n = Halide::cast<int64_t>(1);
  for (const Expr& d : ctx.in[0].shape) n = n * Halide::cast<int64_t>(d);
  return {int_vector("Size", {n}, true)};
}

std::vector<HTensor> symbolic_shape(LowerContext& ctx) {
  std::vector<Expr> dims;
  for (const ir::Dim& d : ir::symbolic_shape_dims(ctx.node)) dims.push_back(ctx.dim_expr(d));
  return {int_vector("SymbolicShape", dims, ir::symbolic_shape_is_scalar(ctx.node))};
}

std::vector<HTensor> constant_of_shape(LowerContext& ctx) {
  ir::DType dt = out_dtype(ctx);
  Halide::Type ty = halide_type(dt);
  Expr v = Halide::Internal::make_zero(ty);
  if (const ir::Attribute* a = ctx.node.attr("value"); a && a->kind == ir::Attribute::Kind::Tensor && a->t.numel() > 0)
    v = ty.is_float() ? literal(ty, a->t.get_f64(0)) : Halide::Internal::make_const(ty, a->t.get_i64(0));
  return {define("ConstantOfShape", out_shape(ctx), dt, [&](const Index&) { return v; })};
}

std::vector<HTensor> range(LowerContext& ctx) {
  Expr start = element(ctx, 0, 0), delta = element(ctx, 2, 0);
  Halide::Type t = start.type();
  // Opset 27 admits float16/bfloat16 (no earlier Range takes them) with stash_type: 1 (the
  // default) computes start + i * delta in float and rounds once, 0 in the input's own type.
  if (t.is_float() && t.bits() == 16 && ctx.node.attr_int("stash_type", 1) == 1) {
    start = Halide::cast<float>(start);
    delta = Halide::cast<float>(delta);
  }
  return {define("Range", out_shape(ctx), out_dtype(ctx), [&](const Index& o) {
    return Halide::cast(t, start + Halide::cast(start.type(), o[0]) * delta);
  })};
}

std::vector<HTensor> eye_like(LowerContext& ctx) {
  int64_t k = ctx.node.attr_int("k", 0);
  ir::DType dt = out_dtype(ctx);
  return {define("EyeLike", out_shape(ctx), dt, [&](const Index& o) {
    return Halide::select(o[1] - o[0] == static_cast<int32_t>(k), literal(halide_type(dt), 1), literal(halide_type(dt), 0));
  })};
}

Registrar reg_Shape("", "Shape", DM, shape);
Registrar reg_Size("", "Size", DM, size);
Registrar reg_SymbolicShape(ir::kOnnxcDomain, ir::kSymbolicShapeOp, DM, symbolic_shape);
Registrar reg_ConstantOfShape("", "ConstantOfShape", DM, constant_of_shape);
Registrar reg_Range("", "Range", DM, range);
Registrar reg_EyeLike("", "EyeLike", DM, eye_like);

}  // namespace

}  // namespace onnxc::codegen
