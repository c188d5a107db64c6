// ONNX test-data files (`test_data_set_N/input_K.pb`): TensorProto <-> ir::Tensor, plus the
// sequence and optional values (SequenceProto / OptionalProto) some backend tests use.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace onnxc::frontend {

// Reads a TensorProto file; `name` receives the tensor's name when given.
ir::Tensor load_tensor_pb(const std::string& path, std::string* name = nullptr);
// A TensorProto already in memory (external data is not read); `name` stands for the file in messages.
ir::Tensor parse_tensor_pb(const void* data, size_t size, const std::string& name);
// Writes a TensorProto file (raw_data; string tensors as string_data), atomically.
void save_tensor_pb(const ir::Tensor& t, const std::string& name, const std::string& path);

// A test value: a tensor, a sequence of values, or an optional holding zero or one value.
struct TestValue {
  enum class Kind { Tensor, Sequence, Optional };
  Kind kind = Kind::Tensor;
  std::string name;
  ir::Tensor tensor;               // Kind::Tensor
  std::vector<TestValue> elements;  // Sequence: the items; Optional: empty (no value) or one
  Kind elem_kind = Kind::Tensor;   // Sequence/Optional: what the items are (kept for empty ones)
};

// Reads a test-data file as the kind `expected` names (the model input's or output's type: a
// tensor, seq(...) or opt(...)); the file format alone cannot tell a SequenceProto from an
// OptionalProto. Map and sparse-tensor values are recognised and rejected with a UserError.
TestValue load_test_value_pb(const std::string& path, const ir::Type& expected);
void save_test_value_pb(const TestValue& v, const std::string& path);

}  // namespace onnxc::frontend
