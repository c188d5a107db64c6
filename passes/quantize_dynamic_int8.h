// Dynamic int8 quantization (opt-in, `--quantize dynamic-int8`): float32 products with a constant
// weight become onnxc.DynamicQuantMatMul, int8 weights quantized per output column here and rows of
// the activation quantized at run time (codegen/lower/quant_matmul.cpp).
#pragma once

#include <memory>

#include "ir/graph.h"
#include "passes/pass.h"

namespace onnxc::passes {

// Rewrites y = MatMul(A [M, K], W [K, N]) and y = Gemm(A, W, C) (alpha 1, transA 0, C a constant
// bias) with W a constant float32 matrix, K and N >= 16, as
//
//   y = DynamicQuantMatMul(A, round(W / s_w) [int8, or int16 for wide rows], s_w)   (+ beta·C)
//
// with s_w[n] = max_k |W[k, n]| / 127 (1 for a zero column). Left as they are: A of rank other
// than 2 (fold_matmul_batch runs first and makes the usual [seq, batch, K] activations 2-D), a
// weight holding NaN or ±inf, and y a graph output (its name is the user's). When A is an
// attention output (a fused Attention, or softmax(..)·V, through views) its row holds every head's
// context, each a weighted average of that head's values, so one 256-level row range set by the
// widest head leaves the others few levels: that product gets an int16 weight (s_w = max|W| / q,
// q = floor(sqrt(2^31 / K)), 1672 for K = 768) and the attribute wide_rows = 1, which quantizes
// its rows to as many levels as keep the int32 sums exact. Measured on the bench's random-weight
// BERT: final error 3.75% with that product in 8 bits, 2.94% with it float32. Changes values: the
// error against float32 is what `onnxc compare` reports; softmax, norms and everything else stay
// float32.
//
// With int16_pairs (tools/build.cpp sets it, as the pass option quantize_dynamic_int8.int16_pairs,
// where the target's int8 kernel multiplies int16 pairs: AVX2, AVX-512 without VNNI) every product
// takes the wide form: that kernel stores rows and weights as int16 whatever their levels, so the
// extra bits cost nothing there (weights ±1672 for K = 768, ±836 for K = 3072).
//
// Otherwise (four-byte dot products, VNNI or sdot) the products whose weights int8 holds worst also
// take the wide form, up to a budget: each product's weight error is measured here, as the relative
// Frobenius error of W against its per-column int8 round trip (the rows' scale is unknown until run
// time, so the weights alone decide), and the worst are taken first while their sizes (K·N) add up
// to at most wide_budget of all int8 products' (pass option quantize_dynamic_int8.wide_budget).
// On the bench's BERT the FFN output projections (K = 3072, after GELU) lose most (0.85% against
// 0.77% for the others); eight of the twelve fit a quarter, and the error against float32 fell from
// 3.03% to 2.65% for 14% more CPU time (2026-11-27, docs/int8.md).
struct Int8Options {
  bool int16_pairs = false;
  double wide_budget = 0.25;
};
bool quantize_dynamic_int8(ir::Model& model, const Int8Options& opt = {});

// The pipeline's pass (reads PassContext::options, see Int8Options).
std::unique_ptr<Pass> make_quantize_dynamic_int8_pass();

}  // namespace onnxc::passes
