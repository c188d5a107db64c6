// The validation layer: checks an ONNX ModelProto against the ONNX operator schemas before it is
// imported, so a malformed model is refused with one line naming the file, node, op and what is
// wrong instead of surfacing later as a Halide error, a wrong answer or a crash.
#pragma once

#include <string>

namespace onnx {
class ModelProto;
}

namespace onnxc::frontend {

// Throws UserError ("FILE: Softmax node 'sm' (opset 13): attribute 'axis' is a STRING; the schema
// wants an INT") for the first problem found:
//  - opset_import missing, listing a domain twice, or a version < 1; an ai.onnx version newer than
//    onnxc knows (kNewestOpset) or an ai.onnx.ml version newer than the ONNX schemas;
//  - a node of a domain the model does not import;
//  - for ops with an ONNX schema at the node's opset: an input or output count outside the
//    schema's range, an empty name for a required input, an attribute whose type differs from
//    the schema's, a required attribute missing;
//  - a negative dim_value in a declared input, output or value_info type.
// Subgraphs are checked with their parent's opsets. Sizes of tensors are checked where they are read.
void validate_model(const onnx::ModelProto& model, const std::string& file);

// The newest ai.onnx opset whose semantics onnxc's op table knows. What changed after 23, and where
// onnxc follows it: Attention 24 (nonpad_kv_seqlen) and 25 (left/right_window_size) in
// codegen/lower/attention.cpp; Swish 24, TensorScatter 24, CumProd 26, BitCast 26 and SwiGLU 28 are
// new ops; Cast/CastLike 24 add round_mode (read only for float8e8m0, which onnxc does not hold);
// Range 27 adds stash_type (fp16/bf16 ranges computed in float); Mod 28 allows fmod=0 on floats
// (floor semantics); SpaceToDepth 28 adds mode=CRD; the rest of 24-28 only add element types.
constexpr int64_t kNewestOpset = 28;

}  // namespace onnxc::frontend
