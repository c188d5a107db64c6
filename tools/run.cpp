// `onnxc run`: run a model (an .onnx compiled on the fly through the kernel cache, or a compiled
// library) on tensors from .pb or .npy files and write the outputs as TensorProto files.
#include <cstdio>
#include <filesystem>

#include "frontend/tensor_io.h"
#include "ir/error.h"
#include "tools/args.h"
#include "tools/build.h"
#include "tools/check/compare.h"
#include "tools/check/npy.h"

namespace fs = std::filesystem;

namespace onnxc::tools {
namespace {

ir::Tensor load_input_file(const std::string& path) {
  require_file(path);
  if (check::is_npy_file(path)) return check::load_npy(path);
  return frontend::load_tensor_pb(path);
}

// A few leading values, for the summary printed after a run.
std::string preview(const ir::Tensor& t, int64_t count = 6) {
  std::string s;
  int64_t n = std::min<int64_t>(t.numel(), count);
  for (int64_t i = 0; i < n; ++i) {
    char buf[32];
    if (t.dtype() == ir::DType::String) {
      s += (i ? " " : "") + t.string_data()[static_cast<size_t>(i)];
      continue;
    }
    if (ir::dtype_is_float(t.dtype())) {
      std::snprintf(buf, sizeof buf, "%.6g", t.get_f64(i));
    } else {
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(t.get_i64(i)));
    }
    s += (i ? " " : "") + std::string(buf);
  }
  if (t.numel() > count) s += " ...";
  return s;
}

// A file name for an output: the ONNX test layout (output_K.pb), so DIR can serve as a reference.
std::string output_file(const std::string& dir, size_t k) {
  return (fs::path(dir) / ("output_" + std::to_string(k) + ".pb")).string();
}

}  // namespace

int run_main(const std::vector<std::string>& args) {
  std::string model, output_dir;
  std::vector<std::string> inputs;
  Executable::Options eo;
  bool quiet = false;
  ArgParser p("run", "MODEL --input NAME=FILE... [--output-dir DIR] [options]",
              "Runs MODEL once. An .onnx file is compiled into a temporary folder first (the same lowering\n"
              "as `onnxc compile`, through the kernel cache) and loaded like a compiled library.\n"
              "Outputs are written as TensorProto files output_0.pb, output_1.pb, ... (each carrying the\n"
              "output's name), the layout of an ONNX test_data_set folder.");
  p.positional("MODEL", "model.onnx or a compiled libNAME.so", &model);
  p.option_list("input", 'i', "NAME=FILE",
                "an input from a TensorProto .pb or a NumPy .npy file (format\n"
                "v1-v3, little-endian, C order). Without NAME= (FILE alone),\n"
                "inputs are taken in the model's order", &inputs);
  p.option("output-dir", 'o', "DIR", "write the outputs here (created if missing)", &output_dir);
  add_executable_options(p, &eo);
  p.flag("quiet", 'q', "do not print the output summary", &quiet);
  p.epilog("Example:\n  onnxc run model.onnx -i src=src.npy -i mask=mask.pb -o outputs/");
  add_external_path_option(p);
  if (!p.parse(args)) return kExitOk;
  if (eo.threads < 0) throw UsageError("--threads must be >= 0");

  require_file(model);
  // Read every input before compiling: a bad input file fails fast.
  std::vector<std::pair<std::string, ir::Tensor>> tensors;
  for (const std::string& spec : inputs) {
    size_t eq = spec.find('=');
    std::string name = eq == std::string::npos ? "" : spec.substr(0, eq);
    std::string file = eq == std::string::npos ? spec : spec.substr(eq + 1);
    if (file.empty()) throw UsageError("--input " + spec + ": missing file name");
    tensors.emplace_back(name, load_input_file(file));
  }
  std::error_code ec;
  user_check(output_dir.empty() || !fs::exists(output_dir, ec) || fs::is_directory(output_dir, ec))
      << output_dir << ": exists and is not a directory";

  eo.quiet = !stderr_is_tty();
  Executable exe(model, eo);
  ModelRunner& r = exe.runner();

  std::vector<bool> bound(r.inputs().size(), false);
  for (size_t k = 0; k < tensors.size(); ++k) {
    const auto& [name, t] = tensors[k];
    int slot = name.empty() ? static_cast<int>(k) : r.input_index(name);
    if (slot < 0 || slot >= static_cast<int>(r.inputs().size())) {
      std::string known;
      for (const IOInfo& in : r.inputs()) known += (known.empty() ? "" : ", ") + in.name;
      user_error << (name.empty() ? "input #" + std::to_string(k) : "input '" + name + "'")
                 << ": the model has no such input (inputs: " << known << ")";
    }
    user_check(!bound[slot]) << "input '" << r.inputs()[slot].name << "' given twice";
    bound[slot] = true;
    r.set_input(static_cast<size_t>(slot), t);
  }
  std::string missing;
  for (size_t i = 0; i < bound.size(); ++i) {
    if (!bound[i]) missing += (missing.empty() ? "" : ", ") + r.inputs()[i].name + ": " + r.inputs()[i].type_str();
  }
  user_check(missing.empty()) << "missing inputs (" << missing << "); pass them with --input NAME=FILE";
  r.run();

  std::vector<ir::Tensor> outs;
  for (size_t k = 0; k < r.outputs().size(); ++k) outs.push_back(r.output(k));
  if (!output_dir.empty()) {
    fs::create_directories(output_dir, ec);
    user_check(!ec) << output_dir << ": cannot create directory: " << ec.message();
    for (size_t k = 0; k < outs.size(); ++k) frontend::save_tensor_pb(outs[k], r.outputs()[k].name, output_file(output_dir, k));
  }
  if (!quiet) {
    for (size_t k = 0; k < outs.size(); ++k) {
      std::printf("%s  %s  %s%s\n", r.outputs()[k].name.c_str(), check::tensor_type_str(outs[k]).c_str(),
                  preview(outs[k]).c_str(),
                  output_dir.empty() ? "" : ("  -> " + output_file(output_dir, k)).c_str());
    }
  }
  return kExitOk;
}

}  // namespace onnxc::tools
