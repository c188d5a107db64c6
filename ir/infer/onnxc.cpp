// onnxc's own ops (domain "onnxc"): what the passes create and no ONNX opset defines.
#include "ir/eval/symbolic_shape.h"
#include "ir/infer/context.h"

namespace onnxc::ir {
namespace {

// onnxc.SymbolicShape: int64, rank 0 or 1; its contents are the dims it names.
void infer_symbolic_shape(InferContext& ctx) {
  std::vector<Dim> dims = symbolic_shape_dims(ctx.node());
  bool scalar = symbolic_shape_is_scalar(ctx.node());
  ctx.set_tensor(0, DType::Int64, scalar ? Shape{} : Shape{static_cast<int64_t>(dims.size())});
  ctx.set_value(0, std::move(dims));
}

}  // namespace

void add_onnxc_ops(OpTable& t) {
  t.add_all({kSymbolicShapeOp}, kShapeOnly, infer_symbolic_shape, kOnnxcDomain);
}

}  // namespace onnxc::ir
