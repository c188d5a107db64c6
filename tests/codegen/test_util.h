// Test helpers for codegen: build a small ir::Model by hand, compile it, and run the library through
// its descriptor with a minimal plan executor (each tensor its own buffer; no memory planning), so
// codegen is tested without the runtime.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "codegen/compile.h"
#include "ir/graph.h"
#include "onnxc/model_abi.h"

namespace onnxc::test {

// A dense host tensor.
struct HostTensor {
  ir::DType dtype = ir::DType::Float32;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;

  int64_t numel() const;
  template <class T>
  static HostTensor make(ir::DType dt, std::vector<int64_t> dims, const std::vector<T>& v) {
    HostTensor t{dt, std::move(dims), {}};
    t.bytes.resize(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
    return t;
  }
  static HostTensor f32(std::vector<int64_t> dims, const std::vector<float>& v) { return make(ir::DType::Float32, dims, v); }
  static HostTensor i64(std::vector<int64_t> dims, const std::vector<int64_t>& v) { return make(ir::DType::Int64, dims, v); }
  template <class T>
  std::vector<T> values() const {
    std::vector<T> v(bytes.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }
};

// Builds a graph with explicit output types (tests do not depend on shape inference).
class ModelBuilder {
 public:
  ModelBuilder(int64_t opset = 17);
  ir::Value* input(const std::string& name, ir::DType dt, ir::Shape shape);
  ir::Value* constant(const std::string& name, ir::Tensor t);
  ir::Value* const_i64(const std::string& name, std::vector<int64_t> v);  // 1-D
  ir::Value* const_f32(const std::string& name, std::vector<int64_t> dims, std::vector<float> v);
  // One node; outputs are typed from `out_types`. Returns the node.
  ir::Node* node(const std::string& op, const std::vector<ir::Value*>& ins,
                 const std::vector<std::pair<std::string, ir::Type>>& outs, const std::string& domain = "");
  ir::Value* op(const std::string& op, const std::vector<ir::Value*>& ins, const std::string& out,
                ir::DType dt, ir::Shape shape);
  void output(ir::Value* v) { m_.graph->add_output(v); }
  ir::Model& model() { return m_; }

 private:
  ir::Model m_;
};

// A compiled model library, dlopened.
class LoadedModel {
 public:
  explicit LoadedModel(const std::string& so_path);
  ~LoadedModel();
  LoadedModel(const LoadedModel&) = delete;
  const onnxc_model_desc* desc() const { return desc_; }
  // Runs the plan; outputs in graph output order. Throws std::runtime_error on kernel failure.
  std::vector<HostTensor> run(const std::vector<HostTensor>& inputs) const;

 private:
  void* handle_ = nullptr;
  const onnxc_model_desc* desc_ = nullptr;
};

// A subgraph (an If branch, a Loop or Scan body) nested in `outer`, whose nodes may read outer
// values directly; add inputs and nodes, then outputs through `g`.
struct Subgraph {
  Subgraph(ir::Graph* outer, const std::string& name) : g(std::make_shared<ir::Graph>(name, outer)) {}
  ir::Value* in(const std::string& name, ir::Type t) { return g->add_input(name, std::move(t)); }
  ir::Value* op(const std::string& op, const std::vector<ir::Value*>& ins, const std::string& out, ir::Type t) {
    ir::Node* n = g->add_node(op, ins, {out});
    n->set_name(out);
    n->output()->set_type(std::move(t));
    return n->output();
  }
  std::shared_ptr<ir::Graph> g;
};

// Sets the graph attribute `name` of `n` (then_branch, else_branch, body) to `sub`.
inline void set_graph_attr(ir::Node* n, const std::string& name, const Subgraph& sub) {
  ir::Attribute a;
  a.name = name;
  a.kind = ir::Attribute::Kind::Graph;
  a.g = sub.g;
  n->set_attr(a);
}

// start, start + 1, ... (n values).
inline std::vector<float> iota(int n, float start = 0) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

// n values drawn uniformly from [-1, 1) by a generator seeded with `seed` (the same on every platform
// for a given standard library).
inline std::vector<float> uniform(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& e : v) e = d(gen);
  return v;
}

// A fresh directory under the test temp dir.
std::string temp_dir(const std::string& hint);
// Compiles with the test kernel cache; returns the result.
codegen::CompileResult compile(const ir::Model& m, const std::string& name, const std::string& target = "host");
// compile + load + run in one go, for `target` (it must run on this machine).
std::vector<HostTensor> compile_and_run(const ir::Model& m, const std::vector<HostTensor>& inputs,
                                        const std::string& name = "test", const std::string& target = "host");

// Element-wise comparison with tolerances (ONNX backend-test style: |a-b| <= atol + rtol*|b|).
::testing::AssertionResult all_close(const std::vector<float>& actual, const std::vector<float>& expected,
                                     double rtol = 1e-5, double atol = 1e-6);

}  // namespace onnxc::test
