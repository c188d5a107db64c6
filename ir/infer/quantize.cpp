// Quantization ops: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear (shape kept; the element
// type comes from the zero point, the scale or an attribute).
#include "ir/infer/context.h"

namespace onnxc::ir {
namespace {

void infer_quantize(InferContext& ctx) {
  DType dt = ctx.has_input(2) ? ctx.in_dtype(2) : dtype_attr(ctx, "output_dtype", DType::UInt8);
  if (dt == DType::Undefined) dt = DType::UInt8;
  ctx.set_tensor(0, dt, ctx.in_shape(0));
}

void infer_dequantize(InferContext& ctx) {
  DType dt = ctx.in_dtype(1) != DType::Undefined ? ctx.in_dtype(1) : DType::Float32;
  ctx.set_tensor(0, dt, ctx.in_shape(0));
}

void infer_dynamic_quantize(InferContext& ctx) {
  ctx.set_tensor(0, DType::UInt8, ctx.in_shape(0));
  ctx.set_tensor(1, DType::Float32, Shape{});
  ctx.set_tensor(2, DType::UInt8, Shape{});
}

}  // namespace

void add_quantize_ops(OpTable& t) {
  t.add_all({"QuantizeLinear"}, kElementwise, infer_quantize);
  t.add_all({"DequantizeLinear"}, kElementwise, infer_dequantize);
  t.add_all({"DynamicQuantizeLinear"}, 0, infer_dynamic_quantize);
}

}  // namespace onnxc::ir
