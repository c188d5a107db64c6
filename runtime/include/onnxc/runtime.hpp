// onnxc runtime, C++ side: RAII handles over runtime.h that throw onnxc::Error (never across the C ABI:
// every C call returns a status, which these wrappers turn into exceptions in the caller's code).
//
//   onnxc::Model model = onnxc::Model::open("./libencoder.so");
//   onnxc::Session session(model);                      // or Session(model, options)
//   std::vector<float> src(2 * 16 * 512);
//   session.set_input("src", src.data(), {2, 16, 512}); // borrowed until run() returns
//   session.run();
//   onnxc_tensor out = session.output(0);                // owned by the session until the next run
//
// Lifetimes are those of the C API: a Session keeps its Model alive; a Model or Session moved from is
// empty. Neither is copyable. C++17 or later.
#ifndef ONNXC_RUNTIME_HPP
#define ONNXC_RUNTIME_HPP

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "onnxc/runtime.h"

namespace onnxc {

class Error : public std::runtime_error {
 public:
  Error(onnxc_status status, const std::string &message) : std::runtime_error(message), status_(status) {}
  onnxc_status status() const noexcept { return status_; }

 private:
  onnxc_status status_;
};

namespace detail {
inline void check(onnxc_status status, const char *message) {
  if (status != ONNXC_OK) throw Error(status, message);
}
struct ModelDeleter {
  void operator()(onnxc_model *m) const noexcept { onnxc_model_free(m); }
};
struct SessionDeleter {
  void operator()(onnxc_session *s) const noexcept { onnxc_session_free(s); }
};
}  // namespace detail

// The ONNX dtype number of a C++ element type, for the typed set_input overload.
template <typename T> constexpr int32_t dtype_of();
template <> constexpr int32_t dtype_of<float>() { return ONNXC_DTYPE_FLOAT; }
template <> constexpr int32_t dtype_of<double>() { return ONNXC_DTYPE_DOUBLE; }
template <> constexpr int32_t dtype_of<int8_t>() { return ONNXC_DTYPE_INT8; }
template <> constexpr int32_t dtype_of<uint8_t>() { return ONNXC_DTYPE_UINT8; }
template <> constexpr int32_t dtype_of<int16_t>() { return ONNXC_DTYPE_INT16; }
template <> constexpr int32_t dtype_of<uint16_t>() { return ONNXC_DTYPE_UINT16; }
template <> constexpr int32_t dtype_of<int32_t>() { return ONNXC_DTYPE_INT32; }
template <> constexpr int32_t dtype_of<uint32_t>() { return ONNXC_DTYPE_UINT32; }
template <> constexpr int32_t dtype_of<int64_t>() { return ONNXC_DTYPE_INT64; }
template <> constexpr int32_t dtype_of<uint64_t>() { return ONNXC_DTYPE_UINT64; }
template <> constexpr int32_t dtype_of<bool>() { return ONNXC_DTYPE_BOOL; }

class Model {
 public:
  static Model open(const std::string &library_path) {
    onnxc_model *m = nullptr;
    onnxc_status st = onnxc_model_open(library_path.c_str(), &m);
    detail::check(st, onnxc_last_error());
    return Model(m);
  }
  static Model from_desc(const onnxc_model_desc *desc) {
    onnxc_model *m = nullptr;
    onnxc_status st = onnxc_model_from_desc(desc, &m);
    detail::check(st, onnxc_last_error());
    return Model(m);
  }

  onnxc_model *get() const noexcept { return handle_.get(); }
  std::string name() const { return onnxc_model_name(get()); }
  size_t num_inputs() const noexcept { return onnxc_model_num_inputs(get()); }
  size_t num_outputs() const noexcept { return onnxc_model_num_outputs(get()); }
  onnxc_value_info input(size_t index) const {
    onnxc_value_info info;
    onnxc_status st = onnxc_model_input_info(get(), index, &info);
    detail::check(st, onnxc_last_error());
    return info;
  }
  onnxc_value_info output(size_t index) const {
    onnxc_value_info info;
    onnxc_status st = onnxc_model_output_info(get(), index, &info);
    detail::check(st, onnxc_last_error());
    return info;
  }

