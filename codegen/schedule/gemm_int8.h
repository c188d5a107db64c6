// The int8 GEMM schedule: u8 activations × s8 weights summed in int32, four k at a time (vpdpbusd on
// AVX-512 VNNI) or two (both operands stored as int16, vpmaddwd, on AVX2). quant_matmul.cpp builds the Funcs;
// this file owns the weight layout and loops.
#pragma once

#include <Halide.h>

#include <cstdint>

#include "codegen/schedule/target_desc.h"
#include "ir/tensor.h"

namespace onnxc::codegen {

// Packed weights. B is K×N int8; k is padded to a multiple of the block's k group (g = 4 or 2) and n
// to a multiple of the block width w, both with zeros, and stored in column panels of w columns, each
// panel contiguous (K·w values: one k step of a block reads one cache line or two, and a panel spans
// a few pages however wide N is), with one 32-bit lane holding the g consecutive k of one column that
// one dot-product instruction sums:
//
//   packed[p, ko, g·i + ki] = B[g·ko + ki, w·p + i]      ONNX dims [Np/w, Kp/g, g·w]
//
// g = 4 (vpdpbusd: four u8 × s8 products per int32 lane) keeps int8; g = 2 (vpmaddwd: two int16 ×
// int16 products per lane) stores B widened to int16 at compile time.
struct Int8Block {
  int width;        // columns per accumulator block: whole vectors of int32
  int rows;         // rows per accumulator block
  int k_group = 4;  // k summed per int32 lane by one instruction: 4 (u8 × s8 bytes) or 2 (int16 pairs)
};

// The block for target `d`. With a four-way dot product (AVX-512 VNNI's vpdpbusd, ARM's sdot): the
// accumulator budget split for the fewest loads per product, 48 columns × 8 rows in 24 zmm (NEON:
// 12 × 8). With vpmaddubsw/vpmaddwd only (AVX2, AVX-512 without VNNI):
// int16 pairs through vpmaddwd, which sums them exactly (vpmaddubsw's int16 sums of two u8 × s8
// products saturate: 2·255·127 > 32767), with as many accumulators as the registers hold beside one
// vector per column group, the broadcast row value, the product before it is added and one spare
// (AVX2: 16 columns × 5 rows in 10 of 16 ymm). Elsewhere (NEON, SSE): bytes widened in the loop, small blocks.
Int8Block int8_block(const TargetDesc& d);

// B (K×N int8, or int16 for a k group of 2) in the layout above for `block` (int16 when its k group is 2).
ir::Tensor pack_int8_panels(const ir::Tensor& b, const Int8Block& block);

// What the lowering built: acc(n, m) = Σ_k aq(k, m)·B[k, n] over r = (ki, ko), k = g·ko + ki, the
// quantized rows `aq(k, m)` (u8, or int16 when g = 2) and each row's range `lo(m)`, `hi(m)` with
// their partial extrema; Bp is read as packed[n / w, k / g, g·(n % w) + k % g].
struct Int8GemmFuncs {
  Halide::Func acc, aq, lo, hi, lo_part, hi_part;
  Halide::RDom r;
  Int8Block block;
};

// Schedules relative to `output`, the kernel's realized Func over (n, m): acc's result turned back
// into floats, maybe with an elementwise epilogue.
void schedule_int8_gemm(Int8GemmFuncs g, Halide::Func output, const Halide::Target& target);

}  // namespace onnxc::codegen
