// compile_model(): partition -> lower every kernel (serially; cheap) -> compile the distinct kernels in
// parallel (or take them from the cache) -> plan -> link the library.
#include "codegen/compile.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "codegen/emit/kernel_builder.h"
#include "codegen/emit/kernel_cache.h"
#include "codegen/emit/library.h"
#include "codegen/emit/plan.h"
#include "codegen/partition.h"
#include "codegen/target.h"
#include "ir/error.h"

namespace onnxc::codegen {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Runs fn(i) for i in [0, n) on `jobs` threads; rethrows the first exception.
void parallel_for(int n, int jobs, const std::function<void(int)>& fn) {
  std::atomic<int> next{0};
  std::exception_ptr error;
  std::mutex m;
  auto worker = [&] {
    for (int i; (i = next++) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        if (!error) error = std::current_exception();
        next = n;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < std::min(jobs, n); ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

std::string make_work_dir(const std::string& name) {
  std::string tmpl = (fs::temp_directory_path() / ("onnxc-" + name + "-XXXXXX")).string();
  user_check(mkdtemp(tmpl.data()) != nullptr) << "cannot create a temporary directory " << tmpl;
  return tmpl;
}

// compile_to_object, with Halide's errors turned into ours.
void compile_object(const BuiltKernel& b, const std::string& path, const Halide::Target& t, const std::string& what) {
  try {
    Halide::Pipeline p = b.pipeline;  // a handle: compiling does not change the kernel
    p.compile_to_object(path, b.args, b.fn_name, t);
    // For reading a kernel's loops and vectorization: its lowered Halide statement, as text.
    if (const char* dir = std::getenv("ONNXC_DUMP_STMT"); dir && *dir)
      p.compile_to_lowered_stmt((fs::path(dir) / (b.fn_name + ".stmt")).string(), b.args, Halide::Text, t);
  } catch (const Halide::CompileError& e) {
    user_error << "kernel " << what << ": " << e.what();
  } catch (const Halide::Error& e) {
    internal_error << "kernel " << what << ": Halide: " << e.what();
  }
}

}  // namespace

void check_model_name(const std::string& n) {
  bool ok = !n.empty() && (std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_');
  for (char c : n) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  user_check(ok) << "model name '" << n << "' must be a C identifier (letters, digits, _)";
  // The library exports onnxc_model_<name>: these names would collide with the runtime's own
  // onnxc_model_* functions or with the dlopen entry point every library exports.
  static const char* const kReserved[] = {"entry", "open", "free", "from_desc", "desc", "desc_of", "name",
                                          "target", "num_inputs", "num_outputs", "input_info", "output_info",
                                          "input_index", "output_index", "retain", "entry_fn"};
  for (const char* r : kReserved)
    user_check(n != r) << "model name '" << n << "' is reserved: onnxc_model_" << n
                       << " is a runtime symbol; choose another --name";
}

CompileResult compile_model(const ir::Model& model, const CompileOptions& o) {
  auto start = Clock::now();
  check_model_name(o.name);
  user_check(!o.out_dir.empty()) << "no output directory given";
  Halide::Target target = parse_target(o.target);
  Halide::Target ktarget = target.with_feature(Halide::Target::NoRuntime);
  const Toolchain tools = toolchain_for(target);  // a missing cross compiler fails before any kernel is built
  std::string tname = target.to_string();

  Partition p = partition_model(model);
  std::vector<BuiltKernel> built;
  bool cuda = target.has_feature(Halide::Target::CUDA);
  for (const auto& k : p.steps) {
    // Host and control steps run in the runtime on the host: nothing to compile (and no CUDA runtime
    // support yet: a branch would read its condition from device memory).
    user_check(!k.host() || !cuda) << k.name << ": ops with data-dependent output sizes are not supported with the "
                                   << "cuda target yet (they run as host steps)";
    user_check(!k.control() || !cuda) << k.name << ": control flow (If, Loop, Scan) is not supported with the cuda target yet";
    built.push_back(k.kernel() ? build_kernel(k, p, ktarget, tname) : BuiltKernel{});
  }

  std::vector<int> distinct;  // index into built of each distinct function's first kernel
  std::map<std::string, int> seen;
  for (size_t i = 0; i < built.size(); ++i)
    if (p.steps[i].kernel() && seen.emplace(built[i].fn_name, static_cast<int>(i)).second)
      distinct.push_back(static_cast<int>(i));

  KernelCache cache(o.use_cache ? (o.cache_dir.empty() ? KernelCache::default_dir() : o.cache_dir) : "");
  std::string work = make_work_dir(o.name);
  CompileResult r;
  std::vector<std::string> objects(distinct.size() + 1);
  std::atomic<uint64_t> hits{0};
  std::atomic<int> done{0};
  std::mutex progress_mutex;
  int jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  try {
    // Index distinct.size() is the Halide runtime, compiled alongside the kernels.
    parallel_for(static_cast<int>(objects.size()), jobs, [&](int i) {
      auto t0 = Clock::now();
      bool is_runtime = i == static_cast<int>(distinct.size());
      std::string key = KernelCache::key(is_runtime ? "halide runtime\ntarget " + tname : built[distinct[i]].canonical);
      std::string path = work + "/" + (is_runtime ? std::string("halide_runtime") : built[distinct[i]].fn_name) + ".o";
      bool hit = false;
      if (auto cached = cache.lookup(key)) {
        path = *cached;
        hit = true;
        if (!is_runtime) ++hits;
      } else if (is_runtime) {
        Halide::compile_standalone_runtime(path, target);
        cache.store(key, path);
      } else {
        const BuiltKernel& b = built[distinct[i]];
        compile_object(b, path, b.compile_target.value_or(ktarget), p.steps[distinct[i]].name);
        cache.store(key, path);
      }
      objects[i] = path;
      if (is_runtime || !o.progress) return;
      std::lock_guard<std::mutex> lock(progress_mutex);
      o.progress({p.steps[distinct[i]].name, built[distinct[i]].fn_name, ++done,
                  static_cast<int>(distinct.size()), hit, since(t0)});
    });
    PlanDescription plan = make_plan(p, built, o.name, tname, cuda);
    plan.default_num_threads = o.threads;
    LibraryFiles files = build_library(plan, objects, o.out_dir, work, tools);
    r.a_path = files.a_path;
    r.so_path = files.so_path;
    r.header_path = files.header_path;
    r.plan_c_path = files.plan_c_path;
    r.library_bytes = files.library_bytes;
    r.weights_bytes = plan.weights.size;
    r.kernels = static_cast<int>(plan.steps.size());
    r.distinct_kernels = static_cast<int>(plan.kernels.size());
  } catch (...) {
    if (!std::getenv("ONNXC_KEEP_BUILD")) fs::remove_all(work);
    throw;
  }
  if (!std::getenv("ONNXC_KEEP_BUILD")) fs::remove_all(work);
  r.cache_hits = hits;
  r.seconds = since(start);
  return r;
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> r;
  for (const OpLowering* l : all_lowerings()) r.push_back((l->domain.empty() ? "" : l->domain + ".") + l->op_type);
  std::sort(r.begin(), r.end());
  return r;
}

}  // namespace onnxc::codegen
