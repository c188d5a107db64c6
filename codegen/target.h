// Target strings accepted by `onnxc compile --target`: `host` (the machine compiling), the named feature
// sets `x86-64-avx2` (AVX2 + FMA), `x86-64-avx512`, `arm64` (NEON) and `arm64-dotprod` (NEON + sdot/udot,
// ARMv8.2), `cuda` (host CPU + CUDA, compute capability 8.0), or any Halide target string.
#pragma once

#include <Halide.h>

#include <string>

namespace onnxc::codegen {

// The Halide target a name stands for; UserError for an unknown name.
Halide::Target parse_target(const std::string& name);

// `t` with Halide's AVX512_SapphireRapids feature, which is what makes Halide 14 emit the AVX-512
// VNNI dot products (vpdpbusd) of the int8 kernels, when `t` is an AVX-512 x86 target and this
// machine's CPU lists avx512_vnni; `t` unchanged otherwise. host_target() leaves the feature out on
// CPUs without AVX512-FP16 (see target.cpp); kernels of integer dot products and f32 arithmetic use
// none of the FP16 instructions, so it is safe for them alone.
Halide::Target with_dot_products(const Halide::Target& t);

// Whether int8 products beat float32 ones on `t`: on x86 with AVX-512 VNNI (vpdpbusd, as
// with_dot_products enables it) or AVX2 (u8 rows and s8 weights widened to int16 pairs, summed exactly
// by vpmaddwd: 1.5x the fp32 FMA rate of AVX2 code, see docs/int8.md). Not on ARM (sdot/udot take
// like-signed bytes, Halide 14 emits no usdot for u8 x s8, and no ARM machine has measured the
// widened kernel) nor x86 below AVX2: there `--quantize dynamic-int8` keeps the model float32.
bool int8_products_pay(const Halide::Target& t);
// Whether t's int8 kernel multiplies int16 pairs (vpmaddwd: AVX2, AVX-512 without VNNI), where rows
// and weights are stored as int16 whatever their levels (--quantize dynamic-int8 then widens them).
bool int8_sums_int16_pairs(const Halide::Target& t);

}  // namespace onnxc::codegen
