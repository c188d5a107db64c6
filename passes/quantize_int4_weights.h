// Weight-only int4 quantization (opt-in, `--quantize int4-weights[:block=N][:symmetric][:acc=int8]`): float32
// products with a constant weight become com.microsoft.MatMulNBits with 4-bit codes per block of K,
// computed by the fused kernel of codegen/lower/quant_nbits.cpp (weights dequantized in registers).
#pragma once

#include <cstdint>
#include <memory>

#include "ir/graph.h"
#include "passes/pass.h"

namespace onnxc::passes {

struct Int4Options {
  int64_t block = 32;      // weights per (column, block) sharing a scale: a power of two, 16..256
  bool symmetric = false;  // scale from max |w|, zero point 8; otherwise from [min, max] with a zero point
  // MatMulNBits's accuracy_level: 0 writes none (float32 products); 4 lets A be quantized to int8 per
  // block and the products run in integers (what ONNX Runtime GenAI's builder writes for CPUs).
  int64_t accuracy_level = 0;
};

// Rewrites y = MatMul(A [.., K], W [K, N]) and y = Gemm(A, W, C) (alpha 1, transA 0, beta·C a
// constant [N] bias; W [N, K] when transB) with W a finite constant float32 matrix, K and N >= 16,
// as MatMulNBits(A, codes, scales, zero points[, bias]) over blocks of `block` along K, rounding to
// nearest (half to even):
//   asymmetric (default): lo = min(0, min w), hi = max(0, max w) over the block, s = (hi - lo) / 15,
//     z = round(-lo / s) in [0, 15], code = clamp(round(w / s) + z, 0, 15): all 16 levels serve
//     one-sided blocks, and 0 stays exact;
//   symmetric: s = max |w| / 7, z = 8, code = clamp(round(w / s) + 8, 1, 15): no zero points stored
//     (1/16 fewer bytes to stream), one level unused.
// A K that is not a multiple of `block` ends in a partial block (MatMulNBits pads it). Graph
// outputs keep their names (the LM head's logits). Changes values: `onnxc compare` reports how far.
bool quantize_int4_weights(ir::Model& model, const Int4Options& opt);

// The registry's pass: options from PassContext::options ("quantize_int4_weights.block",
// "quantize_int4_weights.symmetric", "quantize_int4_weights.accuracy_level").
std::unique_ptr<Pass> make_quantize_int4_weights_pass();

}  // namespace onnxc::passes
