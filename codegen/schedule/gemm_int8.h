// The int8 GEMM schedule (AVX-512 VNNI): u8 activations × s8 weights summed in int32 by vpdpbusd,
// four k at a time. quant_matmul.cpp builds the Funcs; this file owns the weight layout and loops.
#pragma once

#include <Halide.h>

#include <cstdint>

#include "ir/tensor.h"

namespace onnxc::codegen {

// Packed int8 weights. B is K×N int8; k is padded to a multiple of 4 and n to a multiple of
// kInt8PanelWidth, both with zeros, and stored so that one 32-bit lane holds four consecutive k of
// one column:
//
//   packed[ko, 4·n + ki] = B[4·ko + ki, n]      ONNX dims [Kp/4, 4·Np]; Halide Bp(4·n + ki, ko)
//
// so one k step of a register block reads kInt8PanelWidth·4 consecutive bytes (two zmm). (n and ki
// share one dim so that the loads are dense whatever strides the buffer has: Halide knows only
// that the innermost stride is 1.)
constexpr int kInt8PanelWidth = 32;  // columns per accumulator block: 2 zmm of int32
constexpr int kInt8BlockRows = 12;   // rows per accumulator block: 12 × 2 = 24 zmm accumulators

ir::Tensor pack_int8_panels(const ir::Tensor& b);

// What the lowering built: acc(n, m) = Σ_k aq(k, m)·Bp(4·n + k % 4, k / 4) over r = (ki, ko), the
// quantized rows `aq(k, m)` (u8) and each row's range `lo(m)`, `hi(m)` with their partial extrema.
struct Int8GemmFuncs {
  Halide::Func acc, aq, lo, hi, lo_part, hi_part;
  Halide::RDom r;
};

// Schedules relative to `output`, the kernel's realized Func over (n, m): acc's result turned back
// into floats, maybe with an elementwise epilogue.
void schedule_int8_gemm(Int8GemmFuncs g, Halide::Func output, const Halide::Target& target);

}  // namespace onnxc::codegen
