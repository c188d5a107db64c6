// Writing the IR back as ONNX, so a processed graph can be saved, inspected or run elsewhere.
// Include <onnx/onnx_pb.h> as well to call export_model (this header only declares ModelProto).
#pragma once

#include <cstddef>
#include <string>

#include "ir/graph.h"

namespace onnx {
class ModelProto;
}

namespace onnxc::frontend {

struct ExportOptions {
  // Write tensors of at least `external_data_threshold` bytes to one side file beside the model
  // (data_location=EXTERNAL). Needed for models over protobuf's 2 GiB limit.
  bool external_data = false;
  std::string external_data_file;  // file name beside the model; default "<model file name>.data"
  size_t external_data_threshold = 1024;
};

// Writes the model to `path` atomically: a temporary file in the same folder, renamed on success,
// so a failure never leaves a partial file. UserError if it cannot be written or is too large.
void save_model(const ir::Model& model, const std::string& path, const ExportOptions& opt = {});

// The model as a ModelProto, every tensor inline (raw_data; string tensors as string_data).
onnx::ModelProto export_model(const ir::Model& model);

}  // namespace onnxc::frontend
