// Integer and quantized products: MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv. Each
// subtracts the zero points into int32 operands and hands them to the MatMul or Conv lowering (int32
// accumulation, exact); the QLinear ops then requantize: round-half-even(acc · in_scale·w_scale /
// y_scale) + y_zp, saturated to the output type.
#include "codegen/lower/lower_util.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {
namespace {

using Halide::Expr;

// x - zero_point as int32. The zero point is a scalar, or 1-D along `axis` of x (per row of A, per
// column of B, per output channel of a conv weight); an absent zero point is 0.
HTensor centered(const LowerContext& ctx, int x_in, int zp_in, int axis, const std::string& name) {
  const HTensor& x = ctx.in[x_in];
  return define(name, x.shape, ir::DType::Int32, [&](const Index& i) {
    Expr v = Halide::cast<int32_t>(x.at(i));
    if (!has_input(ctx, zp_in)) return v;
    const HTensor& zp = ctx.in[zp_in];
    int a = axis < 0 ? axis + x.rank() : axis;
    Expr z;
    if (zp.rank() == 0) z = zp.func();
    else if (Halide::Internal::is_const_one(zp.shape[0]) || a < 0 || a >= x.rank()) z = zp.at({Expr(0)});
    else z = zp.at({Halide::min(i[a], zp.shape[0] - 1)});
    return v - Halide::cast<int32_t>(z);
  });
}

// Schedule: the centered operands stored whole as int32 first, then the product's own schedule.
// Stored rather than inlined: inlined into the vectorized integer product, the zero point came out
// added instead of subtracted on this AVX-512 host (test_matmulinteger; not yet traced to Halide or
// to the GEMM schedule), and storing them costs one pass over the operands.
void schedule_centered(LowerContext& ctx, const std::vector<HTensor>& ins,
                       std::function<void(Halide::Func, const Halide::Target&)> inner, Halide::Func inner_func) {
  std::vector<Halide::Func> fs;
  for (const HTensor& t : ins) fs.push_back(t.func);
  ctx.schedule = [fs, inner, inner_func](Halide::Func out, const Halide::Target& t) {
    for (Halide::Func f : fs) f.compute_root();
    if (inner_func.defined()) {
      Halide::Func f = inner_func;
      f.compute_root();
      if (inner) inner(f, t);
      schedule_output(out, KernelClass::Elementwise, t);
    } else if (inner) {
      inner(out, t);
    } else {
      schedule_output(out, KernelClass::Elementwise, t);
    }
  };
}

// Runs the lowering of `op` on `ins` in place of the node's inputs; its schedule (if any) is kept.
std::vector<HTensor> delegate(LowerContext& ctx, const std::string& op, std::vector<HTensor> ins) {
  LowerContext sub = ctx;
  sub.in = ins;
  sub.const_in.assign(sub.in.size(), nullptr);
  std::vector<HTensor> r = find_lowering("", op, ctx.opset)->fn(sub);
  schedule_centered(ctx, ins, sub.schedule, Halide::Func());
  return r;
}

std::vector<HTensor> matmul_integer(LowerContext& ctx) {
  // a_zero_point runs along A's rows (axis -2), b_zero_point along B's columns (axis -1).
  return delegate(ctx, "MatMul", {centered(ctx, 0, 2, -2, "a_centered"), centered(ctx, 1, 3, -1, "b_centered")});
}

std::vector<HTensor> conv_integer(LowerContext& ctx) {
  // x_zero_point is per tensor; w_zero_point per tensor or per output channel (axis 0).
  return delegate(ctx, "Conv", {centered(ctx, 0, 2, 0, "x_centered"), centered(ctx, 1, 3, 0, "w_centered")});
}

std::vector<HTensor> qlinear_matmul(LowerContext& ctx) {
  // Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point. The scales
  // are per tensor (one element) or per row of a / column of b.
  LowerContext sub = ctx;
  sub.in = {centered(ctx, 0, 2, -2, "a_centered"), centered(ctx, 3, 5, -1, "b_centered")};
  sub.const_in.assign(2, nullptr);
  HTensor acc = find_lowering("", "MatMul", ctx.opset)->fn(sub).at(0);
  const auto& shape = out_shape(ctx);
  int rank = static_cast<int>(shape.size());
  auto scale_at = [&](int in, const Index& o, int axis) -> Expr {
    const HTensor& s = ctx.in[in];
    if (s.rank() == 0) return Halide::cast<float>(s.func());
    if (Halide::Internal::is_const_one(s.shape[0])) return Halide::cast<float>(s.at({Expr(0)}));
    return Halide::cast<float>(s.at({Halide::min(o[rank + axis], s.shape[0] - 1)}));
  };
  ir::DType dt = out_dtype(ctx);
  Halide::Type ot = halide_type(dt);
  HTensor y = define("qlinear_matmul", shape, dt, [&](const Index& o) {
    Expr m = scale_at(1, o, -2) * scale_at(4, o, -1) / scale_at(6, o, -1);
    Expr v = Halide::round(Halide::cast<float>(acc.at(o)) * m);
    if (has_input(ctx, 7)) v = v + Halide::cast<float>(scale_at(7, o, -1));
    return Halide::cast(ot, Halide::clamp(v, Halide::cast<float>(ot.min()), Halide::cast<float>(ot.max())));
  });
  schedule_centered(ctx, sub.in, sub.schedule, acc.func);
  return {y};
}

// QLinearConv: inputs x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point,
// B (int32). The Conv lowering runs on a scratch Conv node with the same attributes and an int32
// output, then the accumulator is requantized per output channel (w_scale may be per channel).
std::vector<HTensor> qlinear_conv(LowerContext& ctx) {
  const ir::Node& node = ctx.node;
  ir::Graph scratch;
  ir::Value* xv = scratch.add_input("x", node.input(0)->type());
  ir::Value* wv = scratch.add_input("w", node.input(3)->type());
  ir::Node* conv = scratch.add_node("Conv", {xv, wv}, {"y"});
  conv->mutable_attributes() = node.attributes();
  conv->output(0)->set_type(ir::Type::tensor(ir::DType::Int32, *node.output(0)->shape()));
  std::vector<HTensor> ins = {centered(ctx, 0, 2, 0, "x_centered"), centered(ctx, 3, 5, 0, "w_centered")};
  if (has_input(ctx, 8)) ins.push_back(ctx.in[8]);
  LowerContext sub{*conv, ins, std::vector<const ir::Tensor*>(ins.size(), nullptr), ctx.out_shape, ctx.target,
                   ctx.opset, ctx.dim_expr, ctx.add_constant, nullptr, KernelClass::Other, {}, {}, false, {}};
  HTensor acc = find_lowering("", "Conv", ctx.opset)->fn(sub).at(0);
  ctx.requirements.insert(ctx.requirements.end(), sub.requirements.begin(), sub.requirements.end());
  ctx.checks_data = ctx.checks_data || sub.checks_data;
  auto scalar = [&](int in, const Expr& channel) -> Expr {
    const HTensor& t = ctx.in[in];
    if (t.rank() == 0) return Halide::cast<float>(t.func());
    if (Halide::Internal::is_const_one(t.shape[0])) return Halide::cast<float>(t.at({Expr(0)}));
    return Halide::cast<float>(t.at({Halide::min(channel, t.shape[0] - 1)}));
  };
  ir::DType dt = out_dtype(ctx);
  Halide::Type ot = halide_type(dt);
  HTensor y = define("qlinear_conv", out_shape(ctx), dt, [&](const Index& o) {
    Expr v = Halide::round(Halide::cast<float>(acc.at(o)) * (scalar(1, o[1]) * scalar(4, o[1]) / scalar(6, o[1])));
    if (has_input(ctx, 7)) v = v + scalar(7, o[1]);
    return Halide::cast(ot, Halide::clamp(v, Halide::cast<float>(ot.min()), Halide::cast<float>(ot.max())));
  });
  // The Conv lowering's schedule addresses its Func as a kernel output; here it is an intermediate,
  // stored whole (its reduction then runs per stored element).
  schedule_centered(ctx, {ins[0], ins[1]}, nullptr, acc.func);
  return {y};
}

Registrar reg_MatMulInteger("", "MatMulInteger", KernelClass::Other, matmul_integer);
Registrar reg_ConvInteger("", "ConvInteger", KernelClass::Other, conv_integer);
Registrar reg_QLinearMatMul("", "QLinearMatMul", KernelClass::Other, qlinear_matmul);
Registrar reg_QLinearConv("", "QLinearConv", KernelClass::Other, qlinear_conv);

}  // namespace
}  // namespace onnxc::codegen
