// Builds com.microsoft.MatMulNBits (ONNX Runtime's block-quantized weight product, lowered by
// codegen/lower/quant_nbits.cpp) from a weight given as codes, scales and zero points per block.
// Shared by fuse_dequantize_matmul (blocked DequantizeLinear -> MatMul) and quantize_int4_weights.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace onnxc::passes {

// W^T as N rows of K codes cut into blocks of `block` along K:
//   W[k, n] = (codes[n·K + k] - zero_points[n·k_blocks + k / block]) · scales[n·k_blocks + k / block]
// codes and zero points unsigned, below 2^bits; zero_points empty means 2^(bits-1) everywhere
// (MatMulNBits' default).
struct BlockQuantWeight {
  int bits = 4;
  int64_t block = 32, k = 0, n = 0;
  std::vector<uint8_t> codes;
  std::vector<float> scales;
  std::vector<uint8_t> zero_points;
  int64_t k_blocks() const { return (k + block - 1) / block; }
};

// The inputs of `MatMulNBits(a, B, scales[, zero_points][, g_idx omitted, bias])`, the weight's
// tensors added to `g` as initializers named after `hint` and packed as ONNX Runtime lays them out
// (B [N, k_blocks, block·bits/8], codes low bits first, a partial last block padded with its zero
// point; zero points packed per row).
std::vector<ir::Value*> matmul_nbits_inputs(ir::Graph& g, ir::Value* a, const BlockQuantWeight& w, ir::Value* bias,
                                            const std::string& hint);
// Its attributes: K, N, bits, block_size.
std::vector<ir::Attribute> matmul_nbits_attrs(const BlockQuantWeight& w);
inline constexpr const char* kMicrosoftDomain = "com.microsoft";

}  // namespace onnxc::passes
