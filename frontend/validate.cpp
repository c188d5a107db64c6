// The validation layer (see validate.h): opsets first, then every node of every graph against its
// ONNX schema, then declared shapes.
#include "frontend/validate.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <map>

#include "frontend/attribute_type.h"
#include "frontend/newer_schemas.h"
#include "ir/error.h"

namespace onnxc::frontend {
namespace {

using A = onnx::AttributeProto;

std::string norm_domain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

const char* type_name(A::AttributeType t) {
  switch (t) {
    case A::FLOAT: return "FLOAT";
    case A::INT: return "INT";
    case A::STRING: return "STRING";
    case A::TENSOR: return "TENSOR";
    case A::GRAPH: return "GRAPH";
    case A::SPARSE_TENSOR: return "SPARSE_TENSOR";
    case A::TYPE_PROTO: return "TYPE_PROTO";
    case A::FLOATS: return "FLOATS";
    case A::INTS: return "INTS";
    case A::STRINGS: return "STRINGS";
    case A::TENSORS: return "TENSORS";
    case A::GRAPHS: return "GRAPHS";
    case A::SPARSE_TENSORS: return "SPARSE_TENSORS";
    case A::TYPE_PROTOS: return "TYPE_PROTOS";
    default: return "UNDEFINED";
  }
}

// The kind of value an attribute holds: its declared type, else the field that is set (old models).
A::AttributeType held_type(const A& a) {
  if (a.has_type() && a.type() != A::UNDEFINED) return a.type();
  return deduce_attribute_type(a);
}

// A declared type says it holds a scalar but the value sits in another field (`axis` typed INT
// with only `s` set): the importer would read a default 0, so this counts as the wrong type too.
bool value_matches_declared(const A& a) {
  if (!a.has_type()) return true;
  switch (a.type()) {
    case A::FLOAT: return !a.has_i() && !a.has_s();
    case A::INT: return !a.has_f() && !a.has_s();
    case A::STRING: return !a.has_f() && !a.has_i();
    default: return true;
  }
}

class Validator {
 public:
  explicit Validator(const std::string& file) : file_(file) {}

  void run(const onnx::ModelProto& m) {
    check_opsets(m);
    check_graph(m.graph());
  }

 private:
  void check_opsets(const onnx::ModelProto& m) {
    user_check(m.opset_import_size() > 0)
        << file_ << ": the model has no opset_import, so the meaning of its ops is undefined "
        << "(an ONNX model must name the operator set versions it uses)";
    const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    for (const auto& o : m.opset_import()) {
      std::string d = norm_domain(o.domain());
      std::string shown = d.empty() ? "ai.onnx" : d;
      user_check(opsets_.emplace(d, o.version()).second)
          << file_ << ": opset_import lists domain '" << shown << "' twice";
      user_check(o.version() >= 1) << file_ << ": opset_import gives domain '" << shown << "' version "
                                   << o.version() << "; versions start at 1";
      int64_t newest = d.empty() ? kNewestOpset : 0;
      if (!d.empty() && ranges.count(d)) newest = ranges.at(d).second;
      user_check(newest == 0 || o.version() <= newest)
          << file_ << ": opset_import gives domain '" << shown << "' version " << o.version()
          << "; onnxc knows versions 1 to " << newest;
    }
  }

  std::string describe(const onnx::NodeProto& n, int64_t opset) const {
    std::string d = norm_domain(n.domain());
    return file_ + ": " + (d.empty() ? "" : d + ".") + n.op_type() + " node" +
           (n.name().empty() ? "" : " '" + n.name() + "'") + " (opset " + std::to_string(opset) + ")";
  }

  void check_graph(const onnx::GraphProto& g) {
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
      for (const auto& vi : *list) check_dims(vi, g);
    for (const auto& n : g.node()) check_node(n);
  }

  void check_dims(const onnx::ValueInfoProto& vi, const onnx::GraphProto& g) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
    const auto& dims = vi.type().tensor_type().shape().dim();
    for (int i = 0; i < dims.size(); ++i) {
      user_check(!dims[i].has_dim_value() || dims[i].dim_value() >= 0)
          << file_ << ": value '" << vi.name() << "' in graph '" << g.name() << "' declares dim " << i << " as "
          << dims[i].dim_value() << "; dims must be >= 0 (or a name for a dynamic dim)";
    }
  }

