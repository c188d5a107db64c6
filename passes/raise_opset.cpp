// raise_opset (see canonicalize.h): moves every default-domain node to the forms of a newer opset.
// One converter per op whose inputs or meaning changed between opset 7 and kCanonicalOpset; ops
// whose definition stayed compatible need nothing. First every node is checked, so a model that
// cannot be raised is left as it was.
#include <algorithm>
#include <functional>

#include "ir/onnxc_attrs.h"
#include "ir/op_registry.h"
#include "passes/canonicalize.h"
#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

struct Step {
  ir::Node* n;
  std::function<void(ir::Node&)> convert;
};

ir::Value* add_const(ir::Node& n, ir::Tensor t, const std::string& what) {
  ir::Graph& g = *n.graph();
  std::string base = n.output(0) ? n.output(0)->name() : n.op_type();
  return g.add_initializer(g.unique_name(base + "_" + what), std::move(t));
}

// Moves a list attribute to a new trailing i64 input (absent attribute: the input is omitted).
void attr_to_input(ir::Node& n, const std::string& attr, size_t index) {
  while (n.num_inputs() < index) n.add_input(nullptr);
  if (n.has_attr(attr)) {
    n.add_input(add_const(n, i64_tensor(n.attr_ints(attr)), attr));
    n.remove_attr(attr);
  }
}

ir::Tensor float_like(ir::DType dt, float v) {
  if (dt == ir::DType::Float64) return ir::Tensor::scalar<double>(dt, v);
  if (dt == ir::DType::Float16) return ir::Tensor::scalar<uint16_t>(dt, ir::f32_to_f16(v));
  return ir::Tensor::scalar<float>(ir::DType::Float32, v);
}

// Softmax/LogSoftmax/Hardmax before 13 flatten the input to 2-D at `axis`. With the axis last the
// meaning is the same as opset 13's; otherwise Flatten, normalize rows, and Reshape back.
void softmax_to_13(ir::Node& n) {
  ir::Value* x = n.input(0);
  int64_t rank = x->shape() ? static_cast<int64_t>(x->shape()->size()) : -1;
  int64_t axis = n.attr_int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis == rank - 1) {
    n.set_attr_int("axis", -1);
    return;
  }
  ir::Graph& g = *n.graph();
  std::string base = n.output(0)->name();
  ir::Node* flat = g.insert_node_before(&n, "Flatten", {x}, {g.unique_name(base + "_flat")});
  flat->set_attr_int("axis", axis);
  ir::Node* shape = g.insert_node_before(&n, "Shape", {x}, {g.unique_name(base + "_shape")});
  ir::Node* sm = g.insert_node_before(&n, n.op_type(), {flat->output(0)}, {g.unique_name(base + "_2d")});
  sm->set_attr_int("axis", -1);
  // The graph maps a name to the value added last: the Reshape's output takes over the name.
  ir::Node* back = g.insert_node_before(&n, "Reshape", {sm->output(0), shape->output(0)}, {base});
  back->output(0)->set_type(n.output(0)->type());
  replace_all_uses_everywhere(n.output(0), back->output(0));
  g.remove_node(&n);
}

