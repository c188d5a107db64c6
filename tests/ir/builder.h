// A small helper for building IR graphs by hand in tests.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/infer/infer.h"

namespace onnxc::ir::test {

inline Dim sym(const std::string& name) { return Dim::symbol(name); }

struct Builder {
  Model model;
  Graph& g = *model.graph;

  explicit Builder(int64_t opset = 17) { model.opset_imports.push_back({"", opset}); }

  Value* input(const std::string& name, DType dt, Shape s) { return g.add_input(name, Type::tensor(dt, std::move(s))); }
  Value* input(const std::string& name, DType dt) { return g.add_input(name, Type::tensor(dt)); }
  Value* ints(const std::vector<int64_t>& v, bool scalar = false) {
    std::vector<int64_t> dims;
    if (!scalar) dims.push_back(static_cast<int64_t>(v.size()));
    return g.add_initializer(g.unique_name("c"), Tensor::from_vector<int64_t>(DType::Int64, dims, v));
  }
  Value* floats(const std::vector<float>& v) {
    return g.add_initializer(g.unique_name("f"),
                             Tensor::from_vector<float>(DType::Float32, {static_cast<int64_t>(v.size())}, v));
  }
  Node* node(const std::string& op, const std::vector<Value*>& ins, size_t n_out = 1) {
    std::vector<std::string> outs;
    for (size_t i = 0; i < n_out; ++i) outs.push_back(g.unique_name(op));
    return g.add_node(op, ins, outs);
  }
  Value* op(const std::string& op, const std::vector<Value*>& ins) { return node(op, ins)->output(0); }
  // The node that produced `v`, for setting attributes: b.attrs(v).set_attr_int("axis", 0).
  static Node& attrs(Value* v) { return *v->producer(); }
  static void set_tensor_attr(Node& n, const std::string& name, Tensor t) {
    Attribute a;
    a.name = name;
    a.kind = Attribute::Kind::Tensor;
    a.t = std::move(t);
    n.set_attr(std::move(a));
  }
  InferenceResult infer() { return infer_shapes(model); }
};

inline std::string type_of(const Value* v) { return v->type().str(); }

}  // namespace onnxc::ir::test
