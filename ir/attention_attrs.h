// Attributes onnxc itself sets on standard ONNX ops (read by the evaluator and the lowerings).
#pragma once

namespace onnxc::ir {

// On Attention, set by onnxc's fusion: a row whose every key is masked gives NaN, as the Softmax
// the fusion replaced does, instead of ONNX 1.23's 0. ONNX checkers (and ONNX Runtime) skip
// attribute names that start with "__", so a fused model stays valid ONNX.
inline constexpr const char* kMaskedRowsNan = "__onnxc_masked_rows_nan";

}  // namespace onnxc::ir
