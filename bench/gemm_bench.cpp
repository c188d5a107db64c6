// gemm_bench: times the MatMul lowering (JIT, through tests/codegen/gemm_harness) on BERT-base
// projection shapes with a constant weight and on attention's batched matmuls, with 1 and 2
// threads, and prints the median GFLOP/s of each and its share of the target ISA's fp32 FMA peak
// measured on this machine.
//
//   gemm_bench [--target T]   both thread counts, one table; T as for `onnxc compile --target`
//                             (default host): x86-64-avx2 checks the AVX2 schedule on an AVX-512 CPU
//   gemm_bench --int8 [--target T]  the int8 kernel of `--quantize dynamic-int8` (onnxc.DynamicQuantMatMul:
//                             rows quantized at run time, int8 weight) on the constant-weight shapes, in
//                             GOP/s against the int8 peak of the instructions it compiles to for T
//   gemm_bench --child ...    one thread count: the HL_NUM_THREADS this process was started with
//   GEMM_BENCH_COLD=1         each run starts with the weight out of cache (as in a large model)
//
// Halide's JIT runtime reads HL_NUM_THREADS once, when its thread pool starts, so each thread count
// runs in its own child process.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include "codegen/target.h"
#include "gemm_harness.h"
#include "tools/fma_peak.h"

namespace {

using onnxc::codegen::testing::GemmCase;
using onnxc::codegen::testing::GemmKernel;
using onnxc::codegen::testing::output_shape;
using onnxc::codegen::testing::random_tensor;

struct Shape {
  std::string name;
  GemmCase c;
  double flops;
};

std::vector<Shape> shapes(bool int8) {
  std::vector<Shape> s;
  // M (batch·seq) is a run-time extent and K a static one, as in an exported transformer.
  for (int64_t m : {128, 256}) {
    for (auto [k, n] : {std::pair<int64_t, int64_t>{768, 768}, {768, 2304}, {768, 3072}, {3072, 768}}) {
      GemmCase c;
      c.a = {m, k};
      c.b = {k, n};
      c.a_dynamic = {true, false};
      if (int8) c.op = "DynamicQuantMatMul";
      s.push_back({std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) + " weight", c,
                   2.0 * m * k * n});
    }
  }
  // A 0.43 B LLaMA-architecture decoder's prefill (bench/llm_bench.sh: hidden 1024, 4 key/value
  // heads of 64, MLP 4096): large K and N, where A's row blocks and B's panels outgrow the caches.
  if (!int8) {
    for (auto [k, n] : {std::pair<int64_t, int64_t>{1024, 1024}, {1024, 256}, {1024, 4096}, {4096, 1024}}) {
      GemmCase c;
      c.a = {128, k};
      c.b = {k, n};
      c.a_dynamic = {true, false};
      s.push_back({"128x" + std::to_string(k) + "x" + std::to_string(n) + " llm", c, 2.0 * 128 * k * n});
    }
  }
  // Decoding: one or a few rows against the large weight.
  for (int64_t m : {1, 7}) {
    GemmCase c;
    c.a = {m, 768};
    c.b = {768, 3072};
    c.a_dynamic = {true, false};
    if (int8) c.op = "DynamicQuantMatMul";
    s.push_back({std::to_string(m) + "x768x3072 weight", c, 2.0 * m * 768 * 3072});
  }
  if (int8) return s;  // attention's products stay float32 in an int8 model
  // Attention, 12 heads of 64: scores = Q·Kᵀ and context = P·V, both operands computed at run time;
  // batch and sequence length are run-time extents, heads and head size are static.
  for (int64_t t : {128, 256}) {
    GemmCase qk;
    qk.a = {1, 12, t, 64};
    qk.b = {1, 12, 64, t};
    qk.b_const = false;
    qk.a_dynamic = {true, false, true, false};
    qk.b_dynamic = {true, false, false, true};
    s.push_back({"12x" + std::to_string(t) + "x64x" + std::to_string(t) + " Q*Kt", qk, 2.0 * 12 * t * 64 * t});
    GemmCase pv;
    pv.a = {1, 12, t, t};
    pv.b = {1, 12, t, 64};
    pv.b_const = false;
    pv.a_dynamic = {true, false, true, true};
    pv.b_dynamic = {true, false, true, false};
    s.push_back({"12x" + std::to_string(t) + "x" + std::to_string(t) + "x64 P*V", pv, 2.0 * 12 * t * t * 64});
  }
  return s;
}

