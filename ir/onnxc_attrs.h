// Attributes onnxc itself sets on standard ONNX ops (read by the evaluator and the lowerings).
#pragma once

namespace onnxc::ir {

// On Attention, set by onnxc's fusion: a row whose every key is masked gives NaN, as the Softmax
// the fusion replaced does, instead of ONNX 1.23's 0. ONNX checkers (and ONNX Runtime) skip
// attribute names that start with "__", so a fused model stays valid ONNX.
inline constexpr const char* kMaskedRowsNan = "__onnxc_masked_rows_nan";

// On Attention, set by passes/use_kv_cache when the past moved out of the node (K and V are then
// the whole cache): is_causal (and the windows) align the queries to the last keys, as they align
// to the past when the node has one.
inline constexpr const char* kCausalFromEnd = "__onnxc_causal_from_end";

// On Cast and CastLike to bfloat16, set when raise_opset moves a node from before opset 19: the
// float -> bfloat16 conversion drops the low mantissa bits, as ONNX's reference did then (1.12's
// test data); from opset 19 the references round to nearest even.
inline constexpr const char* kBf16Truncates = "__onnxc_bf16_truncates";

}  // namespace onnxc::ir
