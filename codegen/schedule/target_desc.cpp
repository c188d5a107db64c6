// Halide target -> TargetDesc (see target_desc.h).
#include "codegen/schedule/target_desc.h"

namespace onnxc::codegen {

TargetDesc describe(const Halide::Target& t) {
  using T = Halide::Target;
  TargetDesc d;
  if (t.has_gpu_feature()) {
    d.isa = "cuda";
    d.gpu = true;
    d.vector_bytes = 4;
    d.vector_registers = 255;  // per thread; GPU schedules size blocks by threads, not by this
    d.fma = true;
    return d;
  }
  if (t.arch == T::X86) {
    if (t.has_feature(T::AVX512_Skylake) || t.has_feature(T::AVX512)) {
      d.isa = "avx512";
      d.vector_bytes = 64;
      d.vector_registers = 32;
      d.l2_bytes = 1 << 20;
      // Halide 14 enables vpdpbusd only through its Sapphire Rapids feature set (see target.h).
      d.int8_dot = t.has_feature(T::AVX512_SapphireRapids) ? Int8Dot::Vnni512 : Int8Dot::Int16Pairs;
    } else if (t.has_feature(T::AVX2)) {
      d.isa = "avx2";
      d.vector_bytes = 32;
      d.vector_registers = 16;
      d.int8_dot = Int8Dot::Int16Pairs;
      d.l2_bytes = 512 << 10;
    } else {
      d.isa = t.has_feature(T::AVX) ? "avx" : "sse4";
      d.vector_bytes = t.has_feature(T::AVX) ? 32 : 16;
      d.vector_registers = 16;
      d.l2_bytes = 256 << 10;
    }
    d.fma = t.has_feature(T::FMA);
    if (t.bits == 32) d.vector_registers = 8;
    return d;
  }
  if (t.arch == T::ARM) {
    d.isa = "neon";
    d.vector_bytes = 16;
    d.vector_registers = t.bits == 64 ? 32 : 16;
    d.fma = t.bits == 64 || t.has_feature(T::ARMv7s);
    d.int8_dot = t.has_feature(T::ARMDotProd) ? Int8Dot::ArmSdot : Int8Dot::None;
    d.l1d_bytes = 64 << 10;
    d.l2_bytes = 1 << 20;
    return d;
  }
  d.isa = "generic";
  d.vector_bytes = std::max(4, t.natural_vector_size<float>() * 4);
  return d;
}

}  // namespace onnxc::codegen
