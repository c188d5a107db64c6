// The machine's fp32 FMA peak, measured, for an instruction set: what `onnxc bench` and gemm_bench
// judge kernel throughput against. No dependencies, so benchmarks outside the CLI link it too.
#pragma once

#include <string>

namespace onnxc::tools {

// The widest FMA instruction set ("avx512", "avx2" or "" for neither) that both this CPU and the
// Halide target string `target` have (an empty target: the CPU alone). Code compiled for AVX2 peaks
// at the AVX2 rate even on an AVX-512 machine, so its efficiency is judged against that.
const char* peak_isa(const std::string& target);

// fp32 FMA throughput of this machine on `threads` threads, in GFLOP/s, measured with a short
// register-only FMA loop of peak_isa(target) per second of each thread's CPU time, so other
// processes on the cores do not lower it; 0 if neither ISA is available.
double measure_peak_gflops(int threads, const std::string& target = "");

// The int8 products' peak on `threads` threads, in GOP/s (2 per multiply-add), measured the same way
// with the instructions the int8 GEMM compiles to for peak_isa(target): on AVX-512 with VNNI,
// vpdpbusd (four u8 × s8 products per int32 lane); otherwise vpmaddwd + vpaddd on int16 pairs (the
// AVX2 kernel's exact form; the saturating vpmaddubsw form, which it does not use, measures 12% higher:
// docs/int8.md). `isa` (if given) receives what was measured ("avx512-vnni", "avx2-pmaddwd" or "").
double measure_int8_peak_gops(int threads, const std::string& target = "", std::string* isa = nullptr);

}  // namespace onnxc::tools
