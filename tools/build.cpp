// The compile path: frontend -> passes -> codegen, with staging so a failed compile writes nothing,
// and opening a model (compiled here or already compiled) for running.
#include "tools/build.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "codegen/compile.h"
#include "codegen/partition.h"
#include "codegen/target.h"
#include "frontend/onnx_import.h"
#include "ir/error.h"
#include "passes/fix_dims.h"
#include "passes/fusion.h"
#include "passes/pass.h"
#include "tools/args.h"
#include "passes/pipeline.h"
#include "tools/args.h"

namespace fs = std::filesystem;

namespace onnxc::tools {

void require_file(const std::string& path) {
  std::error_code ec;
  user_check(!path.empty()) << "empty file name";
  user_check(fs::exists(path, ec)) << path << ": no such file";
  user_check(!fs::is_directory(path, ec)) << path << ": is a directory, not a file";
  user_check(access(path.c_str(), R_OK) == 0) << path << ": cannot read file (permission denied)";
}

bool is_library_path(const std::string& path) {
  std::string f = fs::path(path).filename().string();
  return f.size() > 3 && (f.compare(f.size() - 3, 3, ".so") == 0 || f.find(".so.") != std::string::npos);
}

namespace {
std::vector<std::string> g_external_paths;  // one command per process: set once by its parser
}  // namespace

void add_external_path_option(ArgParser& p) {
  p.option_list("allow-external-path", 0, "DIR",
                "also read external data from DIR (its real path; repeatable). By default only\n"
                "regular files inside the model's folder, reached without symbolic links",
                &g_external_paths);
}

ir::Model read_model(const std::string& path) {
  require_file(path);
  user_check(!is_library_path(path)) << path << ": is a compiled library; this command needs an .onnx model";
  frontend::ImportOptions opt;
  opt.allow_external_paths = g_external_paths;
  return frontend::load_model(path, opt);
}

namespace {

// "a,fixpoint(b,c),d" -> {"a", "fixpoint(b,c)", "d"}: commas inside parentheses do not split.
std::vector<std::string> split_passes(const std::string& spec) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : spec + ",") {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      size_t b = cur.find_first_not_of(' '), e = cur.find_last_not_of(' ');
      if (b != std::string::npos) out.push_back(cur.substr(b, e - b + 1));
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

// "int4-weights[:block=N][:symmetric][:acc=int8]" -> the quantize_int4_weights pass's options.
std::map<std::string, std::string> int4_pass_options(const std::string& mode) {
  std::map<std::string, std::string> o;
  std::string rest = mode.substr(std::string("int4-weights").size());
  auto bad = [&](const std::string& why) {
    return UsageError("--quantize " + mode + ": " + why + " (int4-weights[:block=N][:symmetric], N a power of two 16..256)");
  };
  while (!rest.empty()) {
    if (rest[0] != ':') throw bad("unknown mode");
    size_t end = rest.find(':', 1);
    std::string item = rest.substr(1, end == std::string::npos ? std::string::npos : end - 1);
    rest = end == std::string::npos ? "" : rest.substr(end);
    if (item == "symmetric") {
      o["quantize_int4_weights.symmetric"] = "1";
    } else if (item == "acc=int8" || item == "acc=fp32") {
      // acc=int8 writes accuracy_level 4 (A quantized to int8 per block, integer products).
      o["quantize_int4_weights.accuracy_level"] = item == "acc=int8" ? "4" : "0";
    } else if (item.rfind("block=", 0) == 0) {
      const std::string v = item.substr(6);
      const bool digits = !v.empty() && v.size() < 5 && v.find_first_not_of("0123456789") == std::string::npos;
      const int b = digits ? std::stoi(v) : 0;
      if (b < 16 || b > 256 || (b & (b - 1)) != 0) throw bad("block '" + v + "' is not a power of two from 16 to 256");
      o["quantize_int4_weights.block"] = v;
    } else {
      throw bad("unknown setting '" + item + "'");
    }
  }
  return o;
}

}  // namespace

void optimize_model(ir::Model& m, const PassOptions& opt) {
  passes::fix_dims(m, passes::parse_fix_dims(opt.fix_dims));
  std::vector<std::string> names;
  if (opt.passes == "default") {
    names = passes::default_pipeline();
    // The KV cache step (onnxc.CacheAppend) runs on the host: CUDA libraries keep the model's ops.
    if (codegen::parse_target(opt.target).has_feature(Halide::Target::CUDA))
      names.erase(std::remove(names.begin(), names.end(), "use_kv_cache"), names.end());
  } else if (opt.passes != "none" && !opt.passes.empty()) {
    names = split_passes(opt.passes);
  }
  if (!opt.dump_after.empty()) {
    bool found = passes::find_pass(opt.dump_after) != nullptr;
    user_check(found) << "--dump-after: unknown pass '" << opt.dump_after << "' (see `onnxc inspect --list-passes`)";
  }
  std::set<std::string> no_fuse;
  for (const std::string& f : split_list(opt.no_fuse)) {
    const auto& fam = passes::fusion_families();
    if (std::find(fam.begin(), fam.end(), f) == fam.end()) {
      std::string known;
      for (const std::string& k : fam) known += (known.empty() ? "" : ", ") + k;
      throw UsageError("--no-fuse: unknown fusion '" + f + "' (known: " + known + ")");
    }
    no_fuse.insert(f);
  }
  std::map<std::string, std::string> pass_options;
  const bool int4 = opt.quantize.rfind("int4-weights", 0) == 0;
  if (int4) {
    pass_options = int4_pass_options(opt.quantize);
    // Before fold_matmul_batch (MatMulNBits takes A of any rank) and after the fusions.
    auto at = std::find(names.begin(), names.end(), "fold_matmul_batch");
    names.insert(at, "quantize_int4_weights");
    if (at == names.end()) names.push_back("infer_shapes");
  } else if (!opt.quantize.empty() && opt.quantize != "dynamic-int8" && opt.quantize != "dynamic-int8:force") {
    throw UsageError("--quantize: unknown mode '" + opt.quantize +
                     "' (known: dynamic-int8, dynamic-int8:force, int4-weights[:block=N][:symmetric][:acc=int8])");
  }
  if (opt.quantize == "dynamic-int8" && !codegen::int8_products_pay(codegen::parse_target(opt.target))) {
    std::cerr << "onnxc: note: --quantize dynamic-int8 left the model float32: on target "
              << (opt.target.empty() ? "host" : opt.target)
              << " int8 products are not known to beat float32 (onnxc's int8 kernel is faster on x86 with AVX2 "
                 "or AVX-512 and on ARM with dotprod, e.g. --target arm64-dotprod); --quantize dynamic-int8:force "
                 "quantizes anyway\n";
  } else if (!opt.quantize.empty() && !int4) {
    // After fold_matmul_batch, which makes [seq, batch, K] activations the 2-D rows it quantizes.
    auto at = std::find(names.begin(), names.end(), "fold_matmul_batch");
    names.insert(at == names.end() ? names.end() : at + 1, "quantize_dynamic_int8");
    if (codegen::int8_sums_int16_pairs(codegen::parse_target(opt.target))) pass_options["quantize_dynamic_int8.int16_pairs"] = "1";
    if (at == names.end()) names.push_back("infer_shapes");
  }
  if (names.empty()) return;
  passes::PipelineOptions po;
  po.no_fuse = std::move(no_fuse);
  po.pass_options = std::move(pass_options);
  po.fusion_report = opt.report;
  if (!opt.dump_after.empty()) po.dump_after.insert(opt.dump_after);
  po.dump_stream = opt.dump;
  po.verify_each = opt.verify_each;
  if (opt.timings) po.timings = opt.dump ? opt.dump : &std::cerr;
  passes::run_pipeline(m, names, po);
}

std::string no_fuse_help() {
  std::string fams;
  for (const std::string& f : passes::fusion_families()) fams += (fams.empty() ? "" : ",") + f;
  return "turn these fusions off (comma list of " + fams + ")";
}

void add_quantize_option(ArgParser& p, std::string* mode) {
  p.option("quantize", 0, "MODE",
           "dynamic-int8: products with a constant weight run in int8 (weights per column,\n"
           "activations per row at run time, int32 sums); norms, softmax and the rest stay float32.\n"
           "Only on targets where that is faster than float32 (x86 with AVX2 or AVX-512, ARM with\n"
           "dotprod); elsewhere (ARM without dotprod, x86 below AVX2) the model stays float32 and a note says so\n"
           "(dynamic-int8:force: quantize anyway).\n"
           "Where the int8 kernel multiplies int16 pairs (x86 without VNNI) weights and rows take sqrt(2^31/K)\n"
           "levels instead of 255 and 127 (1672 for K = 768), at the same speed. With VNNI or dotprod the\n"
           "products whose int8 weights lose most take that form too (half the int8 rate), up to a quarter\n"
           "of the products' work.\n"
           "int4-weights[:block=N][:symmetric][:acc=int8]: products with a constant weight keep it as 4-bit\n"
           "codes per block of N (default 32) along K, with a scale and (unless :symmetric) a zero\n"
           "point each, as com.microsoft.MatMulNBits; the weights are dequantized in registers.\n"
           "(:acc=int8 writes accuracy_level 4: a decode step quantizes A to int8 per block and multiplies\n"
           "the codes in integers where the target has an integer dot product.)\n"
           "Changes results: check them with `onnxc compare` (default: float32 as written)",
           mode);
}

void add_fix_dims_option(ArgParser& p, std::string* list) {
  p.option("fix-dims", 0, "SYM=N,...",
           "make these symbolic dims of the model's inputs constants before compiling (e.g.\n"
           "batch=1,h=224,w=224): schedules are chosen for that size, often faster than the\n"
           "size-generic code, and the library then takes only inputs of that size",
           list);
}

void add_executable_options(ArgParser& p, Executable::Options* o) {
  p.option("threads", 't', "N", "runtime threads (default: all cores)", &o->threads);
  p.option("target", 0, "T", "compile target for an .onnx MODEL (default host)", &o->target);
  add_quantize_option(p, &o->quantize);
  add_fix_dims_option(p, &o->fix_dims);
  p.flag("no-cache", 0, "do not use the kernel cache when compiling an .onnx MODEL", &o->no_cache);
}

std::string pass_list_help() {
  std::ostringstream os;
  size_t width = 0;
  for (const passes::PassInfo& p : passes::pass_registry()) width = std::max(width, p.name.size());
  for (const passes::PassInfo& p : passes::pass_registry()) {
    os << "  " << p.name << std::string(width + 2 - p.name.size(), ' ') << p.summary << "\n";
  }
  std::string def;
  for (const std::string& n : passes::default_pipeline()) def += (def.empty() ? "" : ", ") + n;
  os << "default pipeline: " << def << "\n";
  return os.str();
}

std::string default_model_name(const std::string& model_path) {
  fs::path p(model_path);
  std::string stem = p.stem().string();
  if (stem == "model" && p.has_parent_path()) {
    std::string parent = fs::absolute(p).parent_path().filename().string();
    if (!parent.empty()) stem = parent;
  }
  std::string name;
  for (char c : stem) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "m_" + name;
  return name;
}

std::vector<std::string> unsupported_ops(const ir::Model& m) { return codegen::find_unsupported(m); }

BuildResult build_library(const ir::Model& m, const std::string& out_dir, const BuildOptions& opt) {
  std::error_code ec;
  user_check(!fs::exists(out_dir, ec) || fs::is_directory(out_dir, ec)) << out_dir << ": exists and is not a directory";
  fs::path parent = fs::absolute(out_dir).parent_path();
  fs::create_directories(parent, ec);
  user_check(!ec) << parent.string() << ": cannot create directory: " << ec.message();
  // Staged beside out_dir (same filesystem), moved in file by file once everything is written.
  TempDir stage(parent.string(), "." + fs::path(out_dir).filename().string() + ".partial");

  codegen::CompileOptions co;
  co.name = opt.name;
  co.out_dir = stage.path();
  co.target = opt.target;
  co.jobs = opt.jobs;
  co.threads = opt.threads;
  co.use_cache = opt.use_cache;
  if (opt.progress) {
    co.progress = [&opt](const codegen::KernelProgress& kp) {
      opt.progress(Progress{kp.done, kp.total, kp.kernel, kp.cache_hit});
    };
  }
  codegen::CompileResult cr = codegen::compile_model(m, co);

  fs::create_directories(out_dir, ec);
  user_check(!ec) << out_dir << ": cannot create directory: " << ec.message();
  BuildResult r;
  for (const auto& e : fs::directory_iterator(stage.path())) {
    fs::path dest = fs::path(out_dir) / e.path().filename();
    fs::rename(e.path(), dest, ec);
    user_check(!ec) << dest.string() << ": cannot write: " << ec.message();
    r.files.push_back(dest.string());
  }
  auto moved = [&](const std::string& p) { return p.empty() ? p : (fs::path(out_dir) / fs::path(p).filename()).string(); };
  r.library = moved(cr.so_path);
  r.static_library = moved(cr.a_path);
  r.header = moved(cr.header_path);
  r.kernels = cr.kernels;
  r.distinct_kernels = cr.distinct_kernels;
  r.cache_hits = static_cast<int>(cr.cache_hits);
  r.seconds = cr.seconds;
  r.library_bytes = cr.library_bytes;
  r.weights_bytes = cr.weights_bytes;
  return r;
}

Executable::Executable(const std::string& path, const Options& opt) {
  require_file(path);
  std::string lib = path;
  if (is_library_path(path) && !opt.quantize.empty())
    throw UsageError("--quantize applies when compiling an .onnx model; " + path + " is already compiled");
  if (is_library_path(path) && !opt.fix_dims.empty())
    throw UsageError("--fix-dims applies when compiling an .onnx model; " + path + " is already compiled");
  if (!is_library_path(path)) {
    ir::Model m = read_model(path);
    PassOptions po;
    po.quantize = opt.quantize;
    po.fix_dims = opt.fix_dims;
    po.target = opt.target;
    optimize_model(m, po);
    tmp_ = std::make_unique<TempDir>("onnxc-run");
    BuildOptions bo;
    bo.name = default_model_name(path);
    bo.target = opt.target;
    bo.jobs = opt.jobs;
    bo.use_cache = !opt.no_cache;
    if (!opt.quiet) {
      bo.progress = [](const Progress& p) {
        std::fprintf(stderr, "\r\033[Kcompiling kernel %d/%d%s", p.done, p.total, p.done == p.total ? "\n" : "");
      };
    }
    build_ = build_library(m, tmp_->path() + "/lib", bo);
    lib = build_.library;
  }
  runner_ = std::make_unique<ModelRunner>(lib, opt.threads);
}

}  // namespace onnxc::tools
