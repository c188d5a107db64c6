// `onnxc bench`: latency percentiles, throughput and peak memory of a model on random inputs, and with
// --profile where the time goes, kernel by kernel.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <thread>

#include "ir/error.h"
#include "tools/args.h"
#include "tools/build.h"
#include "tools/profile.h"

namespace onnxc::tools {
namespace {

// VmHWM / VmRSS from /proc/self/status in bytes (0 if unavailable).
uint64_t proc_status_bytes(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(key + ":", 0) == 0) return std::stoull(line.substr(key.size() + 1)) * 1024;
  }
  return 0;
}

// Resets the RSS high-water mark (Linux >= 4.0), so the peak measures the runs, not compilation.
bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  return f.good();
}

// A value for a symbolic dim nobody gave: batch-like symbols get 1, others (sequence lengths,
// sizes) 128. Printed, so the choice is visible.
int64_t default_dim(const std::string& symbol) {
  std::string s = symbol;
  std::transform(s.begin(), s.end(), s.begin(), ::tolower);
  return s.find("batch") != std::string::npos || s == "n" || s == "b" ? 1 : 128;
}

double process_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

int bench_main(const std::vector<std::string>& args) {
  std::string model, shapes_arg, dims_arg, profile_json;
  int runs = 50, warmup = 5;
  bool tsv = false, profile = false, keep_cache = false;
  Executable::Options eo;
  ArgParser p("bench", "MODEL [--shapes NAME=DIMS,...] [options]",
              "Times MODEL on random inputs: median, p10 and p90 latency of single runs, and peak memory\n"
              "(the process's RSS high-water mark during the runs, and the session arena). An .onnx MODEL\n"
              "is compiled first (not timed); its peak RSS is reset before the runs where Linux allows.");
  p.positional("MODEL", "model.onnx or a compiled libNAME.so", &model);
  p.option("shapes", 's', "NAME=DIMS,...", "input shapes, e.g. src=1x128x64,mask=1x128", &shapes_arg);
  p.option("dims", 'd', "SYM=N,...", "values for symbolic dims, e.g. batch=1,seq=128 (default:\n"
                                      "symbols named like 'batch' are 1, all others 128)", &dims_arg);
  p.option("runs", 'n', "N", "timed runs (default 50)", &runs);
  p.option("warmup", 'w', "N", "untimed runs first (default 5)", &warmup);
  add_executable_options(p, &eo);
  p.flag("tsv", 0, "print one machine-readable line:\n"
                    "median_ms p10_ms p90_ms peak_rss_bytes arena_bytes", &tsv);
  p.flag("profile", 0, "after the timed runs, time every step of --runs more runs and print\n"
                        "a table per kernel: time, share, calls, GFLOP/s, GB/s", &profile);
  p.flag("keep-cache", 0, "time decoding steps as a generation loop runs them: the session keeps\n"
                           "each past/present pair the model appends in place (onnxc_session_keep_cache),\n"
                           "and every run after the first reads its past from that cache, rewound to the\n"
                           "given length, so a run writes only its new positions (as a loop's next step)", &keep_cache);
  p.option("profile-json", 0, "FILE", "with the profiled runs, write a Chrome trace (chrome://tracing)",
           &profile_json);
  p.epilog("Examples:\n  onnxc bench model.onnx --dims batch=1,seq=128 --threads 2 --runs 100\n"
           "  onnxc bench model.onnx --threads 2 --profile --profile-json trace.json");
  add_external_path_option(p);
  if (!p.parse(args)) return kExitOk;
  if (runs < 1) throw UsageError("--runs must be >= 1");
  if (warmup < 0 || eo.threads < 0) throw UsageError("--warmup and --threads must be >= 0");

  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& item : split_list(shapes_arg, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) throw UsageError("--shapes: '" + item + "' is not NAME=DIMS");
    shapes[item.substr(0, eq)] = parse_dims(item.substr(eq + 1), "--shapes " + item.substr(0, eq));
  }
  std::map<std::string, int64_t> dims;
  for (const std::string& item : split_list(dims_arg, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) throw UsageError("--dims: '" + item + "' is not SYM=N");
    dims[item.substr(0, eq)] = parse_int(item.substr(eq + 1), "--dims " + item.substr(0, eq));
  }

  require_file(model);
  eo.quiet = !stderr_is_tty();
  Executable exe(model, eo);
  ModelRunner& r = exe.runner();

  // Resolve every input shape: --shapes, else the model's fixed dims and symbols.
  std::vector<ir::Tensor> inputs;
  std::string shape_note;
  for (size_t i = 0; i < r.inputs().size(); ++i) {
    const IOInfo& in = r.inputs()[i];
    std::vector<int64_t> d;
    if (auto it = shapes.find(in.name); it != shapes.end()) {
      d = it->second;
      shapes.erase(it);
    } else {
      for (size_t k = 0; k < in.dims.size(); ++k) {
        if (in.dims[k] >= 0) {
          d.push_back(in.dims[k]);
          continue;
        }
        const std::string& sym = in.dim_names[k];
        user_check(!sym.empty() && sym.find_first_of("+-*/() ") == std::string::npos)
            << "input '" << in.name << "' dim " << k << " is '" << sym << "': give the shape with --shapes "
            << in.name << "=...";
        auto [it, fresh] = dims.emplace(sym, default_dim(sym));
        d.push_back(it->second);
      }
    }
    std::string ds;
    for (size_t k = 0; k < d.size(); ++k) ds += (k ? "x" : "") + std::to_string(d[k]);
    shape_note += (shape_note.empty() ? "" : " ") + in.name + "=" + (ds.empty() ? "scalar" : ds);
    inputs.push_back(random_tensor(in.dtype, d, 1234 + i));
  }
  user_check(shapes.empty()) << "--shapes: the model has no input '" << shapes.begin()->first << "'";

  // --keep-cache: the output whose kept cache each past input reads (-1: bound from `inputs`).
  std::vector<int> cache_of(inputs.size(), -1);
  bool cache_filled = false;
  auto run_once = [&] {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (cache_filled && cache_of[i] >= 0) r.bind_cache(i, static_cast<size_t>(cache_of[i]), inputs[i].dims());
      else r.set_input(i, inputs[i]);
    }
    auto t0 = std::chrono::steady_clock::now();
    r.run();
    cache_filled = keep_cache;
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  if (keep_cache) {
    std::vector<std::pair<size_t, size_t>> pairs = r.cache_pairs();
    user_check(!pairs.empty()) << model << ": --keep-cache: no past/present pair of the model is appended in place "
                               << "(a graph input concatenated into a graph output; onnxc.CacheAppend)";
    // The cache holds the longest dim of any present: the past's positions and the new ones.
    run_once();
    int64_t capacity = 1;
    std::vector<bool> is_present(r.outputs().size());
    for (const auto& [in, out] : pairs) {
      cache_of[in] = static_cast<int>(out);
      is_present[out] = true;
      ir::Tensor present = r.output(out);
      for (int64_t d : present.dims()) capacity = std::max(capacity, d);
    }
    std::vector<ir::Tensor> plain;  // the other outputs of a run without the cache
    for (size_t o = 0; o < is_present.size(); ++o) plain.push_back(is_present[o] ? ir::Tensor() : r.output(o));
    r.keep_cache(capacity);
    cache_filled = false;
    run_once();  // fills the caches from the random pasts
    run_once();  // the same step again, its pasts read in place: it must give the same outputs
    for (size_t o = 0; o < plain.size(); ++o) {
      if (is_present[o] || plain[o].dtype() == ir::DType::String) continue;
      ir::Tensor got = r.output(o);
      double worst = 0, scale = 0;
      for (int64_t i = 0; i < got.numel(); ++i) {
        worst = std::max(worst, std::abs(got.get_f64(i) - plain[o].get_f64(i)));
        scale = std::max(scale, std::abs(plain[o].get_f64(i)));
      }
      internal_check(got.dims() == plain[o].dims() && worst <= 1e-6 * scale)
          << "--keep-cache: output '" << r.outputs()[o].name << "' of a step reading its past from the kept cache differs from "
          << "the same step without it (largest difference " << worst << ")";
    }
    shape_note += " (pasts read in place from the kept cache)";
  }
  bool peak_reset = reset_peak_rss();
  uint64_t rss_before = proc_status_bytes("VmRSS");
  for (int i = 0; i < warmup; ++i) run_once();
  std::vector<double> ms;
  const double cpu0 = process_cpu_seconds();
  for (int i = 0; i < runs; ++i) ms.push_back(run_once());
  const double cpu_per_run = (process_cpu_seconds() - cpu0) / runs;
  uint64_t peak = proc_status_bytes("VmHWM");
  if (!peak) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    peak = static_cast<uint64_t>(ru.ru_maxrss) * 1024;
  }
  double med = percentile(ms, 0.5), p10 = percentile(ms, 0.1), p90 = percentile(ms, 0.9);
  // One step-timed run counts the model's FLOPs; --profile times as many runs as were timed above.
  StepProfile prof;
  r.set_profiler(&StepProfile::record, &prof);
  for (int i = 0; i < (profile || !profile_json.empty() ? runs : 1); ++i) {
    prof.begin_run();
    run_once();
  }
  r.set_profiler(nullptr, nullptr);
  const double gflop = prof.flops_per_run() / 1e9;
  if (tsv) {
    std::printf("%.4f\t%.4f\t%.4f\t%llu\t%llu\n", med, p10, p90, static_cast<unsigned long long>(peak),
                static_cast<unsigned long long>(r.arena_bytes()));
    return kExitOk;
  }
  std::printf("model     %s (%s)\n", model.c_str(), r.name().c_str());
  const int cores = eo.threads ? eo.threads : static_cast<int>(std::thread::hardware_concurrency());
  const double fma_peak = measure_peak_gflops(cores, r.target());
  std::printf("target    %s", r.target().c_str());
  if (fma_peak > 0) std::printf(" (%s: fp32 FMA peak %.0f GFLOP/s on %d thread%s here)", peak_isa(r.target()), fma_peak, cores,
                            cores == 1 ? "" : "s");
  std::printf("\n");
  std::printf("inputs    %s\n", shape_note.c_str());
  std::printf("threads   %s   runs %d (+%d warmup)\n", eo.threads ? std::to_string(eo.threads).c_str() : "all cores",
              runs, warmup);
  std::printf("latency   median %.3f ms   p10 %.3f ms   p90 %.3f ms   min %.3f ms\n", med, p10, p90,
              *std::min_element(ms.begin(), ms.end()));
  std::printf("memory    peak RSS %s%s   RSS before runs %s   arena %s\n", human_bytes(peak).c_str(),
              peak_reset ? "" : " (whole process)", human_bytes(rss_before).c_str(),
              human_bytes(r.arena_bytes()).c_str());
  std::printf("speed     %.2f runs/s", 1e3 / med);
  if (gflop > 0) {
    std::printf("   %.3f GFLOP per run (matrix products)   %.1f GFLOP/s", gflop, gflop / med * 1e3);
    if (fma_peak > 0) std::printf(" = %.0f%% of the peak", 100 * gflop / med * 1e3 / fma_peak);
  }
  // Wall time x threads above CPU time means the runs waited: for cores other processes held, or
  // for threads with nothing to do.
  // Three decimals below 10 ms: a single small kernel's CPU time reads as 0.1 otherwise.
  std::printf("\ncpu       %.*f ms of CPU time per run (all threads): %.2f cores busy on average",
              cpu_per_run < 0.01 ? 3 : 1, cpu_per_run * 1e3, cpu_per_run * 1e3 / med);
  if (gflop > 0) std::printf(", %.1f GFLOP per CPU-second", gflop / cpu_per_run);
  std::printf("\n");
  if (profile) prof.print_table(med);
  if (!profile_json.empty()) {
    prof.write_chrome_trace(profile_json);
    std::printf("trace     %s (%d runs)\n", profile_json.c_str(), prof.runs());
  }
  return kExitOk;
}

}  // namespace onnxc::tools
