// The fp32 FMA peak measurement (see fma_peak.h).
#include "tools/fma_peak.h"

#include <immintrin.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace onnxc::tools {

namespace {

// 12 independent FMA chains hide the FMA latency; each iteration is 2 FLOPs x lanes x 12. The result
// goes to a volatile so the loop is not optimized away. Vector types stay inside each function (no
// vector arguments across the target boundary).
volatile float g_sink;

// Twelve named accumulators with distinct values (an array lives in memory at -O2, timing stores;
// equal chains are merged into one by the compiler).
#define ONNXC_FMA_LOOP(V, FMA, SET1, ADD, LANES)                                       \
  V a = SET1(1.0000001f), b = SET1(0.9999999f);                                        \
  V c0 = SET1(0), c1 = SET1(1), c2 = SET1(2), c3 = SET1(3), c4 = SET1(4), c5 = SET1(5),   \
    c6 = SET1(6), c7 = SET1(7), c8 = SET1(8), c9 = SET1(9), c10 = SET1(10), c11 = SET1(11);\
  for (int64_t i = 0; i < iters; ++i) {                                                  \
    c0 = FMA(a, b, c0), c1 = FMA(a, b, c1), c2 = FMA(a, b, c2), c3 = FMA(a, b, c3);     \
    c4 = FMA(a, b, c4), c5 = FMA(a, b, c5), c6 = FMA(a, b, c6), c7 = FMA(a, b, c7);     \
    c8 = FMA(a, b, c8), c9 = FMA(a, b, c9), c10 = FMA(a, b, c10), c11 = FMA(a, b, c11); \
  }                                                                                      \
  V sum = ADD(ADD(ADD(ADD(c0, c1), ADD(c2, c3)), ADD(ADD(c4, c5), ADD(c6, c7))),         \
              ADD(ADD(c8, c9), ADD(c10, c11)));                                          \
  float out[LANES];                                                                      \
  std::memcpy(out, &sum, sizeof out);                                                    \
  g_sink = out[0];                                                                       \
  return 2.0 * LANES * 12 * static_cast<double>(iters);

__attribute__((target("avx512f"))) double fma_loop_avx512(int64_t iters) {
  ONNXC_FMA_LOOP(__m512, _mm512_fmadd_ps, _mm512_set1_ps, _mm512_add_ps, 16)
}

__attribute__((target("avx2,fma"))) double fma_loop_avx2(int64_t iters) {
  ONNXC_FMA_LOOP(__m256, _mm256_fmadd_ps, _mm256_set1_ps, _mm256_add_ps, 8)
}
#undef ONNXC_FMA_LOOP

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

const char* peak_isa(const std::string& target) {
  __builtin_cpu_init();
  auto allows = [&](const char* f) { return target.empty() || target.find(f) != std::string::npos; };
  if (__builtin_cpu_supports("avx512f") && allows("avx512")) return "avx512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && allows("avx2") && allows("fma"))
    return "avx2";
  return "";
}

double measure_peak_gflops(int threads, const std::string& target) {
  const std::string isa = peak_isa(target);
  double (*run)(int64_t) = isa == "avx512" ? fma_loop_avx512 : isa == "avx2" ? fma_loop_avx2 : nullptr;
  if (!run) return 0;
  // Each thread's rate per second of its own CPU time (the hardware's rate while it runs, whatever
  // else shares the cores), summed over threads; the best of several short trials.
  const int64_t iters = 1'000'000;
  threads = std::max(1, threads);
  double best = 0;
  for (int trial = 0; trial < 10; ++trial) {
    std::vector<double> rate(static_cast<size_t>(threads));
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i)
      pool.emplace_back([&, i] {
        double c0 = thread_cpu_seconds();
        double flops = run(iters);
        rate[static_cast<size_t>(i)] = flops / std::max(1e-9, thread_cpu_seconds() - c0);
      });
    for (auto& t : pool) t.join();
    double total = 0;
    for (double r : rate) total += r;
    best = std::max(best, total / 1e9);
  }
  return best;
}

}  // namespace onnxc::tools
