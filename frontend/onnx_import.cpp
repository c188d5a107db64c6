// ModelProto -> ir::Model. Each graph is imported in two passes (every node's outputs first, then
// inputs and attributes), so nodes listed out of order still connect, subgraphs can refer to any
// value of an enclosing graph, and a cycle is reported by the topological sort, not mistaken for
// a dangling input. ONNX's own shape inference then annotates the imported values.
#include "frontend/onnx_import.h"

#include "frontend/attribute_type.h"

#include <onnx/onnx_pb.h>

#include <set>

#include "frontend/onnx_inference.h"
#include "frontend/proto_file.h"
#include "frontend/tensor_proto.h"
#include "frontend/validate.h"
#include "ir/error.h"

namespace onnxc::frontend {
namespace {

using AttrKind = ir::Attribute::Kind;

onnx::AttributeProto::AttributeType type_of_attr(const onnx::AttributeProto& a) {
  return a.has_type() ? a.type() : deduce_attribute_type(a);
}

// The subgraphs an attribute holds, by the same rule the importer reads them.
std::vector<const onnx::GraphProto*> subgraphs_of(const onnx::AttributeProto& a) {
  std::vector<const onnx::GraphProto*> r;
  if (type_of_attr(a) == onnx::AttributeProto::GRAPH) r.push_back(&a.g());
  if (type_of_attr(a) == onnx::AttributeProto::GRAPHS)
    for (const auto& g : a.graphs()) r.push_back(&g);
  return r;
}

// Every dim_param of the value types declared in a graph and its subgraphs.
void collect_dim_params(const onnx::TypeProto& t, std::set<std::string>& out) {
  const onnx::TensorShapeProto* shape = t.has_tensor_type() && t.tensor_type().has_shape() ? &t.tensor_type().shape()
                                        : t.has_sparse_tensor_type() && t.sparse_tensor_type().has_shape()
                                            ? &t.sparse_tensor_type().shape()
                                            : nullptr;
  if (shape)
    for (const auto& d : shape->dim())
      if (d.has_dim_param()) out.insert(d.dim_param());
  if (t.has_sequence_type()) collect_dim_params(t.sequence_type().elem_type(), out);
  if (t.has_optional_type()) collect_dim_params(t.optional_type().elem_type(), out);
  if (t.has_map_type()) collect_dim_params(t.map_type().value_type(), out);
}

void collect_dim_params(const onnx::GraphProto& g, std::set<std::string>& out) {
  for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
    for (const auto& vi : *list) collect_dim_params(vi.type(), out);
  for (const auto& n : g.node())
    for (const auto& a : n.attribute())
      for (const onnx::GraphProto* sg : subgraphs_of(a)) collect_dim_params(*sg, out);
}

// ONNX's inference names the dims it cannot tell "unk__0", "unk__1"...: free symbols no input
// binds. They import as unknown dims, one per name so that equal names stay equal dims.
std::map<std::string, ir::Dim> invented_dims(const onnx::GraphProto& original, const onnx::GraphProto& inferred) {
  std::set<std::string> before, after;
  collect_dim_params(original, before);
  collect_dim_params(inferred, after);
  std::map<std::string, ir::Dim> r;
  for (const auto& p : after)
    if (!before.count(p) && p.rfind("unk__", 0) == 0) r.emplace(p, ir::Dim::unknown());
  return r;
}

class Importer {
 public:
  // `proto_owner`, when set, keeps the proto being imported alive: tensors then view its bytes.
  Importer(std::string file, std::string base_dir, const ImportOptions& opt,
           std::shared_ptr<const void> proto_owner = nullptr)
      : file_(std::move(file)), ext_(file_, std::move(base_dir), opt.allow_external_paths), opt_(opt) {
    src_.file = file_;
    src_.external = opt.load_external_data ? &ext_ : nullptr;
    src_.proto_owner = std::move(proto_owner);
  }

  ir::Model import(const onnx::ModelProto& p) {
    user_check(p.has_graph()) << file_ << ": is not an ONNX model: it has no graph";
    validate_model(p, file_);
    ir::Model m;
    m.source_path = file_;
    m.ir_version = p.ir_version();
    for (const auto& o : p.opset_import()) m.opset_imports.push_back({o.domain(), o.version()});
    m.producer_name = p.producer_name();
    m.producer_version = p.producer_version();
    m.domain = p.domain();
    m.model_version = p.model_version();
    m.doc_string = p.doc_string();
    for (const auto& kv : p.metadata_props()) m.metadata_props.emplace_back(kv.key(), kv.value());
    for (const auto& f : p.functions()) m.functions.push_back(f.SerializeAsString());
    m.graph->set_name(p.graph().name());
    import_graph(p.graph(), *m.graph);
    if (opt_.onnx_shape_inference) annotate_with_onnx_inference(p);
    return m;
  }

