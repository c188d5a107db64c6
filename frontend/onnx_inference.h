// ONNX's own shape inference, run defensively: on a copy without large weights, with malformed
// nodes kept out of it, and in a child process, because ONNX 1.12's inference functions trust
// attribute values (a LayerNormalization axis of -112 reads out of bounds) and a bad model must
// not crash the compiler. Internal header.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>

namespace onnxc::frontend {

// The model's graphs with ONNX's inferred value_info and output types; the node list and each
// node's attributes (so every subgraph) keep their order. nullopt if ONNX failed or crashed.
std::optional<onnx::ModelProto> infer_with_onnx(const onnx::ModelProto& model);

}  // namespace onnxc::frontend
