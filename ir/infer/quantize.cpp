// Quantization ops: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear (shape kept; the element
// type comes from the zero point, the scale or an attribute), and ONNX Runtime's block-quantized
// product com.microsoft.MatMulNBits.
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

// com.microsoft.MatMulNBits: A [.., K] times the block-quantized weight (its transposed form is
// [N, K]) -> [.., N] in A's float type. Layout checks are the lowering's (codegen/lower/quant_nbits.cpp).
void infer_matmul_nbits(InferContext& ctx) {
  const int64_t n = ctx.node().attr_int("N", -1), k = ctx.node().attr_int("K", -1);
  infer_check(ctx, n > 0 && k > 0) << "attributes N and K must be positive";
  std::optional<Shape> y = ctx.in_shape(0);
  if (y) {
    infer_check(ctx, !y->empty() && (y->back() == Dim(k) || !y->back().is_const()))
        << "A's last dim must be K = " << k;
    y->back() = Dim(n);
  }
  ctx.set_tensor(0, ctx.in_dtype(0), y);
}

}  // namespace

void add_quantize_ops(OpTable& t) {
  t.add_all({"QuantizeLinear"}, kElementwise, infer_quantize);
  t.add_all({"DequantizeLinear"}, kElementwise, infer_dequantize);
  t.add_all({"DynamicQuantizeLinear"}, 0, infer_dynamic_quantize);
  t.add_all({"MatMulNBits"}, 0, infer_matmul_nbits, "com.microsoft");
}

}  // namespace onnxc::ir