 private:
  // Throws if `name` already names a value of `g` itself (outer-scope names may be shadowed).
  void check_new_name(ir::Graph& g, const std::string& name, const std::string& by) {
    ir::Value* v = g.find_value(name);
    if (!v || v->graph() != &g) return;
    std::string first = v->producer() ? v->producer()->describe()
                        : v->is_graph_input() ? std::string("a graph input")
                                              : std::string("an initializer");
    user_error << file_ << ": value '" << name << "' is defined twice in graph '" << g.name() << "': by " << first
               << " and by " << by;
  }

  void import_graph(const onnx::GraphProto& gp, ir::Graph& g) {
    graphs_.push_back(&g);
    g.set_doc_string(gp.doc_string());
    // Initializers by name; those also listed as inputs become inputs with a default (IR < 4).
    std::map<std::string, const onnx::TensorProto*> inits;
    std::map<std::string, const onnx::SparseTensorProto*> sparse;
    for (const auto& t : gp.initializer()) {
      user_check(!t.name().empty()) << file_ << ": graph '" << g.name() << "' has an initializer without a name";
      user_check(inits.emplace(t.name(), &t).second)
          << file_ << ": value '" << t.name() << "' is defined twice in graph '" << g.name() << "': two initializers";
    }
    for (const auto& s : gp.sparse_initializer()) {
      const std::string& name = s.values().name();
      user_check(!name.empty() && !inits.count(name) && sparse.emplace(name, &s).second)
          << file_ << ": sparse initializer '" << name << "' in graph '" << g.name() << "' is unnamed or defined twice";
    }
    auto init_tensor = [&](const std::string& name) {
      std::string what = "initializer '" + name + "'";
      auto it = inits.find(name);
      return it != inits.end() ? tensor_from_proto(*it->second, what, src_)
                               : tensor_from_sparse_proto(*sparse.at(name), what, src_);
    };
    for (const auto& vi : gp.input()) {
      user_check(!vi.name().empty()) << file_ << ": graph '" << g.name() << "' has an input without a name";
      check_new_name(g, vi.name(), "a graph input");
      ir::Value* v = inits.count(vi.name()) || sparse.count(vi.name())
                         ? g.add_initializer(vi.name(), init_tensor(vi.name()), /*also_input=*/true)
                         : g.add_input(vi.name(), type_of(vi));
      v->set_doc_string(vi.doc_string());
    }
    auto add_initializers = [&](const auto& list, auto name_of) {
      for (const auto& t : list) {
        const std::string& name = name_of(t);
        ir::Value* v = g.find_value(name);
        if (v && v->graph() == &g && v->is_graph_input()) continue;  // added with the inputs
        g.add_initializer(name, init_tensor(name));
      }
    };
    add_initializers(gp.initializer(), [](const onnx::TensorProto& t) -> const std::string& { return t.name(); });
    add_initializers(gp.sparse_initializer(),
                     [](const onnx::SparseTensorProto& s) -> const std::string& { return s.values().name(); });

    std::vector<ir::Node*> nodes;
    for (const auto& np : gp.node()) nodes.push_back(create_node(np, g));
    for (int i = 0; i < gp.node_size(); ++i) connect_node(gp.node(i), *nodes[static_cast<size_t>(i)], g);

    for (const auto& vi : gp.value_info()) {
      if (ir::Value* v = own_node_output(g, vi.name())) {
        if (vi.has_type()) {
          v->set_type(type_of(vi));
          v->set_type_is_annotation(true);  // checked, and overridden with a warning, by inference
        }
        if (!vi.doc_string().empty()) v->set_doc_string(vi.doc_string());
      } else if (vi.has_type()) {
        g.value_info()[vi.name()] = type_of(vi);
      }
    }
    for (const auto& vi : gp.output()) {
      ir::Value* v = vi.name().empty() ? nullptr : g.find_value(vi.name());
      user_check(v) << file_ << ": graph '" << g.name() << "' output '" << vi.name()
                    << "' is not defined by any input, initializer or node";
      g.add_output(v);
      if (vi.has_type() && own_node_output(g, vi.name())) v->set_type(type_of(vi));
      if (!vi.doc_string().empty()) v->set_doc_string(vi.doc_string());
    }
    try {
      g.topological_sort();
    } catch (const UserError& e) {
      user_error << file_ << ": " << e.what();
    }
  }

