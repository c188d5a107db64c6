// Inference over the ONNX backend test models: the "done when" checks of shape inference.
//   ir_infer_models all  DATA_DIR           every model of node/, pytorch-converted/,
//                                           pytorch-operator/, simple/ imports, infers and verifies,
//                                           and every tensor value has a dtype and a rank.
//   ir_infer_models node DATA_DIR LIST      node/ tests: inferred output shapes equal the reference
//                                           outputs (see known_unknowable_shapes.txt for LIST).
// Prints one line per failure and a summary; exits non-zero on any failure.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>

#include "frontend/onnx_import.h"
#include "frontend/tensor_io.h"
#include "ir/error.h"
#include "ir/infer/infer.h"
#include "ir/verify.h"

namespace fs = std::filesystem;
using namespace onnxc;

namespace {

std::vector<fs::path> test_dirs(const fs::path& folder) {
  std::vector<fs::path> r;
  if (!fs::is_directory(folder)) return r;
  for (const auto& e : fs::directory_iterator(folder))
    if (fs::exists(e.path() / "model.onnx")) r.push_back(e.path());
  std::sort(r.begin(), r.end());
  return r;
}

void for_each_graph(ir::Graph& g, const std::function<void(ir::Graph&)>& fn) {
  fn(g);
  for (ir::Node* n : g.nodes())
    for (ir::Graph* sg : n->subgraphs()) for_each_graph(*sg, fn);
}

// "" when every tensor value (node outputs, graph outputs) has a dtype and a rank.
std::string untyped_values(ir::Graph& root) {
  std::string bad;
  for_each_graph(root, [&](ir::Graph& g) {
    std::vector<ir::Value*> vs(g.outputs().begin(), g.outputs().end());
    for (ir::Node* n : g.nodes())
      for (ir::Value* v : n->outputs())
        if (v) vs.push_back(v);
    for (ir::Value* v : vs) {
      const ir::Type& t = v->type();
      bool ok = t.kind != ir::Type::Kind::Unknown && (!t.is_tensor() || (t.dtype != ir::DType::Undefined && t.shape));
      if (!ok && bad.find("'" + v->name() + "'") == std::string::npos) bad += " '" + v->name() + "': " + t.str();
    }
  });
  return bad;
}

ir::Model load_untyped(const fs::path& dir, bool bind_inputs);

int check_all(const fs::path& data) {
  int models = 0, failed = 0;
  std::set<std::string> missing;
  for (const char* folder : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    for (const auto& dir : test_dirs(data / folder)) {
      ++models;
      std::string name = std::string(folder) + "/" + dir.filename().string();
      // Once on top of ONNX's own inference (conflicts with it are errors), once alone.
      for (bool alone : {false, true}) {
        try {
          ir::Model m = alone ? load_untyped(dir, false) : frontend::load_model((dir / "model.onnx").string());
          ir::InferenceResult r = ir::infer_shapes(m);
          missing.insert(r.missing_rules.begin(), r.missing_rules.end());
          ir::verify(m);
          std::string bad = untyped_values(*m.graph);
          if (!bad.empty()) throw UserError("values without dtype or rank:" + bad);
        } catch (const std::exception& e) {
          ++failed;
          std::cout << "FAIL " << name << (alone ? " (our inference alone)" : "") << ": " << e.what() << "\n";
          break;
        }
      }
    }
  }
  for (const auto& op : missing) std::cout << "no inference rule: " << op << "\n";
  std::cout << "infer_all_models: " << models << " models, " << models - failed << " passed, " << failed << " failed\n";
  return failed == 0 && models > 0 ? 0 : 1;
}

// ---- node tests against reference outputs ----

struct Listed {
  std::string category;  // "input-valued", "data-dependent" or "beyond-inference"
  std::string reason;
};

std::map<std::string, Listed> read_list(const fs::path& p) {
  std::map<std::string, Listed> r;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string name;
    Listed l;
    ss >> name >> l.category;
    std::getline(ss, l.reason);
    r[name] = l;
  }
  return r;
}

// Imports without ONNX's inference and forgets every type a node output was declared with, so the
// types checked are ours alone. With `bind_inputs`, graph inputs hold the test's input data as
// constants (shape arguments such as Reshape's `shape` are runtime inputs in these tests).
ir::Model load_untyped(const fs::path& dir, bool bind_inputs) {
  frontend::ImportOptions opt;
  opt.onnx_shape_inference = false;
  ir::Model m = frontend::load_model((dir / "model.onnx").string(), opt);
  for_each_graph(*m.graph, [](ir::Graph& g) {
    for (ir::Node* n : g.nodes())
      for (ir::Value* v : n->outputs())
        if (v) v->set_type(ir::Type());
  });
  if (!bind_inputs) return m;
  size_t k = 0;
  for (ir::Value* v : m.graph->inputs()) {
    if (v->is_constant()) continue;
    fs::path p = dir / "test_data_set_0" / ("input_" + std::to_string(k++) + ".pb");
    if (v->type().is_tensor() && fs::exists(p)) v->set_constant(frontend::load_tensor_pb(p.string()));
  }
  return m;
}

