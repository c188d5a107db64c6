// Tensor storage and element access.
#include "ir/tensor.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "ir/error.h"
#include "ir/float8.h"

namespace onnxc::ir {

Tensor::Tensor(DType dtype, std::vector<int64_t> dims) : dtype_(dtype), dims_(std::move(dims)) {
  int64_t n = checked_numel(dims_);
  user_check(n >= 0) << "a tensor of shape " << dims_text(dims_) << " has "
                     << (std::any_of(dims_.begin(), dims_.end(), [](int64_t d) { return d < 0; })
                             ? "a negative dim"
                             : "more than 2^63 elements");
  if (dtype == DType::String) {
    strings_.resize(static_cast<size_t>(n));
    return;
  }
  int64_t bytes = checked_nbytes(dtype, dims_);
  user_check(bytes >= 0 && bytes <= kMaxTensorBytes)
      << "a " << dtype_name(dtype) << " tensor of shape " << dims_text(dims_) << " needs "
      << (bytes < 0 ? std::string("more than 2^63") : std::to_string(bytes))
      << " bytes, more than onnxc holds in memory at compile time (2^40)";
  nbytes_ = static_cast<size_t>(bytes);
  // 64-byte aligned so kernels may load weights with aligned vector loads.
  size_t alloc = (nbytes_ + 63) / 64 * 64;
  void* p = nullptr;
  try {
    p = alloc ? ::operator new(alloc, std::align_val_t(64)) : nullptr;
  } catch (const std::bad_alloc&) {
    user_error << "cannot allocate " << bytes << " bytes for a " << dtype_name(dtype) << " tensor of shape "
               << dims_text(dims_) << ": out of memory";
  }
  if (p) std::memset(p, 0, alloc);
  owner_ = std::shared_ptr<void>(p, [](void* q) { if (q) ::operator delete(q, std::align_val_t(64)); });
  data_ = p;
  owned_ = true;
}

int64_t checked_numel(const std::vector<int64_t>& dims) {
  if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; })) return -1;
  // A zero dim anywhere makes the count 0, even when the other dims alone would overflow.
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) return 0;
  int64_t n = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(n, d, &n)) return -1;
  return n;
}

int64_t checked_nbytes(DType dtype, const std::vector<int64_t>& dims) {
  int64_t n = checked_numel(dims), bytes = 0;
  if (n < 0) return -1;
  if (dtype == DType::String) return 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(dtype_size(dtype)), &bytes)) return -1;
  return bytes;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

Tensor Tensor::view(DType dtype, std::vector<int64_t> dims, const void* data,
                    std::shared_ptr<const void> owner) {
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.data_ = data;
  t.owner_ = std::move(owner);
  t.nbytes_ = static_cast<size_t>(t.numel()) * dtype_size(dtype);
  return t;
}

Tensor Tensor::strings(std::vector<int64_t> dims, std::vector<std::string> values) {
  Tensor t;
  t.dtype_ = DType::String;
  t.dims_ = std::move(dims);
  internal_check(static_cast<int64_t>(values.size()) == t.numel()) << "string tensor size mismatch";
  t.strings_ = std::move(values);
  return t;
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (auto d : dims_) n *= d;
  return n;
}

void* Tensor::mutable_raw() {
  internal_check(owned_ && owner_.use_count() <= 1) << "writing a shared tensor";
  return const_cast<void*>(data_);
}

double Tensor::get_f64(int64_t i) const {
  switch (dtype_) {
    case DType::Float32: return data<float>()[i];
    case DType::Float64: return data<double>()[i];
    case DType::Float16: return f16_to_f32(data<uint16_t>()[i]);
    case DType::BFloat16: return bf16_to_f32(data<uint16_t>()[i]);
    case DType::UInt64: return static_cast<double>(data<uint64_t>()[i]);
    case DType::Float8E4M3FN: case DType::Float8E4M3FNUZ: case DType::Float8E5M2: case DType::Float8E5M2FNUZ:
    case DType::Float8E8M0: case DType::Float4E2M1: return float8_to_f32(data<uint8_t>()[i], dtype_);
    default: return static_cast<double>(get_i64(i));
  }
}