struct Timing {
  double median_gflops, best_gflops, cpu_gflops;  // cpu: per second of process CPU time, all threads
};

double process_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Reads every cache line of `t`, so it is in cache as a producer kernel would have left it.
float touch(const onnxc::ir::Tensor& t) {
  const auto* p = static_cast<const unsigned char*>(t.raw());
  float s = 0;
  for (size_t i = 0; i < t.nbytes(); i += 64) s += static_cast<float>(p[i]);
  return s;
}

// Cold mode evicts the last-level cache before each run (reading a buffer twice its size), then
// touches A: the weight comes from memory, as it does in a model whose weights (340 MB for BERT)
// do not fit in cache, while the activations are warm.
struct Eviction {
  std::vector<unsigned char> junk;
  volatile float sink = 0;
  void operator()(const onnxc::ir::Tensor& a) {
    if (junk.empty()) return;
    float s = 0;
    for (size_t i = 0; i < junk.size(); i += 64) s += static_cast<float>(junk[i]++);
    sink = s + touch(a);
  }
};

// 3 warm-up runs, then at least 10 runs and about 0.5 s of kernel time. Wall-clock medians suffer
// when other processes share the cores; CPU-time throughput does not (for one thread it is the
// kernel's speed while it runs).
Timing time_runs(GemmKernel& k, const onnxc::ir::Tensor& a, onnxc::ir::Tensor& out, double flops, Eviction& evict) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < 3; ++i) k.run_into(out);
  std::vector<double> wall, cpu;
  double total = 0;
  while (wall.size() < 10 || (total < 0.5 && wall.size() < 1000)) {
    evict(a);
    double c0 = process_cpu_seconds();
    auto t0 = clock::now();
    k.run_into(out);
    wall.push_back(std::chrono::duration<double>(clock::now() - t0).count());
    total += wall.back();
    cpu.push_back(process_cpu_seconds() - c0);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  auto rate = [&](double sec) { return flops / sec * 1e-9; };
  return {rate(wall[wall.size() / 2]), rate(wall[0]), rate(cpu[cpu.size() / 2])};
}

// --child prints "name<TAB>median<TAB>best<TAB>cpu" GFLOP/s per shape, for this process's
// HL_NUM_THREADS; GEMM_BENCH_FILTER=substring keeps only matching shapes; GEMM_BENCH_COLD=1 runs
// each product with the weight out of cache (Eviction).
int run_child(const Halide::Target& target, bool int8) {
  const char* filter = std::getenv("GEMM_BENCH_FILTER");
  const char* cold = std::getenv("GEMM_BENCH_COLD");
  Eviction evict;
  if (cold && std::strcmp(cold, "1") == 0) evict.junk.assign(size_t{96} << 20, 1);
  for (const Shape& s : shapes(int8)) {
    if (filter && s.name.find(filter) == std::string::npos) continue;
    auto a = random_tensor(s.c.dtype, s.c.a, 1), b = random_tensor(int8 ? onnxc::ir::DType::Int8 : s.c.dtype, s.c.b, 2);
    GemmKernel k(s.c, a, b, nullptr, target);
    onnxc::ir::Tensor out(s.c.dtype, output_shape(s.c));
    Timing t = time_runs(k, a, out, s.flops, evict);
    std::printf("%s\t%.1f\t%.1f\t%.1f\n", s.name.c_str(), t.median_gflops, t.best_gflops, t.cpu_gflops);
    std::fflush(stdout);
  }
  return 0;
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string one;
  f >> one;
  return one;
}

}  // namespace