// Compares inferred output shapes with the reference outputs. Returns the mismatches; sets
// `symbolic` to the outputs with a dim that is not a constant.
std::vector<std::string> compare_outputs(const fs::path& dir, ir::Model& m, std::string& symbolic) {
  std::vector<std::string> bad;
  const auto& outs = m.graph->outputs();
  for (size_t k = 0; k < outs.size(); ++k) {
    const ir::Type& t = outs[k]->type();
    fs::path p = dir / "test_data_set_0" / ("output_" + std::to_string(k) + ".pb");
    if (!t.is_tensor() || !fs::exists(p)) continue;
    ir::Tensor ref = frontend::load_tensor_pb(p.string());
    std::string want = ir::shape_str(ir::Shape(ref.dims().begin(), ref.dims().end()));
    std::string what = "output '" + outs[k]->name() + "': inferred " + t.str() + ", reference " + want;
    // ONNX 1.12 stores bfloat16 reference data as uint16.
    bool bf16_as_u16 = t.dtype == ir::DType::BFloat16 && ref.dtype() == ir::DType::UInt16;
    if (t.dtype != ref.dtype() && !bf16_as_u16) bad.push_back(what + " (dtype)");
    if (!t.shape || t.shape->size() != ref.dims().size()) {
      if (t.shape) bad.push_back(what);
      else symbolic += " " + what;
      continue;
    }
    bool sym = false, differs = false;
    for (size_t i = 0; i < t.shape->size(); ++i) {
      const ir::Dim& d = (*t.shape)[i];
      sym |= !d.is_const();
      differs |= d.is_const() && d.value() != ref.dims()[i];
    }
    if (sym) symbolic += " " + what;
    if (differs) bad.push_back(what);
  }
  return bad;
}

int check_node(const fs::path& data, const fs::path& list_path) {
  auto listed = read_list(list_path);
  int tests = 0, failed = 0;
  for (const auto& [name, l] : listed) {
    bool known = l.category == "input-valued" || l.category == "data-dependent" || l.category == "beyond-inference";
    if (known && fs::exists(data / "node" / name / "model.onnx")) continue;
    ++failed;
    std::cout << "FAIL " << list_path.filename().string() << ": '" << name << "' is not a node test or has category '"
              << l.category << "'\n";
  }
  for (const auto& dir : test_dirs(data / "node")) {
    ++tests;
    std::string name = dir.filename().string();
    auto it = listed.find(name);
    std::string category = it == listed.end() ? "" : it->second.category;
    std::vector<std::string> errors;
    for (bool bind : {false, true}) {
      try {
        ir::Model m = load_untyped(dir, bind);
        ir::infer_shapes(m);
        std::string symbolic;
        for (const auto& e : compare_outputs(dir, m, symbolic)) errors.push_back(e);
        // Without data every listed test may stay symbolic; with the inputs bound only those listed as
        // data-dependent or beyond-inference.
        bool data_independent = category == "input-valued" || category.empty();
        bool allowed = bind ? !data_independent : !category.empty();
        bool expected = bind ? !data_independent : category == "input-valued";
        if (!symbolic.empty() && !allowed)
          errors.push_back(std::string("symbolic output shape") + (bind ? " with inputs bound:" : ":") + symbolic);
        if (symbolic.empty() && expected)
          errors.push_back("listed as " + category + " but every shape is static (stale entry)");
      } catch (const std::exception& e) {
        errors.push_back(e.what());
      }
    }
    if (errors.empty()) continue;
    ++failed;
    for (const auto& e : errors) std::cout << "FAIL " << name << ": " << e << "\n";
  }
  std::cout << "infer_node_shapes_match: " << tests << " node tests; " << failed << " failures; " << listed.size()
            << " listed in " << list_path.filename().string() << "\n";
  return failed == 0 && tests > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "all" && argc == 3) return check_all(argv[2]);
  if (mode == "node" && argc == 4) return check_node(argv[2], argv[3]);
  std::cerr << "usage: ir_infer_models all DATA_DIR | node DATA_DIR LIST\n";
  return 2;
}
