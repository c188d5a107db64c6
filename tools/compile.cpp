// `onnxc compile`: model.onnx -> default passes -> a library (libNAME.so, libNAME.a, NAME.h) in DIR.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>

#include "codegen/compile.h"
#include "codegen/target.h"
#include "ir/error.h"
#include "tools/args.h"
#include "tools/build.h"
#include "tools/json.h"

namespace onnxc::tools {
namespace {

const auto g_start = std::chrono::steady_clock::now();

// Wall time since the process started and its peak resident memory (getrusage's high-water mark):
// what scale claims ("a 100,000-node model compiles in N s and M MiB") are measured with.
void print_stats(const ir::Model& m) {
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
  std::printf("stats: %zu nodes after the passes, %.2f s, peak memory %s\n", m.graph->num_nodes(), secs,
              human_bytes(static_cast<uint64_t>(ru.ru_maxrss) * 1024).c_str());
}

// `compile --json`: what was written and how, the model's metadata and the fusion report, as one object
// (read by the Python package's onnxc.compile).
void print_json(const std::string& model, const ir::Model& m, const BuildOptions& bo, const BuildResult& r,
                const passes::FusionReport& fusions) {
  std::string out = "{\"model\": " + json_str(model) + ", \"name\": " + json_str(bo.name) +
                    ", \"library\": " + json_str(r.library) + ", \"static_library\": " + json_str(r.static_library) +
                    ", \"header\": " + json_str(r.header) + ",\n \"kernels\": " + std::to_string(r.kernels) +
                    ", \"distinct_kernels\": " + std::to_string(r.distinct_kernels) +
                    ", \"cache_hits\": " + std::to_string(r.cache_hits) +
                    ", \"library_bytes\": " + std::to_string(r.library_bytes) +
                    ", \"weights_bytes\": " + std::to_string(r.weights_bytes) + ", \"seconds\": " + json_num(r.seconds) +
                    ", \"threads\": " + std::to_string(bo.threads) + ",\n \"target\": " + json_str(bo.target) +
                    ", \"resolved_target\": " + json_str(codegen::parse_target(bo.target).to_string()) +
                    ",\n \"graph_name\": " + json_str(m.graph->name()) +
                    ", \"graph_doc_string\": " + json_str(m.graph->doc_string()) +
                    ", \"producer_name\": " + json_str(m.producer_name) +
                    ", \"producer_version\": " + json_str(m.producer_version) + ", \"domain\": " + json_str(m.domain) +
                    ", \"model_version\": " + std::to_string(m.model_version) +
                    ", \"doc_string\": " + json_str(m.doc_string) + ", \"metadata\": {";
  for (size_t i = 0; i < m.metadata_props.size(); ++i) {
    out += (i ? ", " : "") + json_str(m.metadata_props[i].first) + ": " + json_str(m.metadata_props[i].second);
  }
  std::printf("%s},\n \"fusions\": %s}\n", out.c_str(), fusion_report_json(fusions).c_str());
}

}  // namespace

int compile_main(const std::vector<std::string>& args) {
  std::string model, out_dir, passes = "default";
  BuildOptions bo;
  bool no_cache = false, quiet = false, stats = false, json = false;
  ArgParser p("compile", "MODEL -o DIR [options]",
              "Compiles an ONNX model into a native library: DIR/libNAME.so and DIR/libNAME.a (kernels, plan,\n"
              "embedded weights and a private Halide runtime) and DIR/NAME.h, which declares\n"
              "onnxc_model_NAME() for onnxc_model_from_desc(). Link with libonnxc_runtime, or load the .so\n"
              "with onnxc_model_open(). Dynamic dims stay symbolic: one library serves every shape.");
  p.positional("MODEL", "the .onnx file", &model);
  p.option("output", 'o', "DIR", "output folder (created if missing; files in it are replaced)", &out_dir);
  std::vector<std::string> names;  // a list, so that an explicit --name '' is seen and refused
  p.option_list("name", 'n', "NAME", "library name, a C identifier (default: from the model file name)", &names);
  p.option("target", 0, "T", "host (default: this machine), x86-64-avx2, x86-64-avx512, arm64,\n"
                             "arm64-dotprod (cross-linked with aarch64-linux-gnu-gcc), cuda, or a\n"
                             "Halide target string such as x86-64-linux-avx2-fma", &bo.target);
  p.option("threads", 't', "N", "default run-time thread count baked into the library (0 = all cores);\n"
                                "a session's onnxc_session_options.num_threads overrides it", &bo.threads);
  p.option("jobs", 'j', "N", "kernels compiled in parallel (default: all cores)", &bo.jobs);
  p.option("passes", 0, "LIST", "graph passes before codegen: default, none, or a comma list", &passes);
  p.option("no-fuse", 0, "LIST", no_fuse_help() + ";\nfusions are on by default", &bo.passes.no_fuse);
  add_quantize_option(p, &bo.passes.quantize);
  add_fix_dims_option(p, &bo.passes.fix_dims);
  p.flag("no-cache", 0, "compile every kernel, neither reading nor filling the kernel cache\n"
                        "($ONNXC_CACHE_DIR, default ~/.cache/onnxc/kernels)", &no_cache);
  p.flag("quiet", 'q', "no progress, only errors", &quiet);
  p.flag("json", 0, "print what was built (files, kernels, target, the model's metadata and the\n"
                    "fusion report) as one JSON object instead of the text summary", &json);
  p.flag("stats", 0, "print the whole command's time and peak memory (also with --quiet)", &stats);
  p.epilog("Example:\n  onnxc compile encoder.onnx -o build/encoder --name encoder\n"
           "  cc app.c -Ibuild/encoder build/encoder/libencoder.a $(pkg-config --cflags --libs onnxc)");
  add_external_path_option(p);
  if (!p.parse(args)) return kExitOk;
  if (out_dir.empty()) throw UsageError("missing output folder: -o DIR");
  if (bo.jobs < 0 || bo.threads < 0) throw UsageError("--jobs and --threads must be >= 0");
  bo.use_cache = !no_cache;
  if (names.size() > 1) throw UsageError("--name given " + std::to_string(names.size()) + " times");
  bo.name = names.empty() ? default_model_name(model) : names[0];
  codegen::check_model_name(bo.name);

  ir::Model m = read_model(model);
  bo.passes.passes = passes;
  bo.passes.target = bo.target;
  passes::FusionReport fusions;
  if (json) bo.passes.report = &fusions;
  optimize_model(m, bo.passes);

  const bool tty = stderr_is_tty();
  if (!quiet) {
    bo.progress = [tty](const Progress& pr) {
      if (tty) {
        std::fprintf(stderr, "\r\033[K[%d/%d] %s%s", pr.done, pr.total, pr.kernel.c_str(), pr.cached ? " (cached)" : "");
        if (pr.done == pr.total) std::fputc('\n', stderr);
      } else {
        std::fprintf(stderr, "[%d/%d] %s%s\n", pr.done, pr.total, pr.kernel.c_str(), pr.cached ? " (cached)" : "");
      }
      std::fflush(stderr);
    };
  }
  BuildResult r = build_library(m, out_dir, bo);
  if (stats) print_stats(m);
  if (json) print_json(model, m, bo, r, fusions);
  if (quiet || json) return kExitOk;
  std::printf("compiled %s -> %s\n", model.c_str(), out_dir.c_str());
  std::printf("  library   %s (%s)\n", r.library.c_str(), human_bytes(r.library_bytes).c_str());
  std::printf("            %s, %s\n", r.static_library.c_str(), r.header.c_str());
  std::printf("  kernels   %d calls per run, %d distinct, %d from the cache\n", r.kernels, r.distinct_kernels,
              r.cache_hits);
  std::printf("  weights   %s (embedded)\n", human_bytes(r.weights_bytes).c_str());
  std::printf("  arena     planned at run time per input shape (onnxc bench reports it)\n");
  std::string resolved = codegen::parse_target(bo.target).to_string();
  std::printf("  target    %s%s\n", bo.target.c_str(), resolved == bo.target ? "" : (" (" + resolved + ")").c_str());
  std::printf("  time      %.2f s\n", r.seconds);
  if (bo.threads) std::printf("  threads   %d by default (a session's num_threads overrides it)\n", bo.threads);
  return kExitOk;
}

}  // namespace onnxc::tools
