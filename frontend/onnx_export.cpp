// ir::Model -> ModelProto. The inverse of the importer: node outputs with a known type are written
// as value_info, symbolic dims as dim_param, constants as raw_data (or, for large models, into one
// external-data file beside the model).
#include "frontend/onnx_export.h"

#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cerrno>
#include <set>

#include "frontend/proto_file.h"
#include "frontend/tensor_proto.h"
#include "ir/error.h"

namespace onnxc::frontend {
namespace {

using AttrKind = ir::Attribute::Kind;

// Collects the tensors that go to the external-data file and where each lands in it.
struct ExternalWriter {
  std::string location;
  size_t threshold;
  uint64_t size = 0;
  std::vector<std::pair<ir::Tensor, uint64_t>> pieces;

  bool take(const ir::Tensor& t, onnx::TensorProto* p) {
    if (t.dtype() == ir::DType::String || t.nbytes() < threshold || t.empty_data()) return false;
    uint64_t offset = (size + 63) / 64 * 64;  // aligned, so the importer can map it in place
    pieces.emplace_back(t, offset);
    size = offset + t.nbytes();
    for (int64_t d : t.dims()) p->add_dims(d);
    p->set_data_type(static_cast<int32_t>(t.dtype()));
    p->set_data_location(onnx::TensorProto::EXTERNAL);
    auto entry = [&](const char* k, const std::string& v) {
      auto* e = p->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    entry("location", location);
    entry("offset", std::to_string(offset));
    entry("length", std::to_string(t.nbytes()));
    return true;
  }

  bool write(int fd) const {
    uint64_t at = 0;
    static const char zeros[64] = {};
    auto put = [&](const void* data, size_t n) {
      const char* p = static_cast<const char*>(data);
      while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= static_cast<size_t>(w);
        at += static_cast<uint64_t>(w);
      }
      return true;
    };
    for (const auto& [t, offset] : pieces)
      if (!put(zeros, offset - at) || !put(t.raw(), t.nbytes())) return false;
    return true;
  }
};

void collect_domains(const ir::Graph& g, std::set<std::string>& out) {
  for (const ir::Node* n : g.nodes()) {
    if (!n->domain().empty() && n->domain() != "ai.onnx") out.insert(n->domain());
    for (const ir::Graph* sg : n->subgraphs()) collect_domains(*sg, out);
  }
}

class Exporter {
 public:
  explicit Exporter(ExternalWriter* ext) : ext_(ext) {}

  void model(const ir::Model& m, onnx::ModelProto* p) {
    p->set_ir_version(m.ir_version);
    for (const auto& o : m.opset_imports) {
      auto* op = p->add_opset_import();
      op->set_domain(o.domain);
      op->set_version(o.version);
    }
    // Passes may introduce ops of a domain the source model never imported (onnxc.*); a model
    // that uses a domain must import it, or checkers and other runtimes reject the file.
    std::set<std::string> used;
    collect_domains(*m.graph, used);
    for (const auto& d : used) {
      if (m.opset(d) != 0) continue;
      auto* op = p->add_opset_import();
      op->set_domain(d);
      op->set_version(1);
    }
    if (!m.producer_name.empty()) p->set_producer_name(m.producer_name);
    if (!m.producer_version.empty()) p->set_producer_version(m.producer_version);
    if (!m.domain.empty()) p->set_domain(m.domain);
    if (m.model_version) p->set_model_version(m.model_version);
    if (!m.doc_string.empty()) p->set_doc_string(m.doc_string);
    for (const auto& [k, v] : m.metadata_props) {
      auto* e = p->add_metadata_props();
      e->set_key(k);
      e->set_value(v);
    }
    for (const auto& f : m.functions)
      internal_check(p->add_functions()->ParseFromString(f)) << "a model-local function does not parse";
    graph(*m.graph, p->mutable_graph());
  }

 private:
  void tensor(const ir::Tensor& t, const std::string& name, onnx::TensorProto* p) {
    if (!name.empty()) p->set_name(name);
    if (ext_ && ext_->take(t, p)) return;
    tensor_to_proto(t, p);
  }

  static void value_info(const ir::Value* v, onnx::ValueInfoProto* p) {
    if (!v) return;
    p->set_name(v->name());
    type_to_proto(v->type(), p->mutable_type());
    if (p->type().value_case() == onnx::TypeProto::VALUE_NOT_SET) p->clear_type();
    if (!v->doc_string().empty()) p->set_doc_string(v->doc_string());
  }

