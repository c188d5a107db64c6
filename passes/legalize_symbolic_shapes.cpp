// legalize_symbolic_shapes: onnxc.SymbolicShape -> standard ONNX shape arithmetic, so the model
// `onnxc optimize` writes loads in any ONNX runtime. Each symbol is read back from the shape of an
// input that carries it; the dim expressions become Add/Mul/Div/Mod/Min/Max on i64[1] tensors.
//
//   %s = onnxc.SymbolicShape(%x) {dims=["batch", "4*seq", "64"]}
//     ==>  %sh = Shape(%x)   %b = Gather(%sh, [0])   %q = Gather(%sh, [1])
//          %s = Concat(%b, Mul([4], %q), [64]) {axis=0}
#include "passes/legalize_symbolic_shapes.h"

#include "ir/error.h"
#include "ir/eval/symbolic_shape.h"
#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

struct Builder {
  ir::Graph& g;
  ir::Node& at;  // new nodes go before it
  std::map<std::string, ir::Value*> symbols;

  ir::Value* node(const std::string& op, std::vector<ir::Value*> in) {
    ir::Node* n = g.insert_node_before(&at, op, in, {g.unique_name(at.output(0)->name() + "_" + op)});
    n->output(0)->set_type(ir::Type::tensor(ir::DType::Int64, ir::Shape{1}));
    return n->output(0);
  }
  ir::Value* constant(int64_t v) { return g.add_initializer(g.unique_name("dim_" + std::to_string(v)), i64_tensor({v})); }

  // The symbol as an i64[1]: Gather(Shape(input), [a]) of an input whose dim a is exactly it
  // (Gather rather than Shape's start/end, which would need opset 15).
  ir::Value* symbol(const std::string& name) {
    auto it = symbols.find(name);
    if (it != symbols.end()) return it->second;
    for (ir::Value* in : at.inputs()) {
      if (!in || !in->shape()) continue;
      for (size_t a = 0; a < in->shape()->size(); ++a) {
        const ir::Dim& d = (*in->shape())[a];
        if (!d.is_symbol() || d.name() != name) continue;
        ir::Node* s = g.insert_node_before(&at, "Shape", {in}, {g.unique_name(in->name() + "_shape")});
        s->output(0)->set_type(ir::Type::tensor(ir::DType::Int64, ir::Shape{static_cast<int64_t>(in->shape()->size())}));
        return symbols[name] = node("Gather", {s->output(0), constant(static_cast<int64_t>(a))});
      }
    }
    internal_error << at.describe() << ": no input carries the symbol '" << name << "'";
    return nullptr;
  }

  ir::Value* fold(const std::string& op, const std::vector<ir::Dim>& operands) {
    ir::Value* acc = dim(operands.at(0));
    for (size_t i = 1; i < operands.size(); ++i) acc = node(op, {acc, dim(operands[i])});
    return acc;
  }

  ir::Value* dim(const ir::Dim& d) {
    using K = ir::Dim::Kind;
    switch (d.kind()) {
      case K::Const: return constant(d.value());
      case K::Sym: return symbol(d.name());
      case K::Add: return fold("Add", d.operands());
      case K::Mul: return fold("Mul", d.operands());
      case K::FloorDiv: return fold("Div", d.operands());  // dims are >= 0: truncation is floor
      case K::Mod: return fold("Mod", d.operands());
      case K::Min: return fold("Min", d.operands());
      case K::Max: return fold("Max", d.operands());
      case K::CeilDiv: {  // (a + b - 1) / b
        ir::Value* b = dim(d.operands().at(1));
        ir::Value* num = node("Sub", {node("Add", {dim(d.operands().at(0)), b}), constant(1)});
        return node("Div", {num, b});
      }
    }
    internal_error << "unknown dim kind in " << d.str();
    return nullptr;
  }
};

bool legalize_graph(ir::Graph& g) {
  bool changed = false;
  for (ir::Node* n : g.nodes()) {
    for (ir::Graph* sg : n->subgraphs()) changed |= legalize_graph(*sg);
    if (!ir::is_symbolic_shape(*n)) continue;
    Builder b{g, *n, {}};
    std::vector<ir::Value*> parts;
    for (const ir::Dim& d : ir::symbolic_shape_dims(*n)) parts.push_back(b.dim(d));
    // The last node takes the SymbolicShape's name and type (replace_node).
    if (ir::symbolic_shape_is_scalar(*n)) {
      replace_node(*n, "Reshape", {parts.at(0), g.add_initializer(g.unique_name("scalar_shape"), i64_tensor({}))});
    } else if (parts.size() == 1) {
      replace_node(*n, "Identity", {parts[0]});
    } else {
      replace_node(*n, "Concat", parts)->set_attr_int("axis", 0);
    }
    changed = true;
  }
  return changed;
}

}  // namespace

bool legalize_symbolic_shapes(ir::Model& m) { return legalize_graph(*m.graph); }

}  // namespace onnxc::passes
