// Finding and loading ONNX test-data folders.
#include "tools/check/dataset.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>

#include "frontend/tensor_io.h"
#include "ir/error.h"

namespace fs = std::filesystem;

namespace onnxc::check {
namespace {

// The K of "prefixK" / "prefixK.pb" (-1 if `name` is not of that form).
long numbered(const std::string& name, const std::string& prefix, const std::string& suffix) {
  if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return -1;
  }
  std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ::isdigit) || digits.size() > 9) return -1;
  return std::stol(digits);
}

std::vector<std::string> numbered_entries(const std::string& dir, const std::string& prefix,
                                          const std::string& suffix, bool want_dirs) {
  std::map<long, std::string> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory(ec) != want_dirs) continue;
    long k = numbered(e.path().filename().string(), prefix, suffix);
    if (k >= 0) found[k] = e.path().string();
  }
  std::vector<std::string> out;
  for (auto& [k, p] : found) out.push_back(p);
  return out;
}

}  // namespace

std::vector<std::string> numbered_files(const std::string& dir, const std::string& prefix) {
  return numbered_entries(dir, prefix, ".pb", false);
}

std::vector<std::string> find_data_sets(const std::string& path) {
  std::error_code ec;
  user_check(fs::exists(path, ec)) << path << ": no such file or directory";
  user_check(fs::is_directory(path, ec)) << path << ": not a directory (expected a test_data_set_* folder "
                                                    "or a model folder holding them)";
  if (!numbered_files(path, "input_").empty() || !numbered_files(path, "output_").empty()) return {path};
  std::vector<std::string> sets = numbered_entries(path, "test_data_set_", "", true);
  user_check(!sets.empty()) << path << ": no input_*.pb/output_*.pb files and no test_data_set_* folders";
  return sets;
}

bool is_model_test_dir(const std::string& dir) {
  std::error_code ec;
  fs::path model = fs::path(dir) / "model.onnx";
  return fs::exists(model, ec) && !fs::is_directory(model, ec) &&
         !numbered_entries(dir, "test_data_set_", "", true).empty();
}

std::vector<std::string> find_model_test_dirs(const std::string& root) {
  std::error_code ec;
  user_check(fs::is_directory(root, ec)) << root << ": not a directory";
  std::vector<std::string> out;
  if (is_model_test_dir(root)) out.push_back(root);
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->is_directory(ec) && is_model_test_dir(it->path().string())) {
      out.push_back(it->path().string());
      it.disable_recursion_pending();  // data sets live inside; nothing further down is a test
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

ir::Tensor match_stored_dtype(const ir::Tensor& t, ir::DType want) {
  if (t.dtype() != ir::DType::UInt16 || want != ir::DType::BFloat16) return t;
  ir::Tensor out(want, t.dims());
  if (t.nbytes()) std::memcpy(out.mutable_raw(), t.raw(), t.nbytes());
  return out;
}

namespace {

// File `f`, the k-th of its kind, read as types[k] says.
NamedTensor load_entry(const std::string& f, const std::vector<ir::Type>& types, size_t k) {
  NamedTensor t;
  t.file = f;
  if (k < types.size() && !types[k].is_tensor()) {
    t.value = frontend::load_test_value_pb(f, types[k]);
    t.name = t.value.name;
  } else {
    t.tensor = frontend::load_tensor_pb(f, &t.name);
  }
  return t;
}

}  // namespace

DataSet load_data_set(const std::string& dir, const std::vector<ir::Type>& input_types,
                      const std::vector<ir::Type>& output_types) {
  DataSet ds;
  ds.dir = dir;
  for (const std::string& f : numbered_files(dir, "input_")) ds.inputs.push_back(load_entry(f, input_types, ds.inputs.size()));
  for (const std::string& f : numbered_files(dir, "output_")) ds.outputs.push_back(load_entry(f, output_types, ds.outputs.size()));
  user_check(!ds.outputs.empty()) << dir << ": no output_*.pb reference files";
  return ds;
}

}  // namespace onnxc::check
