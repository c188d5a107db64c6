// The compile path shared by the subcommands: read a model, run graph passes, compile it into a
// library with codegen, and open a model (an .onnx compiled into a temporary folder through the
// kernel cache, or an already compiled library) for running. The stages stay in their libraries;
// this file only sequences them.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/pass_context.h"
#include "tools/command.h"
#include "tools/runner.h"

namespace onnxc::tools {

// UserError unless `path` names a readable regular file ("X: no such file", "X: is a directory").
void require_file(const std::string& path);
// True for paths ending in .so / .so.N (a compiled model library).
bool is_library_path(const std::string& path);

// Reads an .onnx file (after require_file).
ir::Model read_model(const std::string& path);

// --allow-external-path DIR (repeatable) on every command that reads a model: folders outside the
// model's own from which read_model may take external data. Registers the option on `p`; the
// values take effect when `p` parses them.
class ArgParser;
void add_external_path_option(ArgParser& p);

struct PassOptions {
  std::string passes = "default";  // "default", "none", or a comma-separated list of pass names
  std::string dump_after;          // print the IR after this pass to `dump`
  bool timings = false;            // print per-pass times to `dump`
  bool verify_each = false;
  std::ostream* dump = nullptr;
  std::string no_fuse;                     // comma list of fusion families to skip (--no-fuse)
  std::string quantize;                    // "", "dynamic-int8[:force]" or "int4-weights[:block=N][:symmetric]"
  std::string target = "host";             // the compile target: whether int8 pays depends on it
  std::string fix_dims;                    // "SYM=N,..." (--fix-dims): symbolic dims made constants first
  passes::FusionReport* report = nullptr;  // if set, the fusions record what fired and near misses
};
// Runs the named passes on `m` in place (shape inference first, so passes see typed values).
void optimize_model(ir::Model& m, const PassOptions& opt);
// The --no-fuse help text (lists the fusion families).
std::string no_fuse_help();
// --quantize MODE on the commands that compile (compile, run, compare, bench): registers the option.
void add_quantize_option(ArgParser& p, std::string* mode);
// --fix-dims SYM=N,... on the same commands and optimize: registers the option.
void add_fix_dims_option(ArgParser& p, std::string* list);
// Lines "name  summary" for every registered pass, for --help texts.
std::string pass_list_help();

struct Progress {
  int done = 0, total = 0;
  std::string kernel;   // the kernel just compiled
  bool cached = false;  // taken from the kernel cache
};

struct BuildOptions {
  std::string name;             // library name; default: derived from the model file name
  std::string target = "host";  // host | x86-64-avx512 | cuda | a Halide target string
  int jobs = 0;                 // parallel kernel compiles; 0 = all cores
  int threads = 0;              // default runtime thread count baked into the library (0 = all cores)
  bool use_cache = true;
  PassOptions passes;
  std::function<void(const Progress&)> progress;
};

struct BuildResult {
  std::string library;        // libNAME.so
  std::string static_library; // libNAME.a
  std::string header;         // NAME.h
  std::vector<std::string> files;  // everything written
  int kernels = 0;           // kernel calls per run
  int distinct_kernels = 0;  // compiled functions
  int cache_hits = 0;
  double seconds = 0;
  uint64_t library_bytes = 0;
  uint64_t weights_bytes = 0;
};

// A library name from a model path: "models/bert-base.onnx" -> "bert_base"; the parent folder's
// name when the file is the ONNX test layout's generic "model.onnx".
std::string default_model_name(const std::string& model_path);

// Compiles an already optimized model into `out_dir`. Everything is written to a staging folder
// beside `out_dir` first and moved in on success, so a failure leaves no partial output.
BuildResult build_library(const ir::Model& m, const std::string& out_dir, const BuildOptions& opt);

// Ops of `m` that codegen cannot lower ("OpType (node)"); empty when all are supported.
std::vector<std::string> unsupported_ops(const ir::Model& m);

// A model opened for running. For an .onnx file: read, default passes, compile into a temporary
// folder (kernel cache on), open that library; the folder goes away with this object.
class Executable {
 public:
  struct Options {
    int threads = 0;
    std::string target = "host";
    int jobs = 0;
    bool no_cache = false;  // compile without the kernel cache
    bool quiet = true;  // no progress output while compiling
    std::string quantize;  // --quantize mode for an .onnx model
    std::string fix_dims;  // --fix-dims for an .onnx model
  };
  Executable(const std::string& path, const Options& opt);
  ModelRunner& runner() { return *runner_; }
  bool compiled_here() const { return tmp_ != nullptr; }
  const BuildResult& build() const { return build_; }

 private:
  std::unique_ptr<TempDir> tmp_;
  BuildResult build_;
  std::unique_ptr<ModelRunner> runner_;
};

// Registers the options run, bench and compare share for a model they may compile first: --threads,
// --target, --quantize and --no-cache, parsed into `o`.
void add_executable_options(ArgParser& p, Executable::Options* o);

}  // namespace onnxc::tools
