// `onnxc compare`: run a model on ONNX test data (input_K.pb) and compare every output with its
// reference (output_K.pb). Exit 0 if all match, 1 naming the first output that does not.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "ir/error.h"
#include "tools/args.h"
#include "tools/build.h"
#include "tools/check/compare.h"
#include "tools/check/dataset.h"
#include "tools/json.h"

namespace fs = std::filesystem;

namespace onnxc::tools {
namespace {

// Graph input slot of test input k: by tensor name when it names a model input, else by position.
size_t input_slot(const ModelRunner& r, const check::NamedTensor& t, size_t k) {
  int by_name = t.name.empty() ? -1 : r.input_index(t.name);
  return by_name >= 0 ? static_cast<size_t>(by_name) : k;
}

size_t output_slot(const ModelRunner& r, const check::NamedTensor& t, size_t k) {
  for (size_t i = 0; i < r.outputs().size(); ++i) {
    if (!t.name.empty() && r.outputs()[i].name == t.name) return i;
  }
  return k;
}

// One data set's reports as a JSON object, for `compare --json`.
std::string data_set_json(const std::string& dir, bool ok, const std::vector<check::TensorReport>& reports) {
  std::string out = "  {\"dir\": " + json_str(dir) + ", \"ok\": " + (ok ? "true" : "false") + ", \"outputs\": [";
  for (size_t i = 0; i < reports.size(); ++i) {
    const check::TensorReport& r = reports[i];
    out += std::string(i ? "," : "") + "\n    {\"name\": " + json_str(r.name) + ", \"ok\": " + (r.ok ? "true" : "false") +
           ", \"problem\": " + json_str(r.problem) + ", \"numel\": " + std::to_string(r.numel) +
           ", \"mismatches\": " + std::to_string(r.mismatches) + ", \"max_abs_err\": " + json_num(r.max_abs_err) +
           ", \"max_rel_err\": " + json_num(r.max_rel_err) + ", \"norm_rel_err\": " + json_num(r.norm_rel_err) +
           ", \"exact\": " + (r.exact ? "true" : "false") + ", \"worst\": [";
    for (size_t k = 0; k < r.worst.size(); ++k) {
      const check::ElementError& e = r.worst[k];
      out += std::string(k ? ", " : "") + "{\"index\": " + check::index_str(e.index) + ", \"actual\": " +
             json_str(e.actual) + ", \"expected\": " + json_str(e.expected) + ", \"abs_err\": " + json_num(e.abs_err) +
             ", \"rel_err\": " + json_num(e.rel_err) + "}";
    }
    out += "]}";
  }
  return out + "]}";
}

}  // namespace

int compare_main(const std::vector<std::string>& args) {
  std::string model;
  std::vector<std::string> data, references;
  check::Tolerance tol;
  int worst = 5;
  bool quiet = false, json = false;
  Executable::Options eo;
  ArgParser p("compare", "MODEL [DATA...] [options]",
              "Runs MODEL on the inputs of ONNX test-data folders (input_0.pb, input_1.pb, ...) and compares\n"
              "each output with output_K.pb: max abs and rel error, mismatches at --rtol/--atol (an element\n"
              "matches when |actual - expected| <= atol + rtol * |expected|; NaN matches NaN; ints, bools and\n"
              "strings must be equal; dtypes and shapes must be equal) and the worst elements by index.");
  p.positional("MODEL", "model.onnx (compiled through the kernel cache first), a compiled libNAME.so,\n"
                        "or a folder holding model.onnx", &model);
  p.positional_list("DATA", "test_data_set_N folders, or model folders holding them\n"
                            "(default: MODEL's folder)", &data, 0);
  p.option_list("reference", 'r', "DIR", "a data folder (same as a DATA argument; repeatable)", &references);
  p.option("rtol", 0, "R", "relative tolerance (default 1e-3, as ONNX's backend tests)", &tol.rtol);
  p.option("atol", 0, "A", "absolute tolerance (default 1e-7)", &tol.atol);
  p.option("worst", 0, "K", "list the K worst elements of a failing output (default 5)", &worst);
  add_executable_options(p, &eo);
  p.flag("quiet", 'q', "print only the summary line", &quiet);
  p.flag("json", 0, "print {\"data_sets\": [{\"dir\", \"ok\", \"outputs\": [per-output errors]}], \"matched\",\n"
                    "\"total\", \"first_failure\"} instead of the tables (the exit status is the same)", &json);
  p.epilog("Exit status: 0 every output matches, 1 an output differs (it is named), 2 error.\n\n"
           "Examples:\n"
           "  onnxc compare out/libencoder.so tests/models/encoder_layer --rtol 1e-4 --atol 1e-5\n"
           "  onnxc compare model.onnx test_data_set_0/ test_data_set_1/");
  add_external_path_option(p);
  if (!p.parse(args)) return kExitOk;
  if (tol.rtol < 0 || tol.atol < 0) throw UsageError("--rtol and --atol must be >= 0");
  if (worst < 0) throw UsageError("--worst must be >= 0");

  std::error_code ec;
  if (fs::is_directory(model, ec)) {
    if (data.empty() && references.empty()) data.push_back(model);
    model = (fs::path(model) / "model.onnx").string();
  }
  require_file(model);
  data.insert(data.end(), references.begin(), references.end());
  if (data.empty()) {
    user_check(!is_library_path(model)) << "no test data given for the compiled library " << model
                                        << " (pass test_data_set folders)";
    data.push_back(fs::path(model).parent_path().empty() ? "." : fs::path(model).parent_path().string());
  }
  std::vector<std::string> sets;
  for (const std::string& d : data) {
    for (std::string& s : check::find_data_sets(d)) sets.push_back(std::move(s));
  }

  eo.quiet = quiet || json || !stderr_is_tty();
  Executable exe(model, eo);
  ModelRunner& runner = exe.runner();

  int failed_sets = 0;
  std::string first_failure, sets_json;
  // How far quantization moved the outputs from the (float) references: the worst over every data set.
  double moved_norm = 0, moved_abs = 0;
  for (const std::string& dir : sets) {
    std::vector<ir::Type> in_types, out_types;  // positional: how to read sequence and optional files
    for (const IOInfo& io : runner.inputs()) in_types.push_back(io.value_type());
    for (const IOInfo& io : runner.outputs()) out_types.push_back(io.value_type());
    check::DataSet ds = check::load_data_set(dir, in_types, out_types);
    user_check(ds.inputs.size() == runner.inputs().size())
        << dir << ": " << ds.inputs.size() << " input files for a model with " << runner.inputs().size()
        << " inputs";
    for (size_t k = 0; k < ds.inputs.size(); ++k) {
      size_t slot = input_slot(runner, ds.inputs[k], k);
      ir::DType want = slot < runner.inputs().size() ? runner.inputs()[slot].dtype : ds.inputs[k].tensor.dtype();
      if (ds.inputs[k].value.kind != frontend::TestValue::Kind::Tensor) runner.set_input_value(slot, ds.inputs[k].value);
      else runner.set_input(slot, check::match_stored_dtype(ds.inputs[k].tensor, want));
    }
    runner.run();
    std::vector<check::TensorReport> reports;
    std::vector<bool> checked(runner.outputs().size(), false);
    for (size_t k = 0; k < ds.outputs.size(); ++k) {
      size_t slot = output_slot(runner, ds.outputs[k], k);
      user_check(slot < runner.outputs().size())
          << ds.outputs[k].file << ": the model has only " << runner.outputs().size() << " outputs";
      user_check(!checked[slot]) << ds.outputs[k].file << ": a second reference for output '"
                                 << runner.outputs()[slot].name << "'";
      checked[slot] = true;
      if (runner.outputs()[slot].value != 0 || ds.outputs[k].value.kind != frontend::TestValue::Kind::Tensor) {
        reports.push_back(check::compare_values(runner.outputs()[slot].name, runner.output_value(slot), ds.outputs[k].value,
                                                tol, static_cast<size_t>(worst)));
        continue;
      }
      ir::Tensor actual = runner.output(slot);
      reports.push_back(check::compare_tensors(runner.outputs()[slot].name, actual,
                                               check::match_stored_dtype(ds.outputs[k].tensor, actual.dtype()), tol,
                                               static_cast<size_t>(worst)));
    }
    // An output without a reference was not checked: that is a failure, never a silent pass.
    for (size_t slot = 0; slot < checked.size(); ++slot) {
      if (checked[slot]) continue;
      check::TensorReport missing;
      missing.name = runner.outputs()[slot].name;
      missing.ok = false;
      missing.problem = "no reference: " + dir + " has no output_" + std::to_string(slot) + ".pb for it";
      reports.push_back(std::move(missing));
    }
    bool ok = true;
    for (const check::TensorReport& r : reports) {
      if (r.problem.empty()) moved_norm = std::max(moved_norm, r.norm_rel_err), moved_abs = std::max(moved_abs, r.max_abs_err);
      if (r.ok) continue;
      ok = false;
      if (first_failure.empty()) {
        first_failure = "output '" + r.name + "' differs in " + dir +
                        (r.problem.empty() ? " (" + std::to_string(r.mismatches) + " of " + std::to_string(r.numel) +
                                                 " elements)"
                                           : " (" + r.problem + ")");
      }
    }
    failed_sets += ok ? 0 : 1;
    if (json) {
      sets_json += (sets_json.empty() ? "" : ",\n") + data_set_json(dir, ok, reports);
      continue;
    }
    if (!quiet || !ok) std::fputs(check::format_reports(dir, reports, tol).c_str(), stdout);
  }
  if (!eo.quantize.empty() && !json)
    std::printf("compare: --quantize %s moved the outputs from the references by %.3g%% (relative L2 norm, worst "
                "output) and %.3g at most (absolute)\n",
                eo.quantize.c_str(), 100.0 * moved_norm, moved_abs);
  if (json) {
    std::printf("{\"model\": %s, \"rtol\": %s, \"atol\": %s, \"matched\": %zu, \"total\": %zu, \"first_failure\": %s,\n"
                " \"data_sets\": [\n%s]}\n",
                json_str(model).c_str(), json_num(tol.rtol).c_str(), json_num(tol.atol).c_str(), sets.size() - failed_sets,
                sets.size(), json_str(first_failure).c_str(), sets_json.c_str());
    std::fflush(stdout);
  }
  if (failed_sets) {
    if (json) {
      std::fprintf(stderr, "onnxc compare: %s\n", first_failure.c_str());
      return kExitMismatch;
    }
    std::printf("compare: %d of %zu data sets differ: %s\n", failed_sets, sets.size(), first_failure.c_str());
    std::fflush(stdout);
    std::fprintf(stderr, "onnxc compare: %s\n", first_failure.c_str());
    return kExitMismatch;
  }
  if (!json) std::printf("compare: %zu of %zu data sets match\n", sets.size(), sets.size());
  return kExitOk;
}

}  // namespace onnxc::tools