int64_t Tensor::get_i64(int64_t i) const {
  switch (dtype_) {
    case DType::Int64: return data<int64_t>()[i];
    case DType::Int32: return data<int32_t>()[i];
    case DType::Int16: return data<int16_t>()[i];
    case DType::Int8: case DType::Int4: case DType::Int2: return data<int8_t>()[i];  // sub-byte: one a byte
    case DType::UInt8: case DType::UInt4: case DType::UInt2: case DType::Bool: return data<uint8_t>()[i];
    case DType::UInt16: return data<uint16_t>()[i];
    case DType::UInt32: return data<uint32_t>()[i];
    case DType::UInt64: return static_cast<int64_t>(data<uint64_t>()[i]);
    case DType::Float32: case DType::Float64: case DType::Float16: case DType::BFloat16:
    case DType::Float8E4M3FN: case DType::Float8E4M3FNUZ: case DType::Float8E5M2: case DType::Float8E5M2FNUZ:
    case DType::Float8E8M0: case DType::Float4E2M1:
      return static_cast<int64_t>(get_f64(i));
    default: internal_error << "get_i64 on dtype " << dtype_name(dtype_);
  }
}

Tensor Tensor::reshaped(std::vector<int64_t> dims) const {
  Tensor t = *this;
  t.dims_ = std::move(dims);
  internal_check(t.numel() == numel()) << "reshape changes element count";
  t.owned_ = false;
  return t;
}

namespace {

// Multiply-rotate hashing in four independent lanes of 8-byte words, so that hashing a model's
// hundreds of megabytes of weights runs at memory speed (a byte-at-a-time FNV chain was ~7% of a
// warm BERT compile), then the lanes, the length and the tail are folded together and avalanched.
class Hasher {
 public:
  void add(const void* data, size_t n) {
    auto p = static_cast<const unsigned char*>(data);
    const unsigned char* end = p + n;
    total_ += n;
    while (p + 32 <= end) {
      for (int l = 0; l < 4; ++l) lane_[l] = round(lane_[l], load(p + 8 * l));
      p += 32;
    }
    while (p < end) tail_ = (tail_ ^ *p++) * 0x100000001b3ull;
  }
  uint64_t finish() const {
    uint64_t h = total_ * kP1;
    for (int l = 0; l < 4; ++l) h = (h ^ round(0, lane_[l])) * kP1 + kP4;
    h = (h ^ round(0, tail_)) * kP1 + kP4;
    h ^= h >> 33;
    h *= kP2;
    h ^= h >> 29;
    h *= kP3;
    return h ^ (h >> 32);
  }

 private:
  static constexpr uint64_t kP1 = 0x9e3779b185ebca87ull, kP2 = 0xc2b2ae3d27d4eb4full,
                            kP3 = 0x165667b19e3779f9ull, kP4 = 0x85ebca77c2b2ae63ull;
  static uint64_t load(const unsigned char* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  }
  static uint64_t round(uint64_t acc, uint64_t w) {
    acc += w * kP2;
    acc = (acc << 31) | (acc >> 33);
    return acc * kP1;
  }
  uint64_t lane_[4] = {kP1 + kP2, kP2, 0, 0 - kP1};
  uint64_t tail_ = 0xcbf29ce484222325ull;
  uint64_t total_ = 0;
};

}  // namespace

uint64_t Tensor::fingerprint() const {
  Hasher h;
  int32_t dt = static_cast<int32_t>(dtype_);
  h.add(&dt, sizeof dt);
  for (auto d : dims_) h.add(&d, sizeof d);
  if (data_) h.add(data_, nbytes_);
  for (const auto& s : strings_) {
    uint64_t len = s.size();
    h.add(&len, sizeof len);
    h.add(s.data(), s.size());
  }
  return h.finish();
}

bool Tensor::same_contents(const Tensor& o) const {
  if (dtype_ != o.dtype_ || dims_ != o.dims_ || nbytes_ != o.nbytes_ || strings_ != o.strings_)
    return false;
  return nbytes_ == 0 || data_ == o.data_ || std::memcmp(data_, o.data_, nbytes_) == 0;
}

float f16_to_f32(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(man & 0x400)) {
        man <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t f32_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t man = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (man ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (man >> 13);
  uint32_t rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;
  return static_cast<uint16_t>(half);
}

float bf16_to_f32(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t f32_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace onnxc::ir
