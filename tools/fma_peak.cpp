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

// The int8 forms: 10 accumulators, each taking one dot-product step per iteration (OPS int operations
// per step). vpdpbusd reads its accumulator, so its chains are neither merged nor hoisted; the
// vpmaddwd + vpaddd pair on constant operands would be, so it is written in assembly (two product
// registers alternating, as the GEMM's block uses them).
volatile int32_t g_isink;

__attribute__((target("avx512f,avx512vnni"))) double int8_loop_vnni512(int64_t iters) {
  const __m512i a = _mm512_set1_epi32(0x01020304), b = _mm512_set1_epi32(0x7f7e7d7c);
  __m512i c[10];
  for (int i = 0; i < 10; ++i) c[i] = _mm512_set1_epi32(i);
  for (int64_t i = 0; i < iters; ++i) {
    c[0] = _mm512_dpbusd_epi32(c[0], a, b), c[1] = _mm512_dpbusd_epi32(c[1], a, b);
    c[2] = _mm512_dpbusd_epi32(c[2], a, b), c[3] = _mm512_dpbusd_epi32(c[3], a, b);
    c[4] = _mm512_dpbusd_epi32(c[4], a, b), c[5] = _mm512_dpbusd_epi32(c[5], a, b);
    c[6] = _mm512_dpbusd_epi32(c[6], a, b), c[7] = _mm512_dpbusd_epi32(c[7], a, b);
    c[8] = _mm512_dpbusd_epi32(c[8], a, b), c[9] = _mm512_dpbusd_epi32(c[9], a, b);
  }
  __m512i sum = c[0];
  for (int i = 1; i < 10; ++i) sum = _mm512_add_epi32(sum, c[i]);
  int32_t lanes[16];
  std::memcpy(lanes, &sum, sizeof lanes);
  g_isink = lanes[0];
  return 2.0 * 64 * 10 * static_cast<double>(iters);
}

#define ONNXC_MADDWD(acc, tmp) "vpmaddwd %[a], %[b], %%" tmp "\n\tvpaddd %%" tmp ", %[" acc "], %[" acc "]\n\t"
__attribute__((target("avx2"))) double int8_loop_avx2(int64_t iters) {
  const __m256i a = _mm256_set1_epi32(0x00030005), b = _mm256_set1_epi32(0x007f0042);
  __m256i c0 = a, c1 = a, c2 = a, c3 = a, c4 = a, c5 = a, c6 = a, c7 = a, c8 = a, c9 = a;
  for (int64_t i = 0; i < iters; ++i)
    __asm__ volatile(ONNXC_MADDWD("c0", "ymm14") ONNXC_MADDWD("c1", "ymm15") ONNXC_MADDWD("c2", "ymm14")
                     ONNXC_MADDWD("c3", "ymm15") ONNXC_MADDWD("c4", "ymm14") ONNXC_MADDWD("c5", "ymm15")
                     ONNXC_MADDWD("c6", "ymm14") ONNXC_MADDWD("c7", "ymm15") ONNXC_MADDWD("c8", "ymm14")
                     ONNXC_MADDWD("c9", "ymm15")
                     : [c0] "+x"(c0), [c1] "+x"(c1), [c2] "+x"(c2), [c3] "+x"(c3), [c4] "+x"(c4), [c5] "+x"(c5),
                       [c6] "+x"(c6), [c7] "+x"(c7), [c8] "+x"(c8), [c9] "+x"(c9)
                     : [a] "x"(a), [b] "x"(b)
                     : "xmm14", "xmm15");
  __m256i sum = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(c0, c1), _mm256_add_epi32(c2, c3)),
                                 _mm256_add_epi32(_mm256_add_epi32(c4, c5), _mm256_add_epi32(c6, c7)));
  sum = _mm256_add_epi32(sum, _mm256_add_epi32(c8, c9));
  g_isink = _mm256_extract_epi32(sum, 0);
  return 2.0 * 16 * 10 * static_cast<double>(iters);
}
#undef ONNXC_MADDWD

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

namespace {

// Each thread's rate per second of its own CPU time (the hardware's rate while it runs, whatever
// else shares the cores), summed over threads; the best of several short trials.
double measure_loop(double (*run)(int64_t), int threads) {
  const int64_t iters = 1'000'000;
  threads = std::max(1, threads);
  double best = 0;
  for (int trial = 0; trial < 10; ++trial) {
    std::vector<double> rate(static_cast<size_t>(threads));
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i)
      pool.emplace_back([&, i] {
        double c0 = thread_cpu_seconds();
        double ops = run(iters);
        rate[static_cast<size_t>(i)] = ops / std::max(1e-9, thread_cpu_seconds() - c0);
      });
    for (auto& t : pool) t.join();
    double total = 0;
    for (double r : rate) total += r;
    best = std::max(best, total / 1e9);
  }
  return best;
}

}  // namespace

double measure_peak_gflops(int threads, const std::string& target) {
  const std::string isa = peak_isa(target);
  double (*run)(int64_t) = isa == "avx512" ? fma_loop_avx512 : isa == "avx2" ? fma_loop_avx2 : nullptr;
  return run ? measure_loop(run, threads) : 0;
}

double measure_int8_peak_gops(int threads, const std::string& target, std::string* isa) {
  __builtin_cpu_init();
  const std::string base = peak_isa(target);
  // Halide 14 emits vpdpbusd only under its Sapphire Rapids feature (codegen/target.cpp).
  const bool vnni = base == "avx512" && __builtin_cpu_supports("avx512vnni") &&
                    target.find("avx512_sapphirerapids") != std::string::npos;
  double (*run)(int64_t) = vnni ? int8_loop_vnni512 : base.empty() ? nullptr : int8_loop_avx2;
  if (isa) *isa = vnni ? "avx512-vnni" : base.empty() ? "" : "avx2-pmaddwd";
  return run ? measure_loop(run, threads) : 0;
}

}  // namespace onnxc::tools