  ir::Node* create_node(const onnx::NodeProto& np, ir::Graph& g) {
    std::string desc = np.op_type() + (np.name().empty() ? " node" : " node '" + np.name() + "'");
    user_check(!np.op_type().empty()) << file_ << ": a node in graph '" << g.name() << "' has no op_type";
    std::set<std::string> seen;
    for (const auto& o : np.output()) {
      if (o.empty()) continue;
      user_check(seen.insert(o).second) << file_ << ": " << desc << " lists output '" << o << "' twice";
      check_new_name(g, o, desc);
    }
    ir::Node* n = g.add_node(np.op_type(), {}, {np.output().begin(), np.output().end()}, np.domain());
    n->set_name(np.name());
    n->set_doc_string(np.doc_string());
    return n;
  }

  void connect_node(const onnx::NodeProto& np, ir::Node& n, ir::Graph& g) {
    for (const auto& name : np.input()) {
      ir::Value* v = name.empty() ? nullptr : g.find_value(name);
      user_check(name.empty() || v) << file_ << ": " << n.describe() << " uses '" << name
                                    << "', which is not defined (a dangling input: no graph input, initializer "
                                       "or node output of that name in its graph or an enclosing one)";
      n.add_input(v);
    }
    for (const auto& a : np.attribute()) n.mutable_attributes().push_back(import_attr(a, n, g));
  }

  ir::Attribute import_attr(const onnx::AttributeProto& ap, const ir::Node& n, ir::Graph& g) {
    using A = onnx::AttributeProto;
    ir::Attribute a;
    a.name = ap.name();
    a.doc_string = ap.doc_string();
    a.ref_attr_name = ap.ref_attr_name();
    std::string what = "attribute '" + ap.name() + "' of " + n.describe();
    auto subgraph = [&](const onnx::GraphProto& sg) {
      auto r = std::make_shared<ir::Graph>(sg.name(), &g);
      import_graph(sg, *r);
      return r;
    };
    A::AttributeType type = type_of_attr(ap);
    switch (type) {
      case A::UNDEFINED:
        user_check(!ap.ref_attr_name().empty()) << file_ << ": " << what << " has no value";
        break;
      case A::FLOAT: a.kind = AttrKind::Float, a.f = ap.f(); break;
      case A::INT: a.kind = AttrKind::Int, a.i = ap.i(); break;
      case A::STRING: a.kind = AttrKind::String, a.s = ap.s(); break;
      case A::TENSOR: a.kind = AttrKind::Tensor, a.t = tensor_from_proto(ap.t(), what, src_); break;
      case A::GRAPH: a.kind = AttrKind::Graph, a.g = subgraph(ap.g()); break;
      case A::FLOATS: a.kind = AttrKind::Floats, a.floats.assign(ap.floats().begin(), ap.floats().end()); break;
      case A::INTS: a.kind = AttrKind::Ints, a.ints.assign(ap.ints().begin(), ap.ints().end()); break;
      case A::STRINGS: a.kind = AttrKind::Strings, a.strings.assign(ap.strings().begin(), ap.strings().end()); break;
      case A::TENSORS:
        a.kind = AttrKind::Tensors;
        for (const auto& t : ap.tensors()) a.tensors.push_back(tensor_from_proto(t, what, src_));
        break;
      case A::GRAPHS:
        a.kind = AttrKind::Graphs;
        for (const auto& sg : ap.graphs()) a.graphs.push_back(subgraph(sg));
        break;
      // Kinds the IR does not model travel as serialized bytes.
      case A::SPARSE_TENSOR:
        a.kind = AttrKind::SparseTensor;
        a.opaque = {ap.sparse_tensor().SerializeAsString()};
        break;
      case A::SPARSE_TENSORS:
        a.kind = AttrKind::SparseTensors;
        for (const auto& s : ap.sparse_tensors()) a.opaque.push_back(s.SerializeAsString());
        break;
      case A::TYPE_PROTO: a.kind = AttrKind::TypeProto, a.opaque = {ap.tp().SerializeAsString()}; break;
      case A::TYPE_PROTOS:
        a.kind = AttrKind::TypeProtos;
        for (const auto& t : ap.type_protos()) a.opaque.push_back(t.SerializeAsString());
        break;
      default: user_error << file_ << ": " << what << " has unknown attribute type " << static_cast<int>(type);
    }
    return a;
  }