// Returns the converter for `n` from opset `from` to `to`, nothing when none is needed, or sets
// `why` when the node cannot be raised.
std::function<void(ir::Node&)> converter(const ir::Node& n, int64_t from, int64_t to, std::string& why) {
  const std::string& op = n.op_type();
  auto crosses = [&](int64_t v) { return from < v && to >= v; };
  static const std::vector<std::string> reduce18 = {"ReduceMean", "ReduceMax",    "ReduceMin",       "ReduceProd",
                                                    "ReduceL1",   "ReduceL2",     "ReduceLogSum",    "ReduceLogSumExp",
                                                    "ReduceSumSquare"};
  if ((op == "ReduceSum" && crosses(13)) ||
      (crosses(18) && std::find(reduce18.begin(), reduce18.end(), op) != reduce18.end()))
    return [](ir::Node& m) { attr_to_input(m, "axes", 1); };
  if ((op == "Squeeze" || op == "Unsqueeze") && crosses(13)) return [](ir::Node& m) { attr_to_input(m, "axes", 1); };
  if (op == "Split") {
    bool split_in = crosses(13), count = crosses(18);
    if (!split_in && !count) return nullptr;
    return [split_in, count](ir::Node& m) {
      if (split_in) attr_to_input(m, "split", 1);
      if (count && !m.input(1)) m.set_attr_int("num_outputs", static_cast<int64_t>(m.num_outputs()));
    };
  }
  if ((op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") && crosses(13)) {
    if (!n.input(0) || !n.input(0)->shape()) {
      why = n.describe() + " before opset 13 needs the input's rank";
      return nullptr;
    }
    return softmax_to_13;
  }
  if (op == "Slice" && crosses(10))
    return [](ir::Node& m) {
      bool axes = m.has_attr("axes");
      m.add_input(add_const(m, i64_tensor(m.attr_ints("starts")), "starts"));
      m.add_input(add_const(m, i64_tensor(m.attr_ints("ends")), "ends"));
      if (axes) m.add_input(add_const(m, i64_tensor(m.attr_ints("axes")), "axes"));
      for (const char* a : {"starts", "ends", "axes"}) m.remove_attr(a);
    };
  if (op == "Pad" && crosses(11))
    return [](ir::Node& m) {
      ir::DType dt = m.input(0)->dtype() == ir::DType::Undefined ? ir::DType::Float32 : m.input(0)->dtype();
      m.add_input(add_const(m, i64_tensor(m.attr_ints("pads")), "pads"));
      m.add_input(add_const(m, float_like(dt, m.attr_float("value", 0)), "value"));
      m.remove_attr("pads");
      m.remove_attr("value");
    };
  if (op == "Clip" && crosses(11))
    return [](ir::Node& m) {
      ir::DType dt = m.input(0)->dtype() == ir::DType::Undefined ? ir::DType::Float32 : m.input(0)->dtype();
      for (const char* a : {"min", "max"}) {
        m.add_input(m.has_attr(a) ? add_const(m, float_like(dt, m.attr_float(a, 0)), a) : nullptr);
        m.remove_attr(a);
      }
      m.remove_trailing_inputs(m.input(2) ? 3 : m.input(1) ? 2 : 1);
    };
  if (op == "TopK" && crosses(10))
    return [](ir::Node& m) {
      m.add_input(add_const(m, i64_tensor({m.attr_int("k", 1)}), "k"));
      m.remove_attr("k");
    };
  if ((op == "Cast" || op == "CastLike") && crosses(19)) {
    bool to_bf16 = op == "Cast" ? n.attr_int("to", 0) == static_cast<int64_t>(ir::DType::BFloat16)
                                : n.input(1) && n.input(1)->dtype() == ir::DType::BFloat16;
    if (to_bf16) return [](ir::Node& m) { m.set_attr_int(ir::kBf16Truncates, 1); };
  }
  if (op == "Dropout" && crosses(12))  // inference: identity; the ratio no longer is an attribute
    return [](ir::Node& m) {
      m.remove_attr("ratio");
      m.remove_attr("is_test");
    };
  if (op == "RoiAlign" && crosses(16) && !n.has_attr("coordinate_transformation_mode"))
    return [](ir::Node& m) { m.set_attr_string("coordinate_transformation_mode", "output_half_pixel"); };
  if (op == "GridSample" && crosses(20))
    return [](ir::Node& m) {
      std::string mode = m.attr_string("mode", "bilinear");
      m.set_attr_string("mode", mode == "bilinear" ? "linear" : mode == "bicubic" ? "cubic" : mode);
    };
  if (op == "BatchNormalization" && from < 9) {
    if (n.attr_int("spatial", 1) != 1) {
      why = n.describe() + " uses spatial=0, which opset 9 removed";
      return nullptr;
    }
    return [](ir::Node& m) { m.remove_attr("spatial"); };
  }
  if (op == "Scatter" && crosses(11))
    return [](ir::Node& m) {
      std::vector<ir::Attribute> attrs = m.attributes();
      ir::Node* r = replace_node(m, "ScatterElements", m.inputs());
      for (ir::Attribute& a : attrs) r->set_attr(std::move(a));
    };
  // Ops whose meaning changed in a way a local rewrite cannot express (or that no longer exist).
  static const std::vector<std::pair<std::string, int64_t>> unconvertible = {
      {"Upsample", 10}, {"Resize", 11}, {"GroupNormalization", 21}, {"DFT", 20}, {"Scan", 9}};
  for (const auto& [name, v] : unconvertible)
    if (op == name && crosses(v)) {
      why = n.describe() + " changed meaning in opset " + std::to_string(v);
      return nullptr;
    }
  if (ir::find_op("", op, from) && !ir::find_op("", op, to)) why = n.describe() + " does not exist in opset " + std::to_string(to);
  return nullptr;
}

void plan(ir::Graph& g, int64_t from, int64_t to, std::vector<Step>& steps, std::string& why) {
  for (ir::Node* n : g.nodes()) {
    for (ir::Graph* sg : n->subgraphs()) plan(*sg, from, to, steps, why);
    if (!n->domain().empty() && n->domain() != "ai.onnx") continue;
    std::string reason;
    auto c = converter(*n, from, to, reason);
    if (!reason.empty() && why.empty()) why = reason;
    if (c) steps.push_back({n, std::move(c)});
  }
}

}  // namespace

std::string raise_opset(ir::Model& m, int64_t version) {
  int64_t from = m.opset("");
  if (from >= version) return "";
  if (from < 7) return "opset " + std::to_string(from) + " is older than onnxc upgrades (7)";
  std::vector<Step> steps;
  std::string why;
  plan(*m.graph, from, version, steps, why);
  if (!why.empty()) return "cannot raise the opset from " + std::to_string(from) + " to " + std::to_string(version) + ": " + why;
  for (Step& s : steps) s.convert(*s.n);
  bool found = false;
  for (ir::OpsetImport& o : m.opset_imports)
    if (o.domain.empty() || o.domain == "ai.onnx") {
      o.version = version;
      found = true;
    }
  if (!found) m.opset_imports.push_back({"", version});
  // The IR version ONNX pairs with the opset (opset 21-22: IR 10, 23: IR 11).
  if (version >= 23) m.ir_version = std::max<int64_t>(m.ir_version, 11);
  else if (version >= 21) m.ir_version = std::max<int64_t>(m.ir_version, 10);
  return "";
}

}  // namespace onnxc::passes
