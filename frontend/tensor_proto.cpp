// TensorProto and TypeProto conversions. All sizes are checked before anything is allocated, so a
// corrupt file with absurd dims fails with a message rather than an allocation failure.
#include "frontend/tensor_proto.h"

#include <cstring>
#include <limits>

#include "frontend/subbyte.h"
#include "ir/error.h"

namespace onnxc::frontend {
namespace {

using ir::DType;

int64_t checked_numel(const std::vector<int64_t>& dims, size_t elem_size, const std::string& where) {
  // Sizes beyond 2^62 bytes cannot be real; refusing them keeps every later product in range.
  const uint64_t limit = uint64_t{1} << 62;
  uint64_t n = 1;
  for (int64_t d : dims) {
    user_check(d >= 0) << where << ": negative dimension " << d;
    if (d == 0) return 0;
  }
  for (int64_t d : dims) {
    user_check(static_cast<uint64_t>(d) <= limit / n) << where << ": its dims hold more than 2^62 elements";
    n *= static_cast<uint64_t>(d);
  }
  user_check(elem_size == 0 || n <= limit / elem_size) << where << ": its size exceeds 2^62 bytes";
  return static_cast<int64_t>(n);
}

// Copies a typed field's values into `t`, narrowing each to the element type `T`.
template <class T, class Field>
void copy_field(ir::Tensor& t, const Field& field) {
  T* out = static_cast<T*>(t.mutable_raw());
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<T>(field.Get(i));
}

// Which typed field holds a dtype's values, and how many it holds.
std::pair<const char*, int> typed_field(const onnx::TensorProto& p, DType dt) {
  switch (dt) {
    case DType::Float32: case DType::Complex64: return {"float_data", p.float_data_size()};
    case DType::Float64: case DType::Complex128: return {"double_data", p.double_data_size()};
    case DType::Int64: return {"int64_data", p.int64_data_size()};
    case DType::UInt32: case DType::UInt64: return {"uint64_data", p.uint64_data_size()};
    // ONNX packs the narrow types one per int32_data entry; 16-bit floats as their bit patterns.
    default: return {"int32_data", p.int32_data_size()};
  }
}

ir::Tensor from_typed_fields(const onnx::TensorProto& p, DType dt, std::vector<int64_t> dims, int64_t numel,
                             const std::string& where) {
  bool cplx = dt == DType::Complex64 || dt == DType::Complex128;
  int64_t want = cplx ? 2 * numel : numel;
  auto [field, have] = typed_field(p, dt);
  user_check(have == want) << where << ": " << field << " holds " << have << " values, but its dims need " << want
                           << (have == 0 ? " (the tensor has no data)" : "");
  ir::Tensor t(dt, std::move(dims));
  if (want == 0) return t;
  switch (dt) {
    case DType::Float32: case DType::Complex64: copy_field<float>(t, p.float_data()); break;
    case DType::Float64: case DType::Complex128: copy_field<double>(t, p.double_data()); break;
    case DType::Int64: copy_field<int64_t>(t, p.int64_data()); break;
    case DType::UInt32: copy_field<uint32_t>(t, p.uint64_data()); break;
    case DType::UInt64: copy_field<uint64_t>(t, p.uint64_data()); break;
    case DType::Int32: copy_field<int32_t>(t, p.int32_data()); break;
    case DType::Int16: copy_field<int16_t>(t, p.int32_data()); break;
    case DType::Int8: copy_field<int8_t>(t, p.int32_data()); break;
    case DType::UInt16: case DType::Float16: case DType::BFloat16: copy_field<uint16_t>(t, p.int32_data()); break;
    case DType::UInt8: case DType::Float8E4M3FN: case DType::Float8E4M3FNUZ: case DType::Float8E5M2:
    case DType::Float8E5M2FNUZ: case DType::Float8E8M0:  // 8-bit floats as their bit patterns
      copy_field<uint8_t>(t, p.int32_data());
      break;
    case DType::Bool: {
      auto* out = static_cast<uint8_t*>(t.mutable_raw());
      for (int i = 0; i < p.int32_data_size(); ++i) out[i] = p.int32_data(i) != 0;
      break;
    }
    default: internal_error << "unhandled dtype " << ir::dtype_name(dt);
  }
  return t;
}

void dims_to_proto(const ir::Shape& shape, onnx::TensorShapeProto* p) {
  for (const ir::Dim& d : shape) {
    auto* pd = p->add_dim();
    if (d.is_const()) {
      pd->set_dim_value(d.value());
    } else {
      // Compound dims print as text ("seq+1") and re-import as a symbol of that name; those that
      // contain an unknown cannot be named and are written as unknown.
      std::string s = d.str();
      if (s.find('?') == std::string::npos) pd->set_dim_param(s);
    }
  }
}

ir::Shape dims_from_proto(const onnx::TensorShapeProto& p, const std::map<std::string, ir::Dim>* unknown_params) {
  ir::Shape s;
  for (const auto& d : p.dim()) {
    const std::string& param = d.dim_param();
    if (d.has_dim_value()) {
      s.push_back(ir::Dim(d.dim_value()));
    } else if (param.empty() || param[0] == '?') {  // "?" is how the IR prints an unknown
      s.push_back(ir::Dim::unknown());
    } else if (unknown_params && unknown_params->count(param)) {
      s.push_back(unknown_params->at(param));
    } else {
      s.push_back(ir::Dim::symbol(param));
    }
  }
  return s;
}

DType elem_type(int32_t code, const std::string& what, const std::string& file) {
  user_check(code == 0 || ir::dtype_is_valid(code)) << file << ": " << what << " has unsupported element type " << code;
  return static_cast<DType>(code);
}

}  // namespace

ir::Tensor tensor_from_proto(const onnx::TensorProto& p, const std::string& what, const TensorSource& src) {
  std::string where = src.file + ": " + what;
  user_check(p.data_type() != 0) << where << " has no data type";
  user_check(ir::dtype_is_valid(p.data_type())) << where << " has unsupported data type " << p.data_type();
  user_check(!p.has_segment()) << where << " is segmented; segmented tensors are not supported";
  auto dt = static_cast<DType>(p.data_type());
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  int64_t numel = checked_numel(dims, ir::dtype_size(dt), where);

  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& e : p.external_data()) {
      auto number = [&](const std::string& s) {
        size_t used = 0;
        int64_t v = -1;
        try {
          v = std::stoll(s, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        user_check(used == s.size() && !s.empty() && v >= 0)
            << where << ": external data " << e.key() << " '" << s << "' is not a non-negative integer";
        return v;
      };
      if (e.key() == "location") location = e.value();
      else if (e.key() == "offset") offset = number(e.value());
      else if (e.key() == "length") length = number(e.value());
    }
    if (!src.external) return ir::Tensor::view(dt, std::move(dims), nullptr, nullptr);
    return src.external->read(what, dt, std::move(dims), location, offset, length);
  }

  if (dt == DType::String) {
    user_check(p.string_data_size() == numel)
        << where << ": string_data holds " << p.string_data_size() << " values, but its dims need " << numel;
    std::vector<std::string> values(p.string_data().begin(), p.string_data().end());
    return ir::Tensor::strings(std::move(dims), std::move(values));
  }
  if (ir::dtype_packed_bits(dt)) {  // packed in raw_data or, one byte per entry, in int32_data
    const size_t need = packed_size(dt, numel);
    std::string bytes;
    if (p.has_raw_data()) {
      bytes = p.raw_data();
    } else {
      for (int32_t b : p.int32_data()) bytes.push_back(static_cast<char>(b));
    }
    user_check(bytes.size() == need) << where << ": " << (p.has_raw_data() ? "raw_data" : "int32_data") << " holds "
                                     << bytes.size() << " packed bytes, but its dtype and dims need " << need;
    return unpack_subbyte(dt, std::move(dims), reinterpret_cast<const uint8_t*>(bytes.data()));
  }
  if (p.has_raw_data()) {
    size_t need = static_cast<size_t>(numel) * ir::dtype_size(dt);
    user_check(p.raw_data().size() == need)
        << where << ": raw_data holds " << p.raw_data().size() << " bytes, but its dtype and dims need " << need;
    const char* bytes = p.raw_data().data();
    if (src.proto_owner && need && reinterpret_cast<uintptr_t>(bytes) % ir::dtype_size(dt) == 0)
      return ir::Tensor::view(dt, std::move(dims), bytes, src.proto_owner);
    ir::Tensor t(dt, std::move(dims));
    if (need) std::memcpy(t.mutable_raw(), bytes, need);
    return t;
  }
  return from_typed_fields(p, dt, std::move(dims), numel, where);
}

ir::Tensor tensor_from_sparse_proto(const onnx::SparseTensorProto& p, const std::string& what,
                                    const TensorSource& src) {
  std::string where = src.file + ": " + what;
  ir::Tensor values = tensor_from_proto(p.values(), what + " (values)", src);
  ir::Tensor indices = tensor_from_proto(p.indices(), what + " (indices)", src);
  user_check(values.dtype() != DType::String) << where << ": sparse string tensors are not supported";
  user_check(!values.empty_data() || values.numel() == 0) << where << ": sparse values have no data";
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  int64_t numel = checked_numel(dims, ir::dtype_size(values.dtype()), where);
  // Dense memory is not backed by the file's size, unlike every other tensor: bound it.
  user_check(static_cast<uint64_t>(numel) * ir::dtype_size(values.dtype()) <= (uint64_t{1} << 32))
      << where << ": a sparse tensor of more than 4 GiB dense is not supported";
  int64_t nnz = values.numel();
  int64_t rank = static_cast<int64_t>(dims.size());
  bool linear = indices.rank() == 1;
  user_check(values.rank() == 1 && indices.dtype() == DType::Int64 &&
             ((linear && indices.numel() == nnz) || (indices.rank() == 2 && indices.dims()[0] == nnz &&
                                                     indices.dims()[1] == rank)))
      << where << ": sparse values must be [NNZ] and int64 indices [NNZ] or [NNZ," << rank << "]";
  ir::Tensor dense(values.dtype(), dims);
  size_t es = ir::dtype_size(values.dtype());
  auto* out = static_cast<uint8_t*>(dense.mutable_raw());
  const auto* in = static_cast<const uint8_t*>(values.raw());
  for (int64_t i = 0; i < nnz; ++i) {
    int64_t at = 0;
    if (linear) {
      at = indices.data<int64_t>()[i];
    } else {
      for (int64_t k = 0; k < rank; ++k) {
        int64_t c = indices.data<int64_t>()[i * rank + k];
        user_check(c >= 0 && c < dims[k]) << where << ": sparse index " << c << " out of range in dim " << k;
        at = at * dims[k] + c;
      }
    }
    user_check(at >= 0 && at < numel) << where << ": sparse index " << at << " out of range";
    std::memcpy(out + at * es, in + i * es, es);
  }
  return dense;
}

void tensor_to_proto(const ir::Tensor& t, onnx::TensorProto* p) {
  for (int64_t d : t.dims()) p->add_dims(d);
  p->set_data_type(static_cast<int32_t>(t.dtype()));
  if (t.dtype() == DType::String) {
    for (const auto& s : t.string_data()) p->add_string_data(s);
    return;
  }
  user_check(!t.empty_data() || t.numel() == 0)
      << "tensor '" << p->name() << "' has no data to write (was the model loaded without its external data?)";
  if (ir::dtype_packed_bits(t.dtype())) return p->set_raw_data(pack_subbyte(t));
  p->set_raw_data(t.raw(), t.nbytes());
}

ir::Type type_from_proto(const onnx::TypeProto& p, const std::string& what, const std::string& file,
                         const std::map<std::string, ir::Dim>* unknown_params) {
  using K = ir::Type::Kind;
  auto sub = [&](bool has, const onnx::TypeProto& e) {
    return has ? type_from_proto(e, what, file, unknown_params) : ir::Type{};
  };
  switch (p.value_case()) {
    case onnx::TypeProto::kTensorType: {
      const auto& t = p.tensor_type();
      std::optional<ir::Shape> shape;
      if (t.has_shape()) shape = dims_from_proto(t.shape(), unknown_params);
      return ir::Type::tensor(elem_type(t.elem_type(), what, file), std::move(shape));
    }
    case onnx::TypeProto::kSparseTensorType: {
      const auto& t = p.sparse_tensor_type();
      ir::Type r = ir::Type::tensor(elem_type(t.elem_type(), what, file));
      r.kind = K::SparseTensor;
      if (t.has_shape()) r.shape = dims_from_proto(t.shape(), unknown_params);
      return r;
    }
    case onnx::TypeProto::kSequenceType:
      return ir::Type::container(K::Sequence, sub(p.sequence_type().has_elem_type(), p.sequence_type().elem_type()));
    case onnx::TypeProto::kOptionalType:
      return ir::Type::container(K::Optional, sub(p.optional_type().has_elem_type(), p.optional_type().elem_type()));
    case onnx::TypeProto::kMapType: {
      ir::Type r = ir::Type::container(K::Map, sub(p.map_type().has_value_type(), p.map_type().value_type()));
      r.key_type = elem_type(p.map_type().key_type(), what, file);
      return r;
    }
    default: return ir::Type{};  // not set, or an opaque type the IR does not model
  }
}

void type_to_proto(const ir::Type& t, onnx::TypeProto* p) {
  using K = ir::Type::Kind;
  auto elem = [&](onnx::TypeProto* e) {
    if (t.elem && t.elem->kind != K::Unknown) type_to_proto(*t.elem, e);
  };
  switch (t.kind) {
    case K::Unknown: return;
    case K::Tensor: {
      auto* tt = p->mutable_tensor_type();
      tt->set_elem_type(static_cast<int32_t>(t.dtype));
      if (t.shape) dims_to_proto(*t.shape, tt->mutable_shape());
      return;
    }
    case K::SparseTensor: {
      auto* tt = p->mutable_sparse_tensor_type();
      tt->set_elem_type(static_cast<int32_t>(t.dtype));
      if (t.shape) dims_to_proto(*t.shape, tt->mutable_shape());
      return;
    }
    case K::Sequence:
      p->mutable_sequence_type();
      if (t.elem && t.elem->kind != K::Unknown) elem(p->mutable_sequence_type()->mutable_elem_type());
      return;
    case K::Optional:
      p->mutable_optional_type();
      if (t.elem && t.elem->kind != K::Unknown) elem(p->mutable_optional_type()->mutable_elem_type());
      return;
    case K::Map:
      p->mutable_map_type()->set_key_type(static_cast<int32_t>(t.key_type));
      if (t.elem && t.elem->kind != K::Unknown) elem(p->mutable_map_type()->mutable_value_type());
      return;
  }
}

}  // namespace onnxc::frontend
