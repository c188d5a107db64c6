// Test-data files: TensorProto, SequenceProto and OptionalProto (onnx-data.proto) <-> TestValue.
#include "frontend/tensor_io.h"

#include <onnx/onnx-data_pb.h>

#include "frontend/proto_file.h"
#include "frontend/tensor_proto.h"
#include "ir/error.h"

namespace onnxc::frontend {
namespace {

using Kind = TestValue::Kind;

// SequenceProto and OptionalProto share their DataType numbering.
enum ElemType { kUndefined = 0, kTensor = 1, kSparseTensor = 2, kSequence = 3, kMap = 4, kOptional = 5 };

struct Reader {
  std::string path;
  ExternalDataReader ext;
  TensorSource src;
  explicit Reader(const std::string& p) : path(p), ext(p, parent_dir(p)), src{p, &ext, nullptr} {}

  TestValue tensor(const onnx::TensorProto& p) {
    TestValue v;
    v.name = p.name();
    v.tensor = tensor_from_proto(p, "tensor '" + p.name() + "'", src);
    return v;
  }

  Kind elem_kind(int elem_type, const std::string& name) {
    switch (elem_type) {
      case kUndefined:
      case kTensor: return Kind::Tensor;
      case kSequence: return Kind::Sequence;
      case kOptional: return Kind::Optional;
      case kMap: user_error << path << ": value '" << name << "' holds maps, which onnxc does not support";
      case kSparseTensor:
        user_error << path << ": value '" << name << "' holds sparse tensors, which onnxc does not support";
      default: user_error << path << ": value '" << name << "' has unknown element type " << elem_type;
    }
  }

  TestValue sequence(const onnx::SequenceProto& p) {
    TestValue v;
    v.kind = Kind::Sequence;
    v.name = p.name();
    v.elem_kind = elem_kind(p.elem_type(), p.name());
    user_check(p.map_values_size() == 0 && p.sparse_tensor_values_size() == 0)
        << path << ": sequence '" << p.name() << "' holds maps or sparse tensors, which onnxc does not support";
    for (const auto& t : p.tensor_values()) v.elements.push_back(tensor(t));
    for (const auto& s : p.sequence_values()) v.elements.push_back(sequence(s));
    for (const auto& o : p.optional_values()) v.elements.push_back(optional(o));
    return v;
  }

  TestValue optional(const onnx::OptionalProto& p) {
    TestValue v;
    v.kind = Kind::Optional;
    v.name = p.name();
    v.elem_kind = elem_kind(p.elem_type(), p.name());
    user_check(!p.has_map_value() && !p.has_sparse_tensor_value())
        << path << ": optional '" << p.name() << "' holds a map or sparse tensor, which onnxc does not support";
    if (p.has_tensor_value()) v.elements.push_back(tensor(p.tensor_value()));
    if (p.has_sequence_value()) v.elements.push_back(sequence(p.sequence_value()));
    if (p.has_optional_value()) v.elements.push_back(optional(p.optional_value()));
    return v;
  }
};

int elem_code(Kind k) { return k == Kind::Tensor ? kTensor : k == Kind::Sequence ? kSequence : kOptional; }

void to_proto(const TestValue& v, onnx::TensorProto* p) {
  p->set_name(v.name);
  tensor_to_proto(v.tensor, p);
}
void to_proto(const TestValue& v, onnx::OptionalProto* p);

void to_proto(const TestValue& v, onnx::SequenceProto* p) {
  p->set_name(v.name);
  p->set_elem_type(elem_code(v.elem_kind));
  for (const TestValue& e : v.elements) {
    internal_check(e.kind == v.elem_kind) << "sequence '" << v.name << "' mixes element kinds";
    if (e.kind == Kind::Tensor) to_proto(e, p->add_tensor_values());
    if (e.kind == Kind::Sequence) to_proto(e, p->add_sequence_values());
    if (e.kind == Kind::Optional) to_proto(e, p->add_optional_values());
  }
}

void to_proto(const TestValue& v, onnx::OptionalProto* p) {
  p->set_name(v.name);
  internal_check(v.elements.size() <= 1) << "optional '" << v.name << "' holds more than one value";
  if (v.elements.empty()) {  // no value: ONNX writes elem_type UNDEFINED explicitly
    p->set_elem_type(kUndefined);
    return;
  }
  const TestValue& e = v.elements[0];
  p->set_elem_type(elem_code(e.kind));
  if (e.kind == Kind::Tensor) to_proto(e, p->mutable_tensor_value());
  if (e.kind == Kind::Sequence) to_proto(e, p->mutable_sequence_value());
  if (e.kind == Kind::Optional) to_proto(e, p->mutable_optional_value());
}

}  // namespace

ir::Tensor load_tensor_pb(const std::string& path, std::string* name) {
  onnx::TensorProto p;
  read_proto_file(path, p, kTensorSchema, {2 /* data_type */});
  Reader r(path);
  TestValue v = r.tensor(p);
  if (name) *name = v.name;
  return v.tensor;
}

ir::Tensor parse_tensor_pb(const void* data, size_t size, const std::string& name) {
  onnx::TensorProto p;
  parse_proto_bytes(static_cast<const uint8_t*>(data), size, name, p, kTensorSchema, {2 /* data_type */});
  TensorSource src{name, nullptr, nullptr};  // no external data from memory
  return tensor_from_proto(p, "tensor '" + p.name() + "'", src);
}

void save_tensor_pb(const ir::Tensor& t, const std::string& name, const std::string& path) {
  onnx::TensorProto p;
  p.set_name(name);
  tensor_to_proto(t, &p);
  write_proto_file(p, path, /*durable=*/false);
}

TestValue load_test_value_pb(const std::string& path, const ir::Type& expected) {
  using TK = ir::Type::Kind;
  Reader r(path);
  switch (expected.kind) {
    case TK::Sequence: {
      onnx::SequenceProto p;
      read_proto_file(path, p, kSequenceSchema);
      return r.sequence(p);
    }
    case TK::Optional: {
      onnx::OptionalProto p;
      read_proto_file(path, p, kOptionalSchema);
      return r.optional(p);
    }
    case TK::Map: user_error << path << ": holds a map (MapProto), which onnxc does not support";
    case TK::SparseTensor: user_error << path << ": holds a sparse tensor, which onnxc does not support";
    default: {
      TestValue v;
      v.tensor = load_tensor_pb(path, &v.name);
      return v;
    }
  }
}

void save_test_value_pb(const TestValue& v, const std::string& path) {
  switch (v.kind) {
    case Kind::Tensor: return save_tensor_pb(v.tensor, v.name, path);
    case Kind::Sequence: {
      onnx::SequenceProto p;
      to_proto(v, &p);
      return write_proto_file(p, path, /*durable=*/false);
    }
    case Kind::Optional: {
      onnx::OptionalProto p;
      to_proto(v, &p);
      return write_proto_file(p, path, /*durable=*/false);
    }
  }
}

}  // namespace onnxc::frontend
