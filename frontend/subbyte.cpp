// Packing and unpacking of the sub-byte integers at the file boundary.
#include "frontend/subbyte.h"

namespace onnxc::frontend {

size_t packed_size(ir::DType dt, int64_t numel) {
  const size_t per_byte = 8 / static_cast<size_t>(ir::dtype_packed_bits(dt));
  return (static_cast<size_t>(numel) + per_byte - 1) / per_byte;
}

ir::Tensor unpack_subbyte(ir::DType dt, std::vector<int64_t> dims, const uint8_t* bytes) {
  const int bits = ir::dtype_packed_bits(dt), per_byte = 8 / bits;
  const bool is_signed = ir::dtype_is_signed(dt);
  ir::Tensor t(dt, std::move(dims));
  auto* out = static_cast<uint8_t*>(t.mutable_raw());
  const int64_t n = t.numel();
  const unsigned mask = (1u << bits) - 1;
  for (int64_t i = 0; i < n; ++i) {
    unsigned v = (bytes[i / per_byte] >> ((i % per_byte) * bits)) & mask;
    if (is_signed && (v >> (bits - 1))) v |= ~mask;  // sign-extend into the byte
    out[i] = static_cast<uint8_t>(v);
  }
  return t;
}

std::string pack_subbyte(const ir::Tensor& t) {
  const int bits = ir::dtype_packed_bits(t.dtype()), per_byte = 8 / bits;
  std::string packed(packed_size(t.dtype(), t.numel()), '\0');
  const auto* in = static_cast<const uint8_t*>(t.raw());
  const unsigned mask = (1u << bits) - 1;
  for (int64_t i = 0; i < t.numel(); ++i)
    packed[i / per_byte] = static_cast<char>(static_cast<uint8_t>(packed[i / per_byte]) | ((in[i] & mask) << ((i % per_byte) * bits)));
  return packed;
}

}  // namespace onnxc::frontend
