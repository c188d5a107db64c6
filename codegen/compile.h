// The code generator's public API: an optimized, shape-inferred ir::Model -> a self-contained model
// library (libNAME.a, libNAME.so, NAME.h) that the runtime executes (runtime/include/onnxc/runtime.h).
//
//   onnxc::codegen::CompileOptions opt;
//   opt.name = "encoder";  opt.out_dir = "build/encoder";
//   auto r = onnxc::codegen::compile_model(model, opt);   // r.so_path, r.kernels, r.seconds...
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace onnxc::codegen {

// Reported once per distinct kernel as it finishes (from worker threads, one call at a time).
struct KernelProgress {
  std::string kernel;    // the kernel's root node, e.g. "Softmax 'attn/softmax'"
  std::string function;  // its entry point, onnxc_k_<hash>
  int done = 0;          // kernels finished so far, this one included
  int total = 0;         // distinct kernels to compile
  bool cache_hit = false;
  double seconds = 0;    // time spent on this kernel
};

struct CompileOptions {
  std::string name;               // C identifier: library lib<name>, entry onnxc_model_<name>
  std::string out_dir;            // created if missing
  std::string target = "host";    // host | x86-64-avx512 | cuda | a Halide target string
  int jobs = 0;                   // parallel kernel compiles; 0 = number of cores
  int threads = 0;                // the library's default run-time thread count; 0 = all cores
  bool use_cache = true;          // the kernel cache ($ONNXC_CACHE_DIR or ~/.cache/onnxc/kernels)
  std::string cache_dir;          // overrides the default cache directory when non-empty
  std::function<void(const KernelProgress&)> progress;
};

struct CompileResult {
  std::string a_path, so_path, header_path, plan_c_path;
  int kernels = 0;                // steps in the plan (kernel calls per run)
  int distinct_kernels = 0;       // compiled functions (equal kernels share one)
  double seconds = 0;
  uint64_t library_bytes = 0;     // size of the .so
  uint64_t weights_bytes = 0;     // size of the embedded weights blob
  uint64_t cache_hits = 0;
  std::vector<std::string> unsupported;  // always empty on success: unsupported ops throw
};

// UserError unless `name` can name a library: a C identifier whose entry point onnxc_model_<name>
// collides with no runtime symbol.
void check_model_name(const std::string& name);

// Compiles `model` (dtypes and shapes inferred on every value; run the default pass pipeline first).
// Throws UserError listing every unsupported op (type and node) before compiling anything, and for
// invalid options; InternalError for compiler bugs.
CompileResult compile_model(const ir::Model& model, const CompileOptions& options);

// Op types (domain-qualified when not ai.onnx) that have a lowering, sorted: for coverage reports.
std::vector<std::string> supported_ops();

}  // namespace onnxc::codegen
