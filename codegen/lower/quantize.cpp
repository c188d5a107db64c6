// Linear quantization: QuantizeLinear (round half to even, saturate to the zero point's type,
// per-tensor or per-axis scale), DequantizeLinear, and DynamicQuantizeLinear (uint8, scale and zero
// point from the tensor's range, computed in the same kernel).
#include "codegen/lower/float8.h"
#include "codegen/lower/lower_util.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;
using Halide::Func;

// Input i (scale or zero point) at the element `o` of x: per-tensor when it has one element,
// per-axis (1-D along `axis`), or blocked (opset 21: x's rank, `block_size` elements of x along
// `axis` sharing one entry).
Expr param_at(const LowerContext& ctx, int i, const Index& o) {
  const HTensor& p = ctx.in[i];
  if (p.rank() == 0) return p.func();
  // One element is per-tensor whatever `axis` says (it may not even be an axis of x).
  if (p.rank() == 1 && Halide::Internal::is_const_one(p.shape[0])) return p.at({Expr(0)});
  int axis = normalize_axis(ctx.node.attr_int("axis", 1), static_cast<int>(o.size()), ctx.node);
  if (p.rank() > 1 || ctx.node.attr_int("block_size", 0) > 0) {
    int64_t block = ctx.node.attr_int("block_size", 0);
    user_check(block > 0 && p.rank() == static_cast<int>(o.size()))
        << ctx.node.describe() << ": a scale of rank " << p.rank() << " needs block_size > 0 and the input's rank";
    Index b = o;
    b[axis] = o[axis] / static_cast<int32_t>(block);
    return p.at(b);
  }
  return p.at({o[axis]});
}

// round(v) saturated to the range of `dt` (the sub-byte integers' own range, not their byte's).
Expr saturate_round(Expr v, ir::DType dt) {
  Halide::Type t = halide_type(dt);
  Expr lo = Halide::cast<float>(t.min()), hi = Halide::cast<float>(t.max());
  int sub_lo = 0, sub_hi = 0;
  if (ir::dtype_subbyte_range(dt, &sub_lo, &sub_hi)) lo = Expr(static_cast<float>(sub_lo)), hi = Expr(static_cast<float>(sub_hi));
  return Halide::cast(t, Halide::clamp(Halide::round(v), lo, hi));
}

// An input (x or a zero point) as float32: 8- and 4-bit floats by value, not by bits.
Expr value_f32(const Expr& e, ir::DType t) {
  return ir::dtype_is_narrow_float(t) ? float8_decode(e, t) : Halide::cast<float>(e);
}

// To an 8-bit float (opset 19) or float4e2m1 (opset 23) there is no rounding to an integer: x / scale
// + zero point (which ONNX requires to be 0) is converted, saturating to the largest finite value
// unless `saturate` is 0 (float4e2m1 always saturates: it has no infinity or NaN).
std::vector<HTensor> quantize(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  ir::DType dt = out_dtype(ctx);
  return {define("QuantizeLinear", x.shape, dt, [&](const Index& o) {
    Expr v = Halide::cast<float>(x.at(o)) / Halide::cast<float>(param_at(ctx, 1, o));
    if (ir::dtype_is_narrow_float(dt)) {
      if (has_input(ctx, 2)) v = v + value_f32(param_at(ctx, 2, o), dt);
      return float8_encode(v, dt, ctx.node.attr_int("saturate", 1) != 0);
    }
    if (has_input(ctx, 2)) v = Halide::round(v) + Halide::cast<float>(param_at(ctx, 2, o));
    return saturate_round(v, dt);
  })};
}

std::vector<HTensor> dequantize(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  return {define("DequantizeLinear", x.shape, out_dtype(ctx), [&](const Index& o) {
    Expr v = value_f32(x.at(o), x.dtype);
    if (has_input(ctx, 2)) v = v - value_f32(param_at(ctx, 2, o), ctx.in[2].dtype);
    return v * Halide::cast<float>(param_at(ctx, 1, o));
  })};
}

std::vector<HTensor> dynamic_quantize(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  std::vector<Halide::Range> ranges;
  for (const Expr& e : x.shape) ranges.emplace_back(0, e);
  Func range("dql_range");
  range() = Halide::Tuple(0.0f, 0.0f);  // the range always includes 0
  if (!ranges.empty()) {
    Halide::RDom rd(Halide::Region(ranges.begin(), ranges.end()));
    Index i;
    for (int k = 0; k < rd.dimensions(); ++k) i.push_back(rd[k]);
    Expr v = Halide::cast<float>(x.at(i));
    range() = Halide::Tuple(Halide::min(range()[0], v), Halide::max(range()[1], v));
  } else {
    Expr v = Halide::cast<float>(x.func());
    range() = Halide::Tuple(Halide::min(0.0f, v), Halide::max(0.0f, v));
  }
  Expr scale = (range()[1] - range()[0]) / 255.0f;
  Expr zp = saturate_round(-range()[0] / scale, ir::DType::UInt8);
  std::vector<HTensor> outs;
  outs.push_back(define("DynamicQuantizeLinear", x.shape, ir::DType::UInt8, [&](const Index& o) {
    return saturate_round(Halide::round(Halide::cast<float>(x.at(o)) / scale) + Halide::cast<float>(zp), ir::DType::UInt8);
  }));
  outs.push_back(define("dql_scale", {}, ir::DType::Float32, [&](const Index&) { return scale; }));
  outs.push_back(define("dql_zero_point", {}, ir::DType::UInt8, [&](const Index&) { return zp; }));
  ctx.schedule = [range](Func output, const Halide::Target& t) {
    Func r = range;
    r.compute_root();
    schedule_output(output, KernelClass::Elementwise, t);
  };
  return outs;
}

Registrar reg_QuantizeLinear("", "QuantizeLinear", KernelClass::Elementwise, quantize);
Registrar reg_DequantizeLinear("", "DequantizeLinear", KernelClass::Elementwise, dequantize);
Registrar reg_DynamicQuantizeLinear("", "DynamicQuantizeLinear", KernelClass::Reduction, dynamic_quantize);

}  // namespace

}  // namespace onnxc::codegen
