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

uint64_t ModelRunner::arena_bytes() const { return onnxc_session_arena_bytes(session_); }

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
