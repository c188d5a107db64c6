// ModelRunner: the runtime's C API seen through ir::Tensor.
#include "tools/runner.h"

#include <cstring>
#include <random>

#include "ir/error.h"
#include "onnxc/runtime.h"

namespace onnxc::tools {
namespace {

IOInfo to_info(const onnxc_value_info& v) {
  IOInfo info;
  info.name = v.name ? v.name : "";
  info.dtype = static_cast<ir::DType>(v.dtype);
  for (int32_t i = 0; i < v.rank; ++i) {
    info.dims.push_back(v.dims[i]);
    info.dim_names.push_back(v.dim_names && v.dim_names[i] ? v.dim_names[i] : "");
  }
  return info;
}

}  // namespace

std::string IOInfo::type_str() const {
  std::string s = std::string(ir::dtype_name(dtype)) + "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += dims[i] >= 0 ? std::to_string(dims[i]) : (dim_names[i].empty() ? "?" : dim_names[i]);
  }
  return s + "]";
}

ir::Type IOInfo::value_type() const {
  using K = ir::Type::Kind;
  ir::Type t = ir::Type::tensor(dtype);
  if (value == ONNXC_VALUE_SEQUENCE || value == ONNXC_VALUE_OPTIONAL_SEQUENCE) t = ir::Type::container(K::Sequence, t);
  if (value == ONNXC_VALUE_OPTIONAL_TENSOR || value == ONNXC_VALUE_OPTIONAL_SEQUENCE) t = ir::Type::container(K::Optional, t);
  return t;
}

void ModelRunner::fail(int status, const std::string& what) const {
  std::string msg = session_ && onnxc_session_last_error(session_)[0] ? onnxc_session_last_error(session_)
                                                                     : onnxc_last_error();
  std::string text = what + ": " + onnxc_status_string(static_cast<onnxc_status>(status)) +
                     (msg.empty() ? "" : ": " + msg);
  if (status == ONNXC_ERR_INTERNAL) internal_error << text;
  user_error << text;
}

ModelRunner::ModelRunner(const std::string& library_path, int num_threads) : path_(library_path) {
  onnxc_status st = onnxc_model_open(library_path.c_str(), &model_);
  if (st != ONNXC_OK) fail(st, library_path + ": cannot load model library");
  name_ = onnxc_model_name(model_);
  target_ = onnxc_model_target(model_);
  for (size_t i = 0; i < onnxc_model_num_inputs(model_); ++i) {
    onnxc_value_info v;
    if ((st = onnxc_model_input_info(model_, i, &v)) != ONNXC_OK) fail(st, library_path);
    inputs_.push_back(to_info(v));
  }
  for (size_t i = 0; i < onnxc_model_num_outputs(model_); ++i) {
    onnxc_value_info v;
    if ((st = onnxc_model_output_info(model_, i, &v)) != ONNXC_OK) fail(st, library_path);
    outputs_.push_back(to_info(v));
  }
  const onnxc_model_desc* d = onnxc_model_desc_of(model_);
  for (size_t i = 0; i < inputs_.size(); ++i) inputs_[i].value = d->tensors[d->inputs[i]].value;
  for (size_t i = 0; i < outputs_.size(); ++i) outputs_[i].value = d->tensors[d->outputs[i]].value;
  onnxc_session_options opt;
  onnxc_session_options_default(&opt);
  opt.num_threads = num_threads;
  if ((st = onnxc_session_create(model_, &opt, &session_)) != ONNXC_OK) fail(st, library_path);
  bound_.resize(inputs_.size());
}

ModelRunner::~ModelRunner() {
  onnxc_session_free(session_);
  onnxc_model_free(model_);
}

