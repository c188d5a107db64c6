// The file form of the sub-byte integers (int4, uint4, int2, uint2): ONNX packs them, the first
// element in the lowest bits of each byte; the IR holds them one element per byte (see ir/dtype.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace onnxc::frontend {

// Bytes the packed form of `numel` elements of `dt` takes (dt a sub-byte type).
size_t packed_size(ir::DType dt, int64_t numel);
// `bytes` (packed_size(dt, numel) of them) unpacked into a tensor of `dims`, signed types sign-extended.
ir::Tensor unpack_subbyte(ir::DType dt, std::vector<int64_t> dims, const uint8_t* bytes);
// The packed bytes of an unpacked sub-byte tensor; values out of the type's range keep their low bits.
std::string pack_subbyte(const ir::Tensor& t);

}  // namespace onnxc::frontend
