// Per-step timing for `onnxc bench --profile`: collects the runtime's step reports over several runs,
// prints a per-kernel table and writes a Chrome trace; also the machine's fp32 peak for comparison.
#pragma once

#include <cstdint>
#include <string>

#include "tools/fma_peak.h"
#include <vector>

struct onnxc_step_profile;

namespace onnxc::tools {

class StepProfile {
 public:
  // The runtime's callback: pass `&StepProfile::record` with this as `user`.
  static void record(void* user, const onnxc_step_profile* step);
  void begin_run() { ++runs_; }
  int runs() const { return runs_; }
  // Floating-point operations of one run (the counted kernels' sum; 0 before a run).
  double flops_per_run() const;
  // The table: one row per kernel (steps running the same code share it), sorted by time. With
  // by_size false, steps of one op chain share a row whatever their sizes (decode steps, whose
  // cache grows every run).
  void print_table(double run_ms, bool by_size = true) const;
  // Chrome trace event format (chrome://tracing, Perfetto): one complete event per step.
  void write_chrome_trace(const std::string& path) const;

 private:
  struct Event {
    uint32_t step;
    std::string kernel, nodes;
    uint64_t start_ns, end_ns, cpu_ns;
    double flops;
    uint64_t bytes;
    int run;
  };
  std::vector<Event> events_;
  int runs_ = 0;
};



}  // namespace onnxc::tools
