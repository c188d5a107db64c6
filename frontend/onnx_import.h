// Reading ONNX models into the IR. `load_model` is cheap to include (no protobuf headers);
// `import_model` takes an already parsed ModelProto (include <onnx/onnx_pb.h> to call it).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace onnx {
class ModelProto;
}

namespace onnxc::frontend {

struct ImportOptions {
  // Run ONNX's own shape inference (with data propagation) on a copy of the model and record the
  // types it finds on the IR values. Failures are ignored: our own inference runs later.
  bool onnx_shape_inference = true;
  // Memory-map external-data files. Off: such initializers import as tensors without data.
  bool load_external_data = true;
  // Folders outside the model's own from which external data may be read (real paths compared):
  // by default only regular files inside the model's folder, reached without symbolic links.
  std::vector<std::string> allow_external_paths;
};

// Reads and imports an .onnx file. Every problem with the file (missing, truncated, not ONNX,
// dangling or duplicate names, cycles, bad external data) is a UserError naming the file.
ir::Model load_model(const std::string& path, const ImportOptions& opt = {});

// The same for a model already in memory (the fuzz target's entry point); `name` stands for the
// file in messages and its folder for external-data locations.
ir::Model load_model_from_memory(const void* data, size_t size, const std::string& name,
                                 const ImportOptions& opt = {});

// Imports a parsed model. `path_for_messages` prefixes error messages; external-data locations
// are resolved against `base_dir`.
ir::Model import_model(const onnx::ModelProto& proto, const std::string& path_for_messages,
                       const std::string& base_dir, const ImportOptions& opt = {});

}  // namespace onnxc::frontend
