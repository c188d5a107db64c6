// The int8 GEMM schedule: u8 activations × s8 weights summed in int32, four k at a time (vpdpbusd on
// AVX-512 VNNI; widened to int16 pairs and vpmaddwd on AVX2). quant_matmul.cpp builds the Funcs;
// this file owns the weight layout and loops.
#pragma once

#include <Halide.h>

#include <cstdint>

#include "codegen/schedule/target_desc.h"
#include "ir/tensor.h"

namespace onnxc::codegen {

// Packed int8 weights. B is K×N int8; k is padded to a multiple of 4 and n to a multiple of
// the block width, both with zeros, and stored so that one 32-bit lane holds four consecutive k of
// one column:
//
//   packed[ko, 4·n + ki] = B[4·ko + ki, n]      ONNX dims [Kp/4, 4·Np]; Halide Bp(4·n + ki, ko)
//
// so one k step of a register block reads width·4 consecutive bytes (two vectors). (n and ki
// share one dim so that the loads are dense whatever strides the buffer has: Halide knows only
// that the innermost stride is 1.)
struct Int8Block {
  int width;  // columns per accumulator block: two vectors of int32
  int rows;   // rows per accumulator block
};

// The block for target `d`: two int32 vectors wide (AVX-512: 32 columns × 12 rows in 24 zmm). A
// target without a 4-way dot instruction (AVX2) needs registers for the widened operands, so its
// blocks are 16 columns × 4 rows in 8 ymm.
Int8Block int8_block(const TargetDesc& d);

ir::Tensor pack_int8_panels(const ir::Tensor& b, int width);

// What the lowering built: acc(n, m) = Σ_k aq(k, m)·Bp(4·n + k % 4, k / 4) over r = (ki, ko), the
// quantized rows `aq(k, m)` (u8) and each row's range `lo(m)`, `hi(m)` with their partial extrema.
struct Int8GemmFuncs {
  Halide::Func acc, aq, lo, hi, lo_part, hi_part;
  Halide::RDom r;
  Int8Block block;
};

// Schedules relative to `output`, the kernel's realized Func over (n, m): acc's result turned back
// into floats, maybe with an elementwise epilogue.
void schedule_int8_gemm(Int8GemmFuncs g, Halide::Func output, const Halide::Target& target);

}  // namespace onnxc::codegen
