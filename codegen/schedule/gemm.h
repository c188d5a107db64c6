// GEMM schedules: a register-blocked AVX-512 kernel over column panels of B (packed at compile time
// when B is a weight, staged per panel at run time otherwise), a plain tiled schedule for other
// dtypes, and a CUDA tiling. matmul.cpp builds the Funcs; this file owns the layout and the loops.
#pragma once

#include <Halide.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "codegen/schedule/target_desc.h"
#include "ir/tensor.h"

namespace onnxc::codegen {

// Packed weight layout. B is K×N (ONNX [.., K, N]); its columns are cut into panels of `width`
// columns (a multiple of the target's f32 vector lanes), and each panel is stored k-major:
//
//   packed[.., p, k, i] = B[.., k, p·width + i]     (zero where p·width + i >= N)
//
// so ONNX dims [.., ceil(N/width), K, width] and, innermost first in Halide, Bp(i, k, p, ..). One
// k step of a register block reads `width` consecutive floats, and a panel (K·width floats) stays
// in L2 while every row block of A streams past it.
struct PanelShape {
  int width = 48;  // columns per panel = accumulator block width
  int rows = 8;    // rows per accumulator block: rows · width/lanes accumulator registers
};

// The register block for N columns on target `d`: a panel of 1 to 4 vectors and as many rows as
// the target's accumulator registers allow (AVX-512: 48 × 8 in 24 zmm; AVX2: 24 × 4 in 12 ymm;
// NEON: 12 × 8 in 24 q registers), trading the block's arithmetic intensity against the columns
// padded to a whole panel.
// `k` (K, 0 when not known) steers away from panels too large for L2; `m` (M: > 0 static, -1 a
// run-time extent, 0 not known) lets a block of fewer rows win where it divides M.
PanelShape choose_panel(int64_t n, const TargetDesc& d, int64_t k = 0, int64_t m = 0);

// Packs a constant B ([.., K, N], or [.., N, K] when `transposed`) into the layout above.
ir::Tensor pack_panels(const ir::Tensor& b, bool transposed, int width);

// What a matmul lowering built, for its schedule. `acc(n, m, batch..)` (innermost first) has a
// pure definition (zero) and one update summing over `k`; it holds the result before alpha, beta,
// C and any fused epilogue. `b_stage(i, k, p, batch..)` is B staged into panels at run time when B
// is not a constant (undefined otherwise).
struct GemmFuncs {
  Halide::Func acc;
  Halide::RDom k;
  Halide::Func b_stage;
  // GPU targets (a matrix times a matrix): acc reads A and B through these, a_tile(k, m, batch..)
  // and b_tile(n, k, batch..), which a schedule may stage per tile of k (undefined elsewhere).
  Halide::Func a_tile, b_tile;
  PanelShape panel;
  bool blocked = false;  // f32 with panelled B: use the register-blocked kernel
  // A 1-D operand (MatMul): the output lacks m (a_vector) or n (b_vector), so acc is computed whole
  // instead of per output tile.
  bool a_vector = false, b_vector = false;
  std::optional<int64_t> m_static;  // M when it is a compile-time extent (then no M == 1 specialization)
  bool output_matches() const { return !a_vector && !b_vector; }
};

// The register block shared by the GEMM and convolution schedules: `acc` (a pure zero and one update
// over `k`; its first two dims the block's columns and rows, any others one index each) computed at
// `loop` of `out` as `width` columns × `rows` rows held in vector registers, `vec` lanes a vector,
// every column vector and row unrolled, with the reduction innermost of all but them.
void place_register_block(Halide::Func acc, const Halide::RDom& k, Halide::Func out, const Halide::Var& loop, int width,
                          const Halide::Expr& rows, int vec);

// Schedules the GEMM relative to `output`, the kernel's realized Func: either acc's own result or an
// elementwise epilogue over it (bias, activation), which is then computed tile by tile with it.
void schedule_gemm(const GemmFuncs& g, Halide::Func output, const Halide::Target& target);

}  // namespace onnxc::codegen
