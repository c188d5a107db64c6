// ONNX backend-test data folders: `test_data_set_N/` with `input_K.pb` and `output_K.pb`
// (TensorProto files, or SequenceProto/OptionalProto for sequence and optional values; K in numeric
// order), inside a model folder beside `model.onnx`.
#pragma once

#include <string>
#include <vector>

#include "frontend/tensor_io.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace onnxc::check {

struct NamedTensor {
  std::string name;  // the TensorProto's name; may be empty
  std::string file;
  ir::Tensor tensor;
  // A sequence or optional (value.kind != Tensor; `tensor` then empty); a tensor file keeps kind Tensor.
  frontend::TestValue value;
};

struct DataSet {
  std::string dir;
  std::vector<NamedTensor> inputs, outputs;
};

// The data-set folders `path` names: itself if it holds input_*.pb or output_*.pb files, else its
// test_data_set_* subfolders in numeric order. UserError if there are none.
std::vector<std::string> find_data_sets(const std::string& path);

// True if `dir` holds model.onnx and at least one test_data_set_* folder.
bool is_model_test_dir(const std::string& dir);

// Every ONNX backend test folder (model.onnx + test_data_set_*) under `root` (root included), sorted.
std::vector<std::string> find_model_test_dirs(const std::string& root);

// Loads `dir`'s input_K.pb and output_K.pb files, K = 0, 1, ... in numeric order. File K is read as
// the K-th type of `input_types` / `output_types` says (a sequence or optional: into `value`); a file
// past their end, or with a tensor type, is a TensorProto.
DataSet load_data_set(const std::string& dir, const std::vector<ir::Type>& input_types = {},
                      const std::vector<ir::Type>& output_types = {});

// ONNX's test data stores bfloat16 tensors as uint16 (NumPy has no bfloat16): returns `t` with its
// bits reinterpreted as `want` in that case, else `t` unchanged.
ir::Tensor match_stored_dtype(const ir::Tensor& t, ir::DType want);

// `prefix_K.pb` files in `dir`, sorted by K.
std::vector<std::string> numbered_files(const std::string& dir, const std::string& prefix);

}  // namespace onnxc::check