int main(int argc, char** argv) {
  bool child = false, int8 = false;
  std::string target_name = "host";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--child") == 0) child = true;
    else if (std::strcmp(argv[i], "--int8") == 0) int8 = true;
    else if (std::strcmp(argv[i], "--target") == 0 && i + 1 < argc) target_name = argv[++i];
    else return std::fprintf(stderr, "usage: gemm_bench [--int8] [--target T]\n"), 2;
  }
  Halide::Target target;
  try {
    target = target_name == "host" ? onnxc::codegen::testing::host_target() : onnxc::codegen::parse_target(target_name);
  } catch (const std::exception& e) {
    return std::fprintf(stderr, "gemm_bench: %s\n", e.what()), 2;
  }
  if (child) return run_child(target, int8);
  std::map<std::string, std::map<int, std::string>> rows;  // shape -> threads -> columns
  std::map<int, double> peak;                                // threads -> GFLOP/s (int8: GOP/s)
  std::string int8_isa;
  std::printf("target %s; load average before: %s (other processes on these cores lower the wall-clock columns)\n",
              target.to_string().c_str(), load_average().c_str());
  for (int t : {1, 2}) {
    peak[t] = int8 ? onnxc::tools::measure_int8_peak_gops(t, onnxc::codegen::with_dot_products(target).to_string(), &int8_isa)
                   : onnxc::tools::measure_peak_gflops(t, target.to_string());
    std::string cmd = "HL_NUM_THREADS=" + std::to_string(t) + " /proc/" + std::to_string(getpid()) +
                      "/exe --child --target " + target_name + (int8 ? " --int8" : "");
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return 1;
    char line[512];
    while (std::fgets(line, sizeof line, p)) {
      char name[256];
      double median, best, cpu;
      if (std::sscanf(line, "%255[^\t]\t%lf\t%lf\t%lf", name, &median, &best, &cpu) != 4) continue;
      char cols[128];
      // The CPU-second rate against one thread's share of the peak: the kernel's efficiency while it
      // runs, which other processes on the cores do not lower (the wall-clock columns they do).
      std::snprintf(cols, sizeof cols, "%8.1f %8.1f %8.1f %5.0f%%", median, best, cpu,
                    peak[t] > 0 ? 100 * cpu * t / peak[t] : 0.0);
      rows[name][t] = cols;
    }
    if (pclose(p) != 0) return 1;
  }
  const char* cold = std::getenv("GEMM_BENCH_COLD");
  if (int8)
    std::printf("int8 GOP/s (median and best wall clock; per CPU-second; the CPU-second rate as a share of the"
                " %s int8 peak: %.0f GOP/s on 1 thread, %.0f on 2)%s\n",
                int8_isa.c_str(), peak[1], peak[2], cold && std::strcmp(cold, "1") == 0 ? ", weights out of cache" : "");
  else
    std::printf("GFLOP/s (median and best wall clock; per CPU-second; the CPU-second rate as a share of one thread's"
                " %s fp32 FMA peak: %.0f GFLOP/s on 1 thread, %.0f on 2)%s\n",
                onnxc::tools::peak_isa(target.to_string()), peak[1], peak[2],
                cold && std::strcmp(cold, "1") == 0 ? ", weights out of cache" : "");
  std::printf("%-24s %33s   %33s\n", "", "1 thread", "2 threads");
  std::printf("%-24s %8s %8s %8s %6s   %8s %8s %8s %6s\n", "shape (MxKxN)", "median", "best", "cpu", "peak", "median",
              "best", "cpu", "peak");
  for (const Shape& s : shapes(int8))
    std::printf("%-24s %33s   %33s\n", s.name.c_str(), rows[s.name][1].c_str(), rows[s.name][2].c_str());
  std::printf("load average after: %s\n", load_average().c_str());
  return 0;
}