  void graph(const ir::Graph& g, onnx::GraphProto* p) {
    p->set_name(g.name());
    if (!g.doc_string().empty()) p->set_doc_string(g.doc_string());
    for (const ir::Value* v : g.inputs()) value_info(v, p->add_input());
    for (const ir::Value* v : g.initializers()) tensor(v->constant(), v->name(), p->add_initializer());
    std::set<std::string> typed;  // names whose type is written as an output or value_info
    for (const ir::Value* v : g.outputs()) {
      value_info(v, p->add_output());
      if (v) typed.insert(v->name());
    }
    for (const ir::Node* n : g.nodes()) {
      node(*n, p->add_node());
      for (const ir::Value* o : n->outputs()) {
        if (!o || typed.count(o->name())) continue;
        if (o->type().kind == ir::Type::Kind::Unknown && o->doc_string().empty()) continue;
        value_info(o, p->add_value_info());
        typed.insert(o->name());
      }
    }
    for (const auto& [name, type] : g.value_info()) {
      if (typed.count(name)) continue;
      auto* vi = p->add_value_info();
      vi->set_name(name);
      type_to_proto(type, vi->mutable_type());
    }
  }

  void node(const ir::Node& n, onnx::NodeProto* p) {
    for (const ir::Value* v : n.inputs()) p->add_input(v ? v->name() : "");
    for (const ir::Value* v : n.outputs()) p->add_output(v ? v->name() : "");
    if (!n.name().empty()) p->set_name(n.name());
    p->set_op_type(n.op_type());
    if (!n.domain().empty()) p->set_domain(n.domain());
    if (!n.doc_string().empty()) p->set_doc_string(n.doc_string());
    for (const auto& a : n.attributes()) attribute(a, n, p->add_attribute());
  }

  void attribute(const ir::Attribute& a, const ir::Node& n, onnx::AttributeProto* p) {
    using A = onnx::AttributeProto;
    p->set_name(a.name);
    if (!a.doc_string.empty()) p->set_doc_string(a.doc_string);
    if (!a.ref_attr_name.empty()) p->set_ref_attr_name(a.ref_attr_name);
    auto opaque = [&](auto* msg, size_t i) {
      internal_check(i < a.opaque.size() && msg->ParseFromString(a.opaque[i]))
          << "attribute '" << a.name << "' of " << n.describe() << " holds bytes that do not parse";
    };
    switch (a.kind) {
      case AttrKind::Undefined: p->set_type(A::UNDEFINED); break;
      case AttrKind::Float: p->set_type(A::FLOAT), p->set_f(a.f); break;
      case AttrKind::Int: p->set_type(A::INT), p->set_i(a.i); break;
      case AttrKind::String: p->set_type(A::STRING), p->set_s(a.s); break;
      case AttrKind::Tensor: p->set_type(A::TENSOR), tensor(a.t, "", p->mutable_t()); break;
      case AttrKind::Graph: p->set_type(A::GRAPH), graph(*a.g, p->mutable_g()); break;
      case AttrKind::Floats: p->set_type(A::FLOATS), p->mutable_floats()->Add(a.floats.begin(), a.floats.end()); break;
      case AttrKind::Ints: p->set_type(A::INTS), p->mutable_ints()->Add(a.ints.begin(), a.ints.end()); break;
      case AttrKind::Strings:
        p->set_type(A::STRINGS);
        for (const auto& s : a.strings) p->add_strings(s);
        break;
      case AttrKind::Tensors:
        p->set_type(A::TENSORS);
        for (const auto& t : a.tensors) tensor(t, "", p->add_tensors());
        break;
      case AttrKind::Graphs:
        p->set_type(A::GRAPHS);
        for (const auto& g : a.graphs) graph(*g, p->add_graphs());
        break;
      case AttrKind::SparseTensor: p->set_type(A::SPARSE_TENSOR), opaque(p->mutable_sparse_tensor(), 0); break;
      case AttrKind::SparseTensors:
        p->set_type(A::SPARSE_TENSORS);
        for (size_t i = 0; i < a.opaque.size(); ++i) opaque(p->add_sparse_tensors(), i);
        break;
      case AttrKind::TypeProto: p->set_type(A::TYPE_PROTO), opaque(p->mutable_tp(), 0); break;
      case AttrKind::TypeProtos:
        p->set_type(A::TYPE_PROTOS);
        for (size_t i = 0; i < a.opaque.size(); ++i) opaque(p->add_type_protos(), i);
        break;
    }
  }

  ExternalWriter* ext_;
};

std::string file_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

onnx::ModelProto export_model(const ir::Model& model) {
  onnx::ModelProto p;
  Exporter(nullptr).model(model, &p);
  return p;
}

void save_model(const ir::Model& model, const std::string& path, const ExportOptions& opt) {
  onnx::ModelProto p;
  if (!opt.external_data) {
    Exporter(nullptr).model(model, &p);
    write_proto_file(p, path);
    return;
  }
  ExternalWriter ext;
  ext.location = opt.external_data_file.empty() ? file_name(path) + ".data" : opt.external_data_file;
  ext.threshold = opt.external_data_threshold;
  user_check(ext.location.find('/') == std::string::npos && ext.location != ".." && ext.location != ".")
      << path << ": external data file name '" << ext.location << "' must be a plain file name";
  Exporter(&ext).model(model, &p);
  write_file_atomically(parent_dir(path) + "/" + ext.location, [&](int fd) { return ext.write(fd); });
  write_proto_file(p, path);
}

}  // namespace onnxc::frontend
