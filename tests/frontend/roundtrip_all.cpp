// frontend_roundtrip_all DATA_DIR: every model.onnx under DATA_DIR/{node,pytorch-converted,
// pytorch-operator,simple} must import, verify, sort topologically, print, export, re-import to the
// same IR text and re-export to the same bytes; every test_data_set_*/*.pb beside it must load (as
// the model input's or output's type says: tensor, sequence or optional), save and load back equal.
// Prints each failure with its test folder name and a summary; exits 1 on any failure.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>

#include "frontend/onnx_export.h"
#include "frontend/onnx_import.h"
#include "frontend/tensor_io.h"
#include "ir/error.h"
#include "ir/printer.h"
#include "ir/verify.h"

namespace fs = std::filesystem;
using namespace onnxc;
using frontend::TestValue;

namespace {

void sort_all(ir::Graph& g) {
  g.topological_sort();
  for (ir::Node* n : g.nodes())
    for (ir::Graph* sg : n->subgraphs()) sort_all(*sg);
}

std::string first_difference(const std::string& a, const std::string& b) {
  size_t line = 1, i = 0;
  for (; i < a.size() && i < b.size() && a[i] == b[i]; ++i) line += a[i] == '\n';
  auto line_at = [&](const std::string& s) {
    size_t start = s.rfind('\n', i == 0 ? 0 : i - 1);
    start = start == std::string::npos ? 0 : start + 1;
    return s.substr(start, s.find('\n', start) - start);
  };
  return "line " + std::to_string(line) + ": '" + line_at(a) + "' vs '" + line_at(b) + "'";
}

bool same_value(const TestValue& a, const TestValue& b) {
  if (a.kind != b.kind || a.name != b.name || a.elements.size() != b.elements.size()) return false;
  if (a.kind == TestValue::Kind::Tensor) return a.tensor.same_contents(b.tensor);
  for (size_t i = 0; i < a.elements.size(); ++i)
    if (!same_value(a.elements[i], b.elements[i])) return false;
  return true;
}

struct Counts {
  int models = 0, models_ok = 0;
  std::map<TestValue::Kind, int> values;
  int value_failures = 0;
};

std::string deterministic_bytes(const onnx::ModelProto& p) {
  std::string s;
  google::protobuf::io::StringOutputStream out(&s);
  google::protobuf::io::CodedOutputStream coded(&out);
  coded.SetSerializationDeterministic(true);
  p.SerializeToCodedStream(&coded);
  coded.Trim();
  return s;
}

// Returns "" or what went wrong.
std::string check_model(const fs::path& dir, const std::string& scratch, Counts& counts) {
  std::string path = (dir / "model.onnx").string();
  ir::Model m = frontend::load_model(path);
  ir::VerifyOptions untyped;
  untyped.require_types = false;  // ops ONNX cannot infer leave types unknown until our inference
  ir::verify(m, untyped);
  sort_all(*m.graph);
  std::string text = ir::to_string(m);
  onnx::ModelProto p1 = frontend::export_model(m);
  frontend::ImportOptions plain;
  plain.onnx_shape_inference = false;  // the exported model carries every type already
  ir::Model back = frontend::import_model(p1, path + " (exported)", dir.string(), plain);
  ir::verify(back, untyped);
  std::string text2 = ir::to_string(back);
  if (text2 != text) return "IR text differs after export + import: " + first_difference(text, text2);
  if (deterministic_bytes(frontend::export_model(back)) != deterministic_bytes(p1))
    return "exporting the re-imported model gives different bytes";
  // Without ONNX inference the round trip must hold as well.
  ir::Model raw = frontend::load_model(path, plain);
  ir::Model raw_back = frontend::import_model(frontend::export_model(raw), path, dir.string(), plain);
  if (ir::to_string(raw_back) != ir::to_string(raw)) return "IR text (no ONNX inference) differs after a round trip";

  // Test data: input_K.pb pairs with the K-th non-initializer input, output_K.pb with output K.
  std::vector<const ir::Value*> inputs, outputs(m.graph->outputs().begin(), m.graph->outputs().end());
  for (const ir::Value* v : m.graph->inputs())
    if (!v->is_constant()) inputs.push_back(v);
  std::string problems;
  for (const auto& set : fs::directory_iterator(dir)) {
    if (!set.is_directory() || set.path().filename().string().rfind("test_data_set_", 0) != 0) continue;
    for (const auto& f : fs::directory_iterator(set.path())) {
      std::string name = f.path().filename().string();
      if (f.path().extension() != ".pb") continue;
      bool is_input = name.rfind("input_", 0) == 0;
      size_t k = std::stoul(name.substr(is_input ? 6 : 7));
      const auto& list = is_input ? inputs : outputs;
      ir::Type type = k < list.size() ? list[k]->type() : ir::Type{};
      try {
        TestValue v = frontend::load_test_value_pb(f.path().string(), type);
        frontend::save_test_value_pb(v, scratch);
        if (!same_value(frontend::load_test_value_pb(scratch, type), v)) throw UserError("differs after save + load");
        counts.values[v.kind]++;
      } catch (const UserError& e) {
        counts.value_failures++;
        problems += std::string(problems.empty() ? "" : "; ") + set.path().filename().string() + "/" + name + ": " +
                    e.what();
      }
    }
  }
  return problems;
}

}  // namespace

int main(int argc, char** argv) {
  std::string root = argc > 1 ? argv[1] : "/usr/share/libonnx-testdata/data";
  std::string scratch = fs::temp_directory_path() / ("onnxc_roundtrip_" + std::to_string(::getpid()) + ".pb");
  auto start = std::chrono::steady_clock::now();
  Counts counts;
  std::vector<std::string> failures;
  for (const char* suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(fs::path(root) / suite))
      if (fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& dir : dirs) {
      counts.models++;
      std::string what;
      try {
        what = check_model(dir, scratch, counts);
      } catch (const std::exception& e) {
        what = e.what();
      }
      if (what.empty()) counts.models_ok++;
      else failures.push_back(std::string(suite) + "/" + dir.filename().string() + ": " + what);
    }
  }
  fs::remove(scratch);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& f : failures) std::cout << "FAIL " << f << "\n";
  using K = TestValue::Kind;
  std::cout << "frontend round trip: " << counts.models_ok << "/" << counts.models << " models; test data: "
            << counts.values[K::Tensor] << " tensors, " << counts.values[K::Sequence] << " sequences, "
            << counts.values[K::Optional] << " optionals loaded and saved, " << counts.value_failures
            << " failed; " << secs << " s\n";
  return failures.empty() && counts.models > 0 ? 0 : 1;
}
