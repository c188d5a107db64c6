// The IR: SSA values, nodes and graphs. A Value has one producer (a node output, a graph input or a
// constant) and knows its uses; a Node is an ONNX-style op with attributes and optional subgraphs;
// a Graph owns its nodes and values in topological order. Nodes in a subgraph may use values of an
// enclosing graph directly (ONNX outer-scope references).
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/dim.h"
#include "ir/dtype.h"
#include "ir/tensor.h"

namespace onnxc::ir {

class Graph;
class Node;

// The type of a value: a tensor (dtype + optional shape; no shape = unknown rank) or one of the
// container types ONNX allows (sequence, optional, map, sparse tensor) around an element type.
struct Type {
  enum class Kind { Unknown, Tensor, Sequence, Optional, Map, SparseTensor };
  Kind kind = Kind::Unknown;
  DType dtype = DType::Undefined;   // Tensor/SparseTensor element type; Map value is `elem`
  std::optional<Shape> shape;       // Tensor/SparseTensor; nullopt = rank unknown
  DType key_type = DType::Undefined;  // Map only
  std::shared_ptr<Type> elem;       // Sequence/Optional/Map element type

  static Type tensor(DType dt, std::optional<Shape> shape = std::nullopt);
  static Type container(Kind k, Type elem);
  bool is_tensor() const { return kind == Kind::Tensor; }
  bool has_rank() const { return is_tensor() && shape.has_value(); }
  int64_t rank() const { return shape ? static_cast<int64_t>(shape->size()) : -1; }
  std::string str() const;  // "f32[batch,seq,64]", "f32[?r]" (unknown rank), "seq(i64[3])"
  bool operator==(const Type& o) const;
};

struct Use {
  Node* node;
  int input_index;
};

class Value {
 public:
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  const Type& type() const { return type_; }
  Type& mutable_type() { return type_; }
  void set_type(Type t) { type_ = std::move(t); }
  // The type of an intermediate value as the model's value_info declared it: an annotation, not a
  // contract. Shape inference checks it against what the producer computes; on a conflict the
  // computed type wins with a warning (ir/infer/infer.h). Cleared once inference has seen the value.
  bool type_is_annotation() const { return type_annotation_; }
  void set_type_is_annotation(bool a) { type_annotation_ = a; }
  DType dtype() const { return type_.dtype; }
  const std::optional<Shape>& shape() const { return type_.shape; }

  Node* producer() const { return producer_; }
  int producer_output() const { return producer_output_; }
  Graph* graph() const { return graph_; }
  const std::vector<Use>& uses() const { return uses_; }
  bool is_graph_input() const { return is_input_; }
  bool is_graph_output() const;
  // Initializers and values folded to constants carry their data.
  bool is_constant() const { return constant_.has_value(); }
  const Tensor& constant() const { return *constant_; }
  void set_constant(Tensor t) { constant_ = std::move(t); }
  const std::string& doc_string() const { return doc_; }
  void set_doc_string(std::string d) { doc_ = std::move(d); }

 private:
  friend class Graph;
  friend class Node;
  std::string name_;
  Type type_;
  Node* producer_ = nullptr;
  int producer_output_ = -1;
  Graph* graph_ = nullptr;
  std::vector<Use> uses_;
  bool is_input_ = false;
  bool type_annotation_ = false;
  std::optional<Tensor> constant_;
  std::string doc_;
};

struct Attribute {
  enum class Kind { Undefined, Float, Int, String, Tensor, Graph, Floats, Ints, Strings, Tensors, Graphs,
                    SparseTensor, SparseTensors, TypeProto, TypeProtos };
  std::string name;
  Kind kind = Kind::Undefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  // Kinds the IR does not model (sparse tensors, type protos) keep their serialized ONNX bytes so a
  // round trip preserves them.
  std::vector<std::string> opaque;
  std::string ref_attr_name;  // set inside ONNX functions
  std::string doc_string;
};

class Node {
 public:
  const std::string& op_type() const { return op_type_; }
  const std::string& domain() const { return domain_; }  // "" is the default ONNX domain
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  const std::string& doc_string() const { return doc_; }
  void set_doc_string(std::string d) { doc_ = std::move(d); }
  Graph* graph() const { return graph_; }

  // Inputs may be null: an omitted optional input (ONNX "").
  const std::vector<Value*>& inputs() const { return inputs_; }
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  size_t num_inputs() const { return inputs_.size(); }
  void set_input(size_t i, Value* v);
  void add_input(Value* v);
  void remove_trailing_inputs(size_t keep);  // drop inputs from index `keep` on
  // Outputs may be null: an omitted optional output.
  const std::vector<Value*>& outputs() const { return outputs_; }
  Value* output(size_t i = 0) const { return i < outputs_.size() ? outputs_[i] : nullptr; }
  size_t num_outputs() const { return outputs_.size(); }

