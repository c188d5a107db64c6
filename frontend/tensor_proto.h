// TensorProto <-> ir::Tensor and TypeProto <-> ir::Type, shared by the model importer, exporter
// and the test-data reader. Internal header (includes protobuf).
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <string>

#include "frontend/external_data.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace onnxc::frontend {

struct TensorSource {
  std::string file;                        // names the file in messages
  ExternalDataReader* external = nullptr;  // null: external tensors import without data
  // Set when it owns the protos being read: raw_data tensors then view the proto's bytes instead
  // of copying them, so a large model with inline weights is not held twice.
  std::shared_ptr<const void> proto_owner;
};

// Every dtype, from raw_data or the typed fields (float_data, int32_data for the small int, bool
// and 16-bit float types, int64_data, double_data, uint64_data, string_data) or external data.
// `what` names the tensor in messages ("initializer 'w'").
ir::Tensor tensor_from_proto(const onnx::TensorProto& p, const std::string& what, const TensorSource& src);
// A sparse tensor (values + indices) made dense.
ir::Tensor tensor_from_sparse_proto(const onnx::SparseTensorProto& p, const std::string& what,
                                    const TensorSource& src);
// raw_data for numeric dtypes, string_data for strings. Throws UserError for a tensor without data.
void tensor_to_proto(const ir::Tensor& t, onnx::TensorProto* p);

// Dims with neither value nor param are unknown; `unknown_params` names dim_params that mean
// "unknown" too (ONNX's inference invents "unk__N"), each mapped to its one unknown Dim.
ir::Type type_from_proto(const onnx::TypeProto& p, const std::string& what, const std::string& file,
                         const std::map<std::string, ir::Dim>* unknown_params = nullptr);
void type_to_proto(const ir::Type& t, onnx::TypeProto* p);

}  // namespace onnxc::frontend