int ModelRunner::input_index(const std::string& name) const {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

void ModelRunner::set_input(size_t index, const ir::Tensor& t) {
  user_check(index < inputs_.size()) << path_ << ": the model has " << inputs_.size() << " inputs, not "
                                     << index + 1;
  const std::string& name = inputs_[index].name;
  bound_[index] = t;
  onnxc_tensor ct;
  ct.dtype = static_cast<int32_t>(t.dtype());
  ct.rank = static_cast<int32_t>(t.rank());
  ct.dims = bound_[index].dims().data();
  ct.data = const_cast<void*>(bound_[index].raw());
  if (t.dtype() == ir::DType::String) {  // the runtime takes one const char * per element
    for (const std::string& s : bound_[index].string_data())
      user_check(s.find('\0') == std::string::npos) << "input '" << name << "': a string holds a NUL byte";
    string_ptrs_.resize(bound_.size());
    string_ptrs_[index].clear();
    for (const std::string& s : bound_[index].string_data()) string_ptrs_[index].push_back(s.c_str());
    ct.data = string_ptrs_[index].data();
  }
  onnxc_status st = onnxc_session_set_input(session_, index, &ct);
  if (st != ONNXC_OK) fail(st, "input '" + name + "'");
}

void ModelRunner::set_input_value(size_t index, const frontend::TestValue& v) {
  using K = frontend::TestValue::Kind;
  user_check(index < inputs_.size()) << path_ << ": the model has " << inputs_.size() << " inputs, not " << index + 1;
  const IOInfo& in = inputs_[index];
  if (in.value == ONNXC_VALUE_TENSOR) {
    user_check(v.kind == K::Tensor) << "input '" << in.name << "' is a tensor, not a sequence or optional";
    return set_input(index, v.tensor);
  }
  // The tensors the value holds: a sequence's items, an optional's one tensor or its sequence's items.
  const frontend::TestValue* seq = &v;
  bool present = true;
  if (v.kind == K::Optional) {
    present = !v.elements.empty();
    if (present && v.elements[0].kind == K::Sequence) seq = &v.elements[0];
  }
  std::vector<const ir::Tensor*> items;
  if (seq->kind == K::Sequence) {
    for (const auto& e : seq->elements) {
      user_check(e.kind == K::Tensor) << "input '" << in.name << "': a sequence of sequences is not supported";
      items.push_back(&e.tensor);
    }
  } else if (present) {
    items.push_back(v.kind == K::Optional ? &v.elements[0].tensor : &v.tensor);
  }
  std::vector<onnxc_tensor> ct;
  for (const ir::Tensor* t : items) {
    user_check(t->dtype() != ir::DType::String) << "input '" << in.name << "': string tensors are not supported";
    ct.push_back({static_cast<int32_t>(t->dtype()), static_cast<int32_t>(t->rank()), t->dims().data(), const_cast<void*>(t->raw())});
  }
  onnxc_value cv{in.value, present ? 1 : 0, ct.size(), ct.data()};
  onnxc_status st = onnxc_session_set_input_value(session_, index, &cv);
  if (st != ONNXC_OK) fail(st, "input '" + in.name + "'");
}

void ModelRunner::run() {
  onnxc_status st = onnxc_session_run(session_);
  for (ir::Tensor& t : bound_) t = ir::Tensor();
  if (st != ONNXC_OK) fail(st, path_ + ": run failed");
}

ir::Tensor ModelRunner::output(size_t index) const {
  onnxc_tensor ct;
  onnxc_status st = onnxc_session_get_output(session_, index, &ct);
  if (st != ONNXC_OK) fail(st, "output " + std::to_string(index));
  std::vector<int64_t> dims(ct.dims, ct.dims + ct.rank);
  if (ct.dtype == ONNXC_DTYPE_STRING) {
    std::vector<std::string> values;
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    for (int64_t i = 0; i < n; ++i) {
      const char* s = static_cast<const char* const*>(ct.data)[i];
      values.emplace_back(s ? s : "");
    }
    return ir::Tensor::strings(dims, std::move(values));
  }
  ir::Tensor t(static_cast<ir::DType>(ct.dtype), dims);
  if (t.nbytes()) std::memcpy(t.mutable_raw(), ct.data, t.nbytes());
  return t;
}

namespace {

ir::Tensor copy_tensor(const onnxc_tensor& ct) {
  std::vector<int64_t> dims(ct.dims, ct.dims + ct.rank);
  ir::Tensor t(static_cast<ir::DType>(ct.dtype), dims);
  if (t.nbytes()) std::memcpy(t.mutable_raw(), ct.data, t.nbytes());
  return t;
}

}  // namespace

frontend::TestValue ModelRunner::output_value(size_t index) const {
  using K = frontend::TestValue::Kind;
  onnxc_value cv;
  onnxc_status st = onnxc_session_get_output_value(session_, index, &cv);
  if (st != ONNXC_OK) fail(st, "output " + std::to_string(index));
  frontend::TestValue v;
  v.name = index < outputs_.size() ? outputs_[index].name : "";
  if (cv.kind == ONNXC_VALUE_TENSOR) {
    v.tensor = copy_tensor(cv.tensors[0]);
    return v;
  }
  frontend::TestValue seq;
  seq.kind = K::Sequence;
  for (size_t i = 0; i < cv.count; ++i) {
    frontend::TestValue e;
    e.tensor = copy_tensor(cv.tensors[i]);
    seq.elements.push_back(std::move(e));
  }
  if (cv.kind == ONNXC_VALUE_SEQUENCE) {
    seq.name = v.name;
    return seq;
  }
  v.kind = K::Optional;
  v.elem_kind = cv.kind == ONNXC_VALUE_OPTIONAL_SEQUENCE ? K::Sequence : K::Tensor;
  if (cv.present) v.elements.push_back(v.elem_kind == K::Sequence ? std::move(seq) : std::move(seq.elements.at(0)));
  return v;
}

uint64_t ModelRunner::arena_bytes() const { return onnxc_session_arena_bytes(session_); }

std::vector<std::pair<size_t, size_t>> ModelRunner::cache_pairs() const {
  std::vector<std::pair<size_t, size_t>> r(onnxc_model_num_cache_pairs(model_));
  for (size_t i = 0; i < r.size(); ++i) {
    onnxc_status st = onnxc_model_cache_pair(model_, i, &r[i].first, &r[i].second);
    if (st != ONNXC_OK) fail(st, "reading cache pair " + std::to_string(i));
  }
  return r;
}

void ModelRunner::keep_cache(int64_t capacity) {
  onnxc_status st = onnxc_session_keep_cache(session_, capacity);
  if (st != ONNXC_OK) fail(st, "keeping the KV cache");
}

void ModelRunner::bind_cache(size_t input, size_t output, const std::vector<int64_t>& dims) {
  onnxc_tensor cache;
  int64_t capacity = 0;
  onnxc_status st = onnxc_session_get_cache(session_, output, &cache, &capacity);
  if (st != ONNXC_OK) fail(st, "reading the KV cache of output " + std::to_string(output));
  user_check(input < inputs_.size() && static_cast<size_t>(cache.rank) == dims.size())
      << "input " << input << " cannot read the cache of output '" << outputs_[output].name << "'";
  bound_[input] = ir::Tensor();
  onnxc_tensor past = cache;
  past.dims = dims.data();  // the runtime copies the dims when binding
  st = onnxc_session_set_input(session_, input, &past);
  if (st != ONNXC_OK) fail(st, "input '" + inputs_[input].name + "' bound to its cache");
}

ir::Tensor random_tensor(ir::DType dtype, const std::vector<int64_t>& dims, uint64_t seed) {
  ir::Tensor t(dtype, dims);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  int64_t n = t.numel();
  switch (dtype) {
    case ir::DType::Float32: {
      float* p = t.mutable_data<float>();
      for (int64_t i = 0; i < n; ++i) p[i] = uni(rng);
      break;
    }
    case ir::DType::Float64: {
      double* p = t.mutable_data<double>();
      for (int64_t i = 0; i < n; ++i) p[i] = uni(rng);
      break;
    }
    case ir::DType::Float16: case ir::DType::BFloat16: {
      uint16_t* p = t.mutable_data<uint16_t>();
      for (int64_t i = 0; i < n; ++i) p[i] = dtype == ir::DType::Float16 ? ir::f32_to_f16(uni(rng)) : ir::f32_to_bf16(uni(rng));
      break;
    }
    case ir::DType::Bool: {
      uint8_t* p = t.mutable_data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) p[i] = rng() & 1;
      break;
    }
    default: {
      // Small non-negative integers: valid as indices, token ids or counts in most models.
      auto* p = static_cast<unsigned char*>(t.mutable_raw());
      size_t sz = ir::dtype_size(dtype);
      for (int64_t i = 0; i < n; ++i) {
        uint64_t v = rng() % 8;
        std::memcpy(p + i * sz, &v, sz);  // little-endian: the low bytes hold v
      }
    }
  }
  return t;
}

}  // namespace onnxc::tools

namespace onnxc::tools {

void ModelRunner::set_profiler(void (*callback)(void*, const onnxc_step_profile*), void* user) {
  onnxc_status st = onnxc_session_set_profiler(session_, callback, user);
  if (st != ONNXC_OK) fail(st, "setting the profiler");
}

}  // namespace onnxc::tools