  ir::Type type_of(const onnx::ValueInfoProto& vi) {
    return vi.has_type() ? type_from_proto(vi.type(), "value '" + vi.name() + "'", file_) : ir::Type{};
  }

  static ir::Value* own_node_output(ir::Graph& g, const std::string& name) {
    ir::Value* v = g.find_value(name);
    return v && v->graph() == &g && v->producer() ? v : nullptr;
  }

  // Runs ONNX's shape inference on a copy and records the types it found on node outputs. Graphs
  // are paired with the imported ones by their order in a pre-order walk (inference keeps the
  // node and attribute lists as they are).
  void annotate_with_onnx_inference(const onnx::ModelProto& p) {
    std::optional<onnx::ModelProto> inferred = infer_with_onnx(p);
    size_t k = 0;
    if (!inferred || count_graphs(inferred->graph()) != graphs_.size()) return;
    invented_ = invented_dims(p.graph(), inferred->graph());
    apply_inferred(inferred->graph(), k);
  }

  static size_t count_graphs(const onnx::GraphProto& gp) {
    size_t n = 1;
    for (const auto& np : gp.node())
      for (const auto& a : np.attribute())
        for (const onnx::GraphProto* sg : subgraphs_of(a)) n += count_graphs(*sg);
    return n;
  }

  void apply_inferred(const onnx::GraphProto& gp, size_t& k) {
    ir::Graph& g = *graphs_[k++];
    auto record = [&](const onnx::ValueInfoProto& vi) {
      ir::Value* v = own_node_output(g, vi.name());
      if (!v || !vi.has_type()) return;
      try {
        v->set_type(type_from_proto(vi.type(), "value '" + vi.name() + "'", file_, &invented_));
      } catch (const UserError&) {  // a type the IR cannot hold: keep what the model said
      }
    };
    for (const auto& vi : gp.value_info()) record(vi);
    for (const auto& vi : gp.output()) record(vi);
    for (const auto& np : gp.node())
      for (const auto& a : np.attribute())
        for (const onnx::GraphProto* sg : subgraphs_of(a)) apply_inferred(*sg, k);
  }

  std::string file_;
  ExternalDataReader ext_;
  ImportOptions opt_;
  TensorSource src_;
  std::vector<ir::Graph*> graphs_;  // every imported graph, in pre-order
  std::map<std::string, ir::Dim> invented_;  // dim names ONNX's inference made up
};

}  // namespace

onnx::AttributeProto::AttributeType deduce_attribute_type(const onnx::AttributeProto& a) {
  using A = onnx::AttributeProto;
  if (a.has_f()) return A::FLOAT;
  if (a.has_i()) return A::INT;
  if (a.has_s()) return A::STRING;
  if (a.has_t()) return A::TENSOR;
  if (a.has_g()) return A::GRAPH;
  if (a.has_sparse_tensor()) return A::SPARSE_TENSOR;
  if (a.has_tp()) return A::TYPE_PROTO;
  if (a.floats_size()) return A::FLOATS;
  if (a.ints_size()) return A::INTS;
  if (a.strings_size()) return A::STRINGS;
  if (a.tensors_size()) return A::TENSORS;
  if (a.graphs_size()) return A::GRAPHS;
  if (a.sparse_tensors_size()) return A::SPARSE_TENSORS;
  if (a.type_protos_size()) return A::TYPE_PROTOS;
  return A::UNDEFINED;
}

ir::Model import_model(const onnx::ModelProto& proto, const std::string& path_for_messages,
                       const std::string& base_dir, const ImportOptions& opt) {
  return Importer(path_for_messages, base_dir, opt).import(proto);
}

ir::Model load_model(const std::string& path, const ImportOptions& opt) {
  auto proto = std::make_shared<onnx::ModelProto>();
  read_proto_file(path, *proto, kModelSchema, {7 /* graph */});
  return Importer(path, parent_dir(path), opt, proto).import(*proto);
}

ir::Model load_model_from_memory(const void* data, size_t size, const std::string& name, const ImportOptions& opt) {
  auto proto = std::make_shared<onnx::ModelProto>();
  parse_proto_bytes(static_cast<const uint8_t*>(data), size, name, *proto, kModelSchema, {7 /* graph */});
  return Importer(name, parent_dir(name), opt, proto).import(*proto);
}

}  // namespace onnxc::frontend