  const std::vector<Attribute>& attributes() const { return attrs_; }
  std::vector<Attribute>& mutable_attributes() { return attrs_; }
  const Attribute* attr(const std::string& name) const;
  bool has_attr(const std::string& name) const { return attr(name) != nullptr; }
  int64_t attr_int(const std::string& name, int64_t def) const;
  float attr_float(const std::string& name, float def) const;
  std::string attr_string(const std::string& name, const std::string& def) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> def = {}) const;
  std::vector<float> attr_floats(const std::string& name, std::vector<float> def = {}) const;
  void set_attr(Attribute a);  // replaces an attribute of the same name
  void set_attr_int(const std::string& name, int64_t v);
  void set_attr_float(const std::string& name, float v);
  void set_attr_ints(const std::string& name, std::vector<int64_t> v);
  void set_attr_string(const std::string& name, std::string v);
  void remove_attr(const std::string& name);
  // Subgraphs held by Graph/Graphs attributes.
  std::vector<Graph*> subgraphs() const;

  // "Add 'node_name'" or "Add (#12)" when unnamed: for messages.
  std::string describe() const;

 private:
  friend class Graph;
  std::string op_type_, domain_, name_, doc_;
  Graph* graph_ = nullptr;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::vector<Attribute> attrs_;
  std::list<std::unique_ptr<Node>>::iterator pos_;  // where the owning graph keeps this node
};

class Graph {
 public:
  explicit Graph(std::string name = "main", Graph* parent = nullptr) : name_(std::move(name)), parent_(parent) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph();

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  const std::string& doc_string() const { return doc_; }
  void set_doc_string(std::string d) { doc_ = std::move(d); }
  Graph* parent() const { return parent_; }
  void set_parent(Graph* p) { parent_ = p; }

  // --- values ---
  Value* add_input(const std::string& name, Type type);
  // A named constant (ONNX initializer). `also_input` lists it among the inputs too (IR < 4 models
  // do that: a default the caller may override).
  Value* add_initializer(const std::string& name, Tensor t, bool also_input = false);
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& initializers() const { return initializers_; }
  void remove_initializer(Value* v);  // must have no uses
  const std::vector<Value*>& outputs() const { return outputs_; }
  void add_output(Value* v) { outputs_.push_back(v); }
  void set_output(size_t i, Value* v) { outputs_.at(i) = v; }
  void clear_outputs() { outputs_.clear(); }
  // Values that describe intermediate types without a producer here (ONNX value_info), by name.
  std::map<std::string, Type>& value_info() { return value_info_; }
  const std::map<std::string, Type>& value_info() const { return value_info_; }

  // --- nodes ---
  // Appends a node; creates its outputs with the given names ("" = omitted optional output) and
  // unknown types.
  Node* add_node(const std::string& op_type, const std::vector<Value*>& inputs,
                 const std::vector<std::string>& output_names, const std::string& domain = "");
  // Same, inserted just before `pos` (keeps topological order when rewriting).
  Node* insert_node_before(Node* pos, const std::string& op_type, const std::vector<Value*>& inputs,
                           const std::vector<std::string>& output_names, const std::string& domain = "");
  // Removes a node whose outputs have no uses (and are not graph outputs).
  void remove_node(Node* n);
  std::vector<Node*> nodes() const;  // topological order
  size_t num_nodes() const { return nodes_.size(); }
  // Redirects every use of `from` (node inputs here and in subgraphs, graph outputs) to `to`.
  void replace_all_uses(Value* from, Value* to);
  // Re-orders nodes topologically; throws UserError naming a node on a cycle.
  void topological_sort();

  // A fresh value name, unique within this graph and its parents: "<hint>", "<hint>_1", ...
  std::string unique_name(const std::string& hint);
  // Finds a value visible here (this graph or an enclosing one) by name.
  Value* find_value(const std::string& name) const;
  // Every value owned by this graph (inputs, initializers, node outputs).
  std::vector<Value*> values() const;

 private:
  Value* new_value(const std::string& name);
  std::string name_, doc_;
  Graph* parent_ = nullptr;
  std::list<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::map<std::string, Value*> by_name_;
  std::vector<Value*> inputs_, initializers_, outputs_;
  std::map<std::string, Type> value_info_;
  std::map<std::string, int> name_counters_;
};

struct OpsetImport {
  std::string domain;  // "" or "ai.onnx" for the default domain
  int64_t version;
};

class Model {
 public:
  int64_t ir_version = 8;
  std::vector<OpsetImport> opset_imports;
  std::string producer_name, producer_version, domain, doc_string;
  int64_t model_version = 0;
  std::vector<std::pair<std::string, std::string>> metadata_props;
  // ONNX model-local functions, kept as serialized FunctionProto bytes for round trips.
  std::vector<std::string> functions;
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  std::string source_path;  // the file it came from, for messages

  // Opset version of a domain ("" and "ai.onnx" are the same); 0 if not imported.
  int64_t opset(const std::string& domain = "") const;
};

}  // namespace onnxc::ir
