// Tensor: constant data with a dtype and concrete dims. Bytes are held through a shared owner so a
// tensor can own its buffer, share one, or view a memory-mapped external-data file without copying.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace onnxc::ir {

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled, owned buffer.
  Tensor(DType dtype, std::vector<int64_t> dims);
  // Bytes owned by `owner` (e.g. an mmap); data must stay valid while owner lives.
  static Tensor view(DType dtype, std::vector<int64_t> dims, const void* data,
                     std::shared_ptr<const void> owner);
  static Tensor strings(std::vector<int64_t> dims, std::vector<std::string> values);
  template <class T>
  static Tensor scalar(DType dtype, T v) {
    Tensor t(dtype, {});
    *t.mutable_data<T>() = v;
    return t;
  }
  template <class T>
  static Tensor from_vector(DType dtype, std::vector<int64_t> dims, const std::vector<T>& v) {
    Tensor t(dtype, std::move(dims));
    std::copy(v.begin(), v.end(), t.mutable_data<T>());
    return t;
  }

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  int64_t numel() const;
  size_t nbytes() const { return nbytes_; }
  bool empty_data() const { return data_ == nullptr && strings_.empty(); }

  const void* raw() const { return data_; }
  template <class T>
  const T* data() const { return static_cast<const T*>(data_); }
  // Writable only while this tensor is the sole owner of a buffer it allocated.
  void* mutable_raw();
  template <class T>
  T* mutable_data() { return static_cast<T*>(mutable_raw()); }
  const std::vector<std::string>& string_data() const { return strings_; }

  // Element i converted to double / int64 (any numeric dtype, f16/bf16 included).
  double get_f64(int64_t i) const;
  int64_t get_i64(int64_t i) const;

  // Same bytes, other dims (numel must match).
  Tensor reshaped(std::vector<int64_t> dims) const;
  // A 64-bit hash of dtype, dims and bytes: a stable fingerprint for IR text and caches (CSE
  // confirms equal fingerprints by comparing contents).
  uint64_t fingerprint() const;
  bool same_contents(const Tensor& o) const;

 private:
  DType dtype_ = DType::Undefined;
  std::vector<int64_t> dims_;
  std::shared_ptr<const void> owner_;
  const void* data_ = nullptr;
  size_t nbytes_ = 0;
  bool owned_ = false;
  std::vector<std::string> strings_;
};

// The largest tensor the compiler allocates itself (constants it folds, data files it reads):
// beyond this a shape is an error, not an attempt that ends in the out-of-memory killer.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 40;

// Size arithmetic for shapes that come from files: 64 bits, every product checked. The element
// count of `dims`, or -1 when a dim is negative or the count exceeds INT64_MAX.
int64_t checked_numel(const std::vector<int64_t>& dims);
// Bytes of a tensor of `dtype` and `dims` (strings count as 0), or -1 as checked_numel.
int64_t checked_nbytes(DType dtype, const std::vector<int64_t>& dims);
// "[2, 3, 4]", for messages.
std::string dims_text(const std::vector<int64_t>& dims);

float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);

}  // namespace onnxc::ir