 private:
  explicit Model(onnxc_model *m) : handle_(m) {}
  std::unique_ptr<onnxc_model, detail::ModelDeleter> handle_;
};

class Session {
 public:
  explicit Session(const Model &model, const onnxc_session_options *options = nullptr) {
    onnxc_session *s = nullptr;
    onnxc_status st = onnxc_session_create(model.get(), options, &s);
    detail::check(st, onnxc_last_error());
    handle_.reset(s);
  }

  onnxc_session *get() const noexcept { return handle_.get(); }

  void set_input(size_t index, const onnxc_tensor &tensor) {
    check(onnxc_session_set_input(get(), index, &tensor));
  }
  void set_input(const std::string &name, const onnxc_tensor &tensor) {
    check(onnxc_session_set_input_by_name(get(), name.c_str(), &tensor));
  }
  // Typed convenience: dims are copied by the runtime; data is borrowed until run() returns.
  template <typename T, typename Key>
  void set_input(const Key &key, const T *data, const int64_t *dims, size_t rank) {
    onnxc_tensor t{dtype_of<T>(), static_cast<int32_t>(rank), dims, const_cast<T *>(data)};
    set_input(key, t);
  }
  template <typename T, typename Key>
  void set_input(const Key &key, const T *data, const std::vector<int64_t> &dims) {
    set_input(key, data, dims.data(), dims.size());
  }
  template <typename T, typename Key>
  void set_input(const Key &key, const T *data, std::initializer_list<int64_t> dims) {
    set_input(key, data, dims.begin(), dims.size());
  }

  void run() { check(onnxc_session_run(get())); }

  // Owned by the session: valid until the next run() or the session's destruction.
  onnxc_tensor output(size_t index) {
    onnxc_tensor t;
    check(onnxc_session_get_output(get(), index, &t));
    return t;
  }
  onnxc_tensor output(const std::string &name) {
    onnxc_tensor t;
    check(onnxc_session_get_output_by_name(get(), name.c_str(), &t));
    return t;
  }
  // CUDA libraries only (see runtime.h, "CUDA: device memory and the caller's stream"): device
  // addresses in and out, the caller's context and stream, outputs left on the device.
  void set_input_device(size_t index, const onnxc_tensor &tensor) {
    check(onnxc_session_set_input_device(get(), index, &tensor));
  }
  void set_cuda_stream(void *context, void *stream) { check(onnxc_session_set_cuda_stream(get(), context, stream)); }
  void set_outputs_on_device(bool on) { check(onnxc_session_set_outputs_on_device(get(), on ? 1 : 0)); }
  onnxc_tensor output_device(size_t index) {
    onnxc_tensor t;
    check(onnxc_session_get_output_device(get(), index, &t));
    return t;
  }

  // A copy of an output's dims and elements (T must match its dtype).
  template <typename T>
  std::vector<T> output_values(size_t index) {
    onnxc_tensor t = output(index);
    if (t.dtype != dtype_of<T>()) {
      throw Error(ONNXC_ERR_DTYPE_MISMATCH, std::string("output is ") + onnxc_dtype_name(t.dtype) + ", not " +
                                                onnxc_dtype_name(dtype_of<T>()));
    }
    size_t n = 1;
    for (int32_t a = 0; a < t.rank; a++) n *= static_cast<size_t>(t.dims[a]);
    const T *p = static_cast<const T *>(t.data);
    return std::vector<T>(p, p + n);
  }

 private:
  // onnxc_last_error() holds the message of every failure on this thread, NULL session included.
  static void check(onnxc_status st) { detail::check(st, onnxc_last_error()); }
  std::unique_ptr<onnxc_session, detail::SessionDeleter> handle_;
};

}  // namespace onnxc

#endif  // ONNXC_RUNTIME_HPP
