// What a schedule needs to know about the machine a kernel is compiled for, derived from the Halide
// target alone (never from the CPU onnxc happens to run on), so one target string gives one code.
// Schedules size register blocks, tiles and packed layouts from these numbers; no schedule tests an
// ISA feature itself.
#pragma once

#include <Halide.h>

#include <string>

namespace onnxc::codegen {

// How a target computes int8 dot products (u8 × s8 summed into int32 lanes).
enum class Int8Dot {
  None,        // widen to int16/int32 and multiply (SSE, plain NEON)
  Int16Pairs,  // vpmaddwd (AVX2, AVX-512 without VNNI): the row stored as int16 0..255, the weight
               // widened to int16 at compile time; two exact int16 products into each int32 lane
               // (not vpmaddubsw, whose u8×s8 pair sums saturate in int16: see docs/int8.md)
  Vnni512,     // vpdpbusd on zmm (AVX-512 VNNI): four u8×s8 products added into each int32 lane
  ArmSdot,     // sdot (ARMv8.2 dotprod): four s8×s8 products into each int32 lane; the u8 row goes in
               // as q - 128 and 128·colsum(W) is added back, so the int32 sums are the u8×s8 ones
};

struct TargetDesc {
  std::string isa;            // a short name for reports: "avx512", "avx2", "sse4", "neon", "cuda"
  bool gpu = false;
  int vector_bytes = 16;      // width of one SIMD register
  int vector_registers = 16;  // architectural SIMD registers a kernel can keep values in
  bool fma = false;           // fused multiply-add instructions
  Int8Dot int8_dot = Int8Dot::None;
  int l1d_bytes = 32 << 10;   // per-core data caches a tile should fit in (typical sizes of the ISA
  int l2_bytes = 1 << 20;     // class: a target string says nothing about caches)

  int f32_lanes() const { return vector_bytes / 4; }
  // Accumulator registers a register-blocked kernel may hold, leaving room for the operands it
  // streams (one vector per column group and a broadcast row value) without spilling.
  int accumulator_budget() const { return vector_registers * 3 / 4; }
};

// The description of `t`. Features the target does not name are assumed absent.
TargetDesc describe(const Halide::Target& t);

}  // namespace onnxc::codegen
