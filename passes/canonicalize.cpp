// canonicalize (see canonicalize.h): one spelling per idiom, each rule exact in IEEE arithmetic.
//
//   Pow(x, 2) ─▶ Mul(x, x)      Reciprocal(s) ─▶ Div(1, s)      Div(x, 8) ─▶ Mul(x, 0.125)
//   Einsum("bhqd,bhkd->bhqk", q, k) ─▶ MatMul(q, Transpose(k, [0,1,3,2]))
//   RotaryEmbedding(x[b,..], cos[1,s,r], sin[1,s,r]) ─▶ the caches expanded to [b, s, r]
#include "passes/canonicalize.h"

#include <cmath>
#include <map>
#include <set>

#include "passes/pattern.h"
#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

using namespace pat;

bool is_float(const ir::Value* v) { return v && ir::dtype_is_float(v->dtype()); }

// A one-element constant that broadcasting against `x` cannot grow (rank <= x's).
bool broadcast_free_scalar(const ir::Value& c, const ir::Value& x) {
  return c.is_constant() && c.constant().numel() == 1 && x.shape() &&
         c.constant().rank() <= static_cast<int64_t>(x.shape()->size());
}

ir::Tensor scalar_of(ir::DType dt, double v) {
  if (dt == ir::DType::Float64) return ir::Tensor::scalar<double>(dt, v);
  if (dt == ir::DType::Float16) return ir::Tensor::scalar<uint16_t>(dt, ir::f32_to_f16(static_cast<float>(v)));
  if (dt == ir::DType::BFloat16) return ir::Tensor::scalar<uint16_t>(dt, ir::f32_to_bf16(static_cast<float>(v)));
  return ir::Tensor::scalar<float>(ir::DType::Float32, static_cast<float>(v));
}

// 1/c elementwise when every element of c is a power of two whose reciprocal is a normal number
// (so x / c == x * (1/c) exactly, rounding included); else an empty tensor.
ir::Tensor exact_reciprocal(const ir::Tensor& c) {
  if (c.dtype() != ir::DType::Float32 && c.dtype() != ir::DType::Float64) return {};
  ir::Tensor r(c.dtype(), c.dims());
  for (int64_t i = 0; i < c.numel(); ++i) {
    double v = c.get_f64(i);
    int e = 0;
    if (!std::isfinite(v) || v == 0 || std::fabs(std::frexp(v, &e)) != 0.5) return {};
    if (c.dtype() == ir::DType::Float32 && (e < -124 || e > 126)) return {};
    if (c.dtype() == ir::DType::Float32) r.mutable_data<float>()[i] = static_cast<float>(1 / v);
    else r.mutable_data<double>()[i] = 1 / v;
  }
  return r;
}

// Einsum with two operands that is one batched matmul: returns false when it is not.
bool einsum_to_matmul(ir::Node& n) {
  std::string eq;
  for (char c : n.attr_string("equation", "")) if (c != ' ') eq += c;
  size_t arrow = eq.find("->"), comma = eq.find(',');
  if (n.num_inputs() != 2 || arrow == std::string::npos || comma == std::string::npos || comma > arrow) return false;
  std::string a = eq.substr(0, comma), b = eq.substr(comma + 1, arrow - comma - 1), o = eq.substr(arrow + 2);
  auto unique = [](const std::string& s) { return std::set<char>(s.begin(), s.end()).size() == s.size() && s.find('.') == std::string::npos; };
  if (!unique(a) || !unique(b) || !unique(o)) return false;
  auto in = [](const std::string& s, char c) { return s.find(c) != std::string::npos; };
  std::string batch, m, k, nn;
  for (char c : a) {
    if (in(b, c) && in(o, c)) batch += c;
    else if (in(b, c)) k += c;
    else if (in(o, c)) m += c;
    else return false;  // a summed-out axis of one operand
  }
  for (char c : b)
    if (!in(a, c)) {
      if (!in(o, c)) return false;
      nn += c;
    }
  if (m.size() != 1 || nn.size() != 1 || k.size() != 1 || o.size() != batch.size() + 2) return false;
  ir::Graph& g = *n.graph();
  std::string base = n.output(0)->name();
  // Operands to [batch..., m, k] and [batch..., k, n] (the batch order of the output).
  std::string bo;
  for (char c : o) if (in(batch, c)) bo += c;
  auto arrange = [&](ir::Value* v, const std::string& have, const std::string& want) -> ir::Value* {
    if (have == want) return v;
    std::vector<int64_t> perm;
    for (char c : want) perm.push_back(static_cast<int64_t>(have.find(c)));
    ir::Node* t = g.insert_node_before(&n, "Transpose", {v}, {g.unique_name(base + "_t")});
    t->set_attr_ints("perm", perm);
    return t->output(0);
  };
  ir::Value* lhs = arrange(n.input(0), a, bo + m + k);
  ir::Value* rhs = arrange(n.input(1), b, bo + k + nn);
  std::string mm = bo + m + nn;
  if (mm == o) {
    replace_node(n, "MatMul", {lhs, rhs});
    return true;
  }
  ir::Node* mul = g.insert_node_before(&n, "MatMul", {lhs, rhs}, {g.unique_name(base + "_mm")});
  std::vector<int64_t> perm;
  for (char c : o) perm.push_back(static_cast<int64_t>(mm.find(c)));
  ir::Node* t = replace_node(n, "Transpose", {mul->output(0)});
  t->set_attr_ints("perm", perm);
  return true;
}

