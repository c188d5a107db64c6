// The block-quantized (4- and 8-bit) weight GEMM: codes are unpacked and scaled in registers, never
// stored as floats. lower/quant_nbits.cpp builds the Funcs; this file owns the weight layout, the
// register block and the loops.
#pragma once

#include <Halide.h>

#include <cstdint>
#include <optional>

#include "codegen/schedule/target_desc.h"
#include "ir/tensor.h"

namespace onnxc::codegen {

// The quantized weight, as ONNX Runtime's MatMulNBits holds it: W^T is N×K, cut along K into
// k_blocks = ceil(K / block) blocks, each with a scale and a zero point per column n; codes are
// unsigned, `bits` wide, packed low bits first along k; w[k, n] = (code - zero_point) · scale.
struct NBitsWeight {
  int bits = 4;
  int64_t block = 32;
  int64_t k = 0, n = 0;
  int64_t k_blocks() const { return (k + block - 1) / block; }
  int64_t blob() const { return block * bits / 8; }  // bytes per block of one column
  int default_zero_point() const { return 1 << (bits - 1); }
};

// The register block for target `d`: `width` columns (four vectors of float lanes) by `rows` rows
// of A. A k step unpacks one vector of codes per column vector and feeds it to every row, so more
// rows amortize the unpacking (prefill); one row (decode) is a specialization.
//
// Prefill (M of at least `f32_min_rows`) takes another path: each task dequantizes its column panel
// a chunk of k at a time into a float tile that stays in L2 (the packed float32 layout of gemm.h,
// chunk × width) and runs the float32 register block over it, `f32_rows` rows at a time; the n-bit
// block's unpacking per row block costs more than one dequantization per panel once a task has
// that many rows.
struct NBitsBlock {
  int width;         // columns per panel and per register block
  int rows;          // rows per register block when M > 1 (n-bit kernel)
  int f32_width;     // columns per register block of the dequantized-panel kernel (divides width)
  int f32_rows;      // rows per register block of the dequantized-panel kernel
  int f32_min_rows;  // M from which the dequantized-panel kernel runs
};
NBitsBlock nbits_block(const TargetDesc& d);

// The k values of one dequantized chunk of the prefill path: whole blocks that divide the padded K
// (k_blocks · block), as many as fit a quarter of the target's L2 as a float tile of `width` columns.
int64_t nbits_f32_chunk(const NBitsWeight& w, int width, const TargetDesc& d);

// Packed layouts, each a column panel of `width` columns stored k-major, so one step of the block
// reads `width` consecutive bytes (codes) or values (per-block parameters):
//   codes  [panels, k_blocks·blob, width] u8:  codes[p, j, i] = byte j of column p·width + i (as in B)
//   scales [panels, k_blocks, width]     f32
//   zero points (when given) [panels, k_blocks, width] u8, unpacked
// Columns past N hold code 0 and scale 0.
ir::Tensor pack_nbits_codes(const ir::Tensor& b, const NBitsWeight& w, int width);
// The layout the int8-activation path reads (4-bit codes only): the same panels, but each column's
// bytes in words of 4, [panels, k_blocks·blob/4, width·4]: word g of column i holds its bytes 4g..4g+3,
// so one 32-bit lane carries 8 codes of one column (low nibbles k = 8g, 8g+2, 8g+4, 8g+6 within the
// row of bytes, high nibbles the odd k), what a four-way byte dot product multiplies.
ir::Tensor pack_nbits_code_words(const ir::Tensor& b, const NBitsWeight& w, int width);

// Whether a one-row MatMulNBits with accuracy_level 4 multiplies int8 activations in integers on
// this target (AVX-512 VNNI's vpdpbusd, ARM's sdot, AVX2's vpmaddubsw pairs); elsewhere it keeps
// the float32 products.
bool nbits_int8_dot(const Halide::Target& t);
// Whether that integer kernel sums byte pairs into int16 lanes (vpmaddubsw, AVX2: no four-way byte
// dot product) rather than four bytes into int32 lanes.
bool nbits_int8_pairs(const Halide::Target& t);

ir::Tensor pack_nbits_scales(const ir::Tensor& scales, const NBitsWeight& w, int width);
ir::Tensor pack_nbits_zero_points(const ir::Tensor& zp, const NBitsWeight& w, int width);

// What the lowering built. acc(i, p, m) = Σ_b scale·(dot(i, p, b, m) - zero·asum(b, m)) over the
// k blocks b (RDom `kb`); dot(i, p, b, m) sums A·code over block b (RDom `j`, one packed byte a
// step); asum(b, m) sums block b of row m of A.
//
// The prefill path: wdq(i, p, k) is the dequantized panel (as pack_panels lays out a float B),
// f32_part(i, p, m, c) = Σ A(m, k)·wdq(i, p, k) over chunk c of k (RDom `kc`, `chunk` values of k),
// f32_acc(i, p, m) = Σ_c f32_part(i, p, m, c) (RDom `c`).
//
// The one-row path (decode): dot1(i, p, b, h) sums A·code over the codes of block b at even (h = 0)
// or odd (h = 1) positions along k (RDom `j1`), so the two halves of each packed byte feed
// independent accumulators; acc1(i, p) = Σ_b scale·(dot1(.., 0) + dot1(.., 1) - zero·asum(b, 0)).
struct NBitsFuncs {
  Halide::Func acc, dot, asum;
  Halide::RDom kb, j;
  Halide::Func acc1, dot1;
  Halide::RDom j1;
  // The one-row path with int8 activations (`int8`: accuracy_level 4 on a target with an integer
  // dot product, see nbits_int8_dot): a_amax(b) = max |A| over block b (inf when the block holds a
  // NaN or inf), a_q(t, h, g) the row quantized to int8 (code order of a packed word, below),
  // a_qsum(b) its block sums, dot8(i, p, b, h) the int32 sums of code × a_q over block b's low
  // (h = 0) or high (h = 1) nibbles (RDom `r8`: the 4 bytes of a word, then the block's words),
  // acc8(i, p) = Σ_b scale·s_a(b)·(dot8(.., 0) + dot8(.., 1) - zero·a_qsum(b)).
  bool int8 = false;
  bool signed_codes = false;  // the codes multiplied as int8 (ARM's sdot), else as uint8 (vpdpbusd)
  Halide::Func acc8, dot8, a_amax, a_q, a_qsum;
  Halide::RDom r8;
  // With `pairs` (nbits_int8_pairs) dot8(i, p, b) is instead both nibbles' int32 sum, gathered
  // (RDom `r8`: the pair e, then the sub-blocks s) from dot16(e, i, p, b, s): the int16 sums of
  // code × a_q over bytes 2e, 2e+1 of column i's words in sub-block s of block b (RDom `r16`: the
  // pair's byte, the nibble, the sub-block's words), what one vpmaddubsw a word and nibble adds up.
  bool pairs = false;
  Halide::Func dot16, pair_ones;
  Halide::RDom r16;
  Halide::Func codes;          // the packed codes (an input): the one-row path prefetches them
  int64_t prefetch_blocks = 1;  // k blocks ahead
  Halide::Func wdq, f32_part, f32_acc;
  Halide::Func a_rows;  // a_rows(k, m): a rank-3+ A copied as rows of K for f32_part (else undefined)
  Halide::RDom kc, c;
  NBitsBlock block;
  Halide::Expr m_extent;            // M: the rows of A
  Halide::Expr use_f32() const { return m_extent >= block.f32_min_rows; }
  std::optional<int64_t> m_static;  // M when the model fixes it
};

// Schedules relative to `out` (n, m): the kernel's result or an elementwise epilogue over it
// (`is_output`), or a Func the kernel computes whole before its output.
void schedule_nbits_gemm(NBitsFuncs g, Halide::Func out, const Halide::Target& target, bool is_output = true);

}  // namespace onnxc::codegen
