// The targets whose code this machine can run, for tests that check a schedule on every ISA level.
#pragma once

#include <string>
#include <vector>

namespace onnxc::test {

// The host first, then the x86 levels below it that it runs: x86-64-avx2 on an AVX-512 machine, so
// a block sized for one ISA is checked on every ISA here (AVX2 code runs on any AVX-512 CPU).
inline std::vector<std::string> runnable_targets() {
  std::vector<std::string> t = {"host"};
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    t.push_back("x86-64-avx2");
  return t;
}

}  // namespace onnxc::test