// RotaryEmbedding without position_ids reads cos/sin as [batch, seq, dim/2]; torch's opset-23 exporter
// writes caches of batch 1 for every batch row (ONNX Runtime rejects them, and a kernel reading row b
// of a 1-row cache reads past it). Expanded to x's batch: the same values for every row.
bool expand_rotary_caches(ir::Node& n) {
  if (n.num_inputs() < 3 || (n.num_inputs() > 3 && n.input(3))) return false;
  const ir::Shape *xs = shape_of(n.input(0)), *cs = shape_of(n.input(1)), *ss = shape_of(n.input(2));
  if (!xs || !cs || !ss || xs->empty() || cs->size() != 3 || ss->size() != 3) return false;
  if ((*xs)[0] == ir::Dim(1) || !((*cs)[0] == ir::Dim(1)) || !((*ss)[0] == ir::Dim(1))) return false;
  ir::Graph& g = *n.graph();
  ir::Node* batch = g.insert_node_before(&n, "Shape", {n.input(0)}, {g.unique_name(n.name() + "/batch")});
  batch->set_attr_int("start", 0);
  batch->set_attr_int("end", 1);
  for (int i = 1; i <= 2; ++i) {
    ir::Value* c = n.input(i);
    ir::Node* rest = g.insert_node_before(&n, "Shape", {c}, {g.unique_name(c->name() + "/rows")});
    rest->set_attr_int("start", 1);
    ir::Node* shape = g.insert_node_before(&n, "Concat", {batch->output(0), rest->output(0)}, {g.unique_name(c->name() + "/per_batch")});
    shape->set_attr_int("axis", 0);
    n.set_input(i, g.insert_node_before(&n, "Expand", {c, shape->output(0)}, {g.unique_name(c->name() + "/expanded")})->output(0));
  }
  return true;
}

bool rewrite_node(ir::Node& n) {
  const std::string& op = n.op_type();
  if (!n.domain().empty() || !n.output(0)) return false;
  ir::Graph& g = *n.graph();
  if (op == "Pow" && n.num_inputs() == 2 && is_float(n.input(0)) &&
      match(const_value(2.0), n.input(1)) && broadcast_free_scalar(*n.input(1), *n.input(0))) {
    replace_node(n, "Mul", {n.input(0), n.input(0)});
    return true;
  }
  if (op == "Reciprocal" && is_float(n.input(0))) {
    ir::Value* one = g.add_initializer(g.unique_name("one"), scalar_of(n.input(0)->dtype(), 1.0));
    replace_node(n, "Div", {one, n.input(0)});
    return true;
  }
  if (op == "Div" && n.num_inputs() == 2 && is_float(n.input(0)) && n.input(1)->is_constant()) {
    ir::Tensor r = exact_reciprocal(n.input(1)->constant());
    if (r.dtype() == ir::DType::Undefined || r.dtype() != n.input(0)->dtype()) return false;
    ir::Value* c = g.add_initializer(g.unique_name(n.input(1)->name() + "_reciprocal"), std::move(r));
    replace_node(n, "Mul", {n.input(0), c});
    return true;
  }
  if (op == "Einsum") return einsum_to_matmul(n);
  if (op == "RotaryEmbedding") return expand_rotary_caches(n);
  if (op == "Reshape") {
    if (merge_split_add(n) || swap_through_flat_view(n)) return true;
    ir::Node* moved = view_before_rows(n);  // n is gone when this moved it
    if (moved) merge_split_add(*moved);
    return moved != nullptr;
  }
  return false;
}

bool canonicalize_graph(ir::Graph& g, const ir::OpsetMap& opsets) {
  bool changed = false;
  for (ir::Node* n : g.nodes()) {
    for (ir::Graph* sg : n->subgraphs()) changed |= canonicalize_graph(*sg, opsets);
    changed |= rewrite_node(*n);
  }
  return attention_rows(g, opsets) || changed;
}

}  // namespace

bool canonicalize(ir::Model& m) {
  bool changed = m.opset("") < kCanonicalOpset && raise_opset(m, kCanonicalOpset).empty();
  return canonicalize_graph(*m.graph, ir::opset_map(m)) || changed;
}

}  // namespace onnxc::passes
