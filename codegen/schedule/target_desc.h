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
  MaddUbs,     // vpmaddubsw + vpmaddwd (AVX2): u8×s8 pairs into saturating int16, then pairs into int32
  Vnni512,     // vpdpbusd on zmm (AVX-512 VNNI): four u8×s8 products added into each int32 lane
  ArmSdot,     // sdot/udot (ARMv8.2 dotprod): four like-signed 8-bit products into each int32 lane
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
