// Named targets -> Halide targets.
#include "codegen/target.h"

#include <fstream>
#include <iterator>

#include "codegen/schedule/target_desc.h"
#include "ir/error.h"

namespace onnxc::codegen {

namespace {

// Halide 14 reads AVX-512 BF16 + VNNI as "avx512_sapphirerapids", which lets LLVM use AVX512-FP16
// instructions; CPUs without them (AMD Zen 4/5) would die with SIGILL in f16/bf16 kernels. The
// feature is kept only where /proc/cpuinfo lists avx512_fp16.
const std::string& cpuinfo_text() {
  static const std::string text = [] {
    std::ifstream cpuinfo("/proc/cpuinfo");
    return std::string((std::istreambuf_iterator<char>(cpuinfo)), std::istreambuf_iterator<char>());
  }();
  return text;
}

Halide::Target host_target() {
  Halide::Target t = Halide::get_host_target();
  const std::string& text = cpuinfo_text();
  if (t.has_feature(Halide::Target::AVX512_SapphireRapids) && text.find("avx512_fp16") == std::string::npos)
    t = t.without_feature(Halide::Target::AVX512_SapphireRapids);
  return t;
}

}  // namespace

Halide::Target with_dot_products(const Halide::Target& t) {
  if (t.arch != Halide::Target::X86 || !t.has_feature(Halide::Target::AVX512_Skylake) || t.has_gpu_feature() ||
      t.has_feature(Halide::Target::AVX512_SapphireRapids) || cpuinfo_text().find("avx512_vnni") == std::string::npos)
    return t;
  return t.with_feature(Halide::Target::AVX512_SapphireRapids);
}

bool int8_products_pay(const Halide::Target& t) {
  // x86: vpdpbusd (VNNI) or vpmaddwd on int16 pairs (AVX2), both ahead of the FMA rate. ARM with
  // dotprod: sdot, four byte products per int32 lane against one float per FMA lane; the rows go in
  // as q - 128 (quant_matmul.cpp), since sdot multiplies like-signed bytes (usdot, u8 × s8, is
  // ARMv8.6 i8mm, which Halide 14 does not emit). Plain NEON would widen bytes in the loop: float32.
  const Int8Dot dot = describe(with_dot_products(t)).int8_dot;
  return dot == Int8Dot::Vnni512 || dot == Int8Dot::Int16Pairs || dot == Int8Dot::ArmSdot;
}

bool int8_sums_int16_pairs(const Halide::Target& t) {
  return describe(with_dot_products(t)).int8_dot == Int8Dot::Int16Pairs;
}

Halide::Target parse_target(const std::string& name) {
  if (name.empty() || name == "host") return host_target();
  if (name == "x86-64-avx512") return Halide::Target("x86-64-linux-avx-avx2-avx512-avx512_skylake-f16c-fma-sse41");
  if (name == "x86-64-avx2") return Halide::Target("x86-64-linux-avx-avx2-f16c-fma-sse41");
  if (name == "arm64") return Halide::Target("arm-64-linux");
  if (name == "arm64-dotprod") return Halide::Target("arm-64-linux-arm_dot_prod");
  if (name == "cuda") return host_target().with_feature(Halide::Target::CUDA)
                                .with_feature(Halide::Target::CUDACapability80);
  std::string s = name;
  if (s.rfind("cuda", 0) == 0) s = "host-" + s;
  if (s.rfind("host-", 0) == 0) s = host_target().to_string() + s.substr(4);
  user_check(Halide::Target::validate_target_string(s))
      << "unknown target '" << name
      << "' (expected host, x86-64-avx2, x86-64-avx512, arm64, arm64-dotprod, cuda or a Halide target string)";
  return Halide::Target(s);
}

}  // namespace onnxc::codegen
