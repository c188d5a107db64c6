// IR printer.
#include "ir/printer.h"

#include <cstdio>
#include <sstream>

namespace onnxc::ir {
namespace {

std::string value_ref(const Value* v) {
  if (!v) return "%\"\"";
  const std::string& n = v->name();
  bool plain = !n.empty();
  for (char c : n)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == ':' || c == '-'))
      plain = false;
  return plain ? "%" + n : "%\"" + n + "\"";
}

std::string fmt_float(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", f);
  return buf;
}

std::string quote(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    if (c == '\n') {
      r += "\\n";
      continue;
    }
    r += c;
  }
  return r + "\"";
}

void print_attr(std::ostream& os, const Attribute& a, const PrintOptions& opt, int indent);

}  // namespace

std::string tensor_summary(const Tensor& t, int max_inline) {
  std::ostringstream os;
  os << dtype_name(t.dtype()) << "[";
  for (size_t i = 0; i < t.dims().size(); ++i) os << (i ? "," : "") << t.dims()[i];
  os << "]";
  int64_t n = t.numel();
  if (t.dtype() == DType::String) {
    os << " {";
    for (int64_t i = 0; i < n && i < max_inline; ++i) os << (i ? ", " : "") << quote(t.string_data()[i]);
    if (n > max_inline) os << ", ... #" << std::hex << t.fingerprint() << std::dec;
    os << "}";
    return os.str();
  }
  if (t.empty_data() && n > 0) return os.str() + " <no data>";
  bool cplx = t.dtype() == DType::Complex64 || t.dtype() == DType::Complex128;
  if (n <= max_inline && !cplx) {
    os << " {";
    for (int64_t i = 0; i < n; ++i)
      os << (i ? ", " : "") << (dtype_is_float(t.dtype()) ? fmt_float(t.get_f64(i)) : std::to_string(t.get_i64(i)));
    os << "}";
  } else {
    os << " #" << std::hex << t.fingerprint() << std::dec;
  }
  return os.str();
}

namespace {

void print_attr(std::ostream& os, const Attribute& a, const PrintOptions& opt, int indent) {
  os << a.name << "=";
  if (!a.ref_attr_name.empty()) {
    os << "@" << a.ref_attr_name;
    return;
  }
  auto list = [&os](const auto& v, auto&& f) {
    os << "[";
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) os << ", ";
      f(v[i]);
    }
    os << "]";
  };
  switch (a.kind) {
    case Attribute::Kind::Float: os << fmt_float(a.f); break;
    case Attribute::Kind::Int: os << a.i; break;
    case Attribute::Kind::String: os << quote(a.s); break;
    case Attribute::Kind::Tensor: os << "tensor " << tensor_summary(a.t, opt.max_inline_elements); break;
    case Attribute::Kind::Graph: os << "\n"; print_graph(os, *a.g, opt, indent + 4); os << std::string(indent + 2, ' '); break;
    case Attribute::Kind::Floats: list(a.floats, [&](float f) { os << fmt_float(f); }); break;
    case Attribute::Kind::Ints: list(a.ints, [&](int64_t i) { os << i; }); break;
    case Attribute::Kind::Strings: list(a.strings, [&](const std::string& s) { os << quote(s); }); break;
    case Attribute::Kind::Tensors:
      list(a.tensors, [&](const Tensor& t) { os << tensor_summary(t, opt.max_inline_elements); });
      break;
    case Attribute::Kind::Graphs:
      os << "[\n";
      for (const auto& g : a.graphs) print_graph(os, *g, opt, indent + 4);
      os << std::string(indent + 2, ' ') << "]";
      break;
    default: {
      uint64_t h = 1469598103934665603ull;
      for (const auto& s : a.opaque)
        for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
      os << "opaque(" << a.opaque.size() << ") #" << std::hex << h << std::dec;
    }
  }
}

}  // namespace

void print_graph(std::ostream& os, const Graph& g, const PrintOptions& opt, int indent) {
  std::string pad(indent, ' ');
  os << pad << "graph " << g.name() << "(";
  const auto& ins = g.inputs();
  for (size_t i = 0; i < ins.size(); ++i)
    os << (i ? ", " : "") << value_ref(ins[i]) << ": " << ins[i]->type().str()
       << (ins[i]->is_constant() ? " = default" : "");
  os << ") {\n";
  for (const Value* v : g.initializers())
    os << pad << "  " << value_ref(v) << " = const " << tensor_summary(v->constant(), opt.max_inline_elements) << "\n";
  for (const Node* n : g.nodes()) {
    os << pad << "  ";
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      const Value* o = n->outputs()[i];
      os << (i ? ", " : "") << value_ref(o);
      if (o) os << ": " << o->type().str();
    }
    if (!n->outputs().empty()) os << " = ";
    if (!n->domain().empty()) os << n->domain() << ".";
    os << n->op_type() << "(";
    for (size_t i = 0; i < n->inputs().size(); ++i) os << (i ? ", " : "") << value_ref(n->inputs()[i]);
    os << ")";
    if (!n->attributes().empty()) {
      os << " {";
      for (size_t i = 0; i < n->attributes().size(); ++i) {
        if (i) os << ", ";
        print_attr(os, n->attributes()[i], opt, indent + 2);
      }
      os << "}";
    }
    if (!n->name().empty()) os << "  # " << n->name();
    os << "\n";
  }
  os << pad << "  return ";
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Value* o = g.outputs()[i];
    os << (i ? ", " : "") << value_ref(o) << ": " << (o ? o->type().str() : "none");
  }
  os << "\n" << pad << "}\n";
}

void print_model(std::ostream& os, const Model& m, const PrintOptions& opt) {
  os << "model ir_version=" << m.ir_version << " opset=[";
  for (size_t i = 0; i < m.opset_imports.size(); ++i)
    os << (i ? ", " : "") << (m.opset_imports[i].domain.empty() ? "ai.onnx" : m.opset_imports[i].domain) << ":"
       << m.opset_imports[i].version;
  os << "]";
  if (!m.producer_name.empty()) os << " producer=" << quote(m.producer_name + " " + m.producer_version);
  os << "\n";
  print_graph(os, *m.graph, opt);
}

std::string to_string(const Graph& g, const PrintOptions& opt) {
  std::ostringstream os;
  print_graph(os, g, opt);
  return os.str();
}

std::string to_string(const Model& m, const PrintOptions& opt) {
  std::ostringstream os;
  print_model(os, m, opt);
  return os.str();
}

}  // namespace onnxc::ir