  void check_node(const onnx::NodeProto& n) {
    std::string d = norm_domain(n.domain());
    auto it = opsets_.find(d);
    user_check(it != opsets_.end()) << file_ << ": " << n.op_type() << " node"
                                    << (n.name().empty() ? "" : " '" + n.name() + "'") << " is of domain '"
                                    << (d.empty() ? "ai.onnx" : d) << "', which the model's opset_import does not list";
    int64_t opset = it->second;
    const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    auto range = ranges.find(d.empty() ? onnx::ONNX_DOMAIN : d);
    bool known = range != ranges.end() && opset <= range->second.second;
    const onnx::OpSchema* schema =
        known ? onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset), d) : nullptr;
    if (schema && !schema->Deprecated()) check_against(n, facts(*schema), describe(n, opset));
    if (!known && d.empty() && range != ranges.end()) {
      // An ai.onnx opset newer than the library: the op's schema from the generated table when it
      // changed after the library's newest opset, else the library's newest (the op is unchanged).
      if (const SchemaFacts* newer = find_newer_schema(n.op_type(), opset)) {
        check_against(n, *newer, describe(n, opset));
      } else if (const onnx::OpSchema* old = onnx::OpSchemaRegistry::Schema(n.op_type(), range->second.second, d);
                 old && !old->Deprecated()) {
        check_against(n, facts(*old), describe(n, opset));
      }
    }
    for (const auto& a : n.attribute()) {
      if (held_type(a) == A::GRAPH) check_graph(a.g());
      for (const auto& sg : a.graphs()) check_graph(sg);
    }
  }

  static SchemaFacts facts(const onnx::OpSchema& s) {
    SchemaFacts f{s.Name(), s.SinceVersion(), s.min_input(), s.max_input(), s.min_output(), s.max_output(), {}, {}};
    for (const auto& p : s.inputs()) {
      auto o = p.GetOption();
      f.inputs.push_back({p.GetName(), o == onnx::OpSchema::FormalParameterOption::Single     ? 'S'
                                       : o == onnx::OpSchema::FormalParameterOption::Optional ? 'O'
                                                                                              : 'V'});
    }
    for (const auto& [name, a] : s.attributes()) f.attrs.push_back({name, a.type, a.required});
    return f;
  }

  void check_against(const onnx::NodeProto& n, const SchemaFacts& s, const std::string& what) {
    auto range = [](int lo, int hi) {
      return hi == std::numeric_limits<int>::max() ? "at least " + std::to_string(lo)
             : lo == hi                             ? std::to_string(lo)
                                                    : std::to_string(lo) + " to " + std::to_string(hi);
    };
    user_check(n.input_size() >= s.min_in && n.input_size() <= s.max_in)
        << what << ": has " << n.input_size() << " input" << (n.input_size() == 1 ? "" : "s") << "; "
        << n.op_type() << " takes " << range(s.min_in, s.max_in);
    user_check(n.output_size() >= s.min_out && n.output_size() <= s.max_out)
        << what << ": has " << n.output_size() << " output" << (n.output_size() == 1 ? "" : "s") << "; "
        << n.op_type() << " gives " << range(s.min_out, s.max_out);
    for (int i = 0; i < n.input_size() && static_cast<size_t>(i) < s.inputs.size(); ++i) {
      const SchemaFacts::Input& formal = s.inputs[static_cast<size_t>(i)];
      user_check(!n.input(i).empty() || formal.option != 'S')
          << what << ": input " << i << " ('" << formal.name << "') is required but left empty";
    }
    for (const auto& a : n.attribute()) {
      if (!a.ref_attr_name().empty()) continue;  // bound inside a function body
      auto it = std::find_if(s.attrs.begin(), s.attrs.end(), [&](const SchemaFacts::Attr& f) { return f.name == a.name(); });
      if (it == s.attrs.end()) continue;  // unknown names are ignored, as ONNX Runtime does
      A::AttributeType want = it->type, got = held_type(a);
      user_check(got == want && value_matches_declared(a))
          << what << ": attribute '" << a.name() << "' is " << (got == A::UNDEFINED ? "empty" : type_name(got))
          << (value_matches_declared(a) ? "" : " but holds a value of another type") << "; the schema wants "
          << type_name(want);
    }
    for (const SchemaFacts::Attr& attr : s.attrs) {
      if (!attr.required) continue;
      bool present = false;
      for (const auto& a : n.attribute()) present = present || a.name() == attr.name;
      user_check(present) << what << ": required attribute '" << attr.name << "' is missing";
    }
  }

  std::string file_;
  std::map<std::string, int64_t> opsets_;
};

}  // namespace

void validate_model(const onnx::ModelProto& model, const std::string& file) { Validator(file).run(model); }

}  // namespace onnxc::frontend
