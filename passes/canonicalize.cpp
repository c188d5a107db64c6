// canonicalize (see canonicalize.h): one spelling per idiom, each a rule on the fusion driver and
// exact in IEEE arithmetic. The one-op rules live here, with the pass that runs every set.
//
//   pow_square            Pow(x, 2) ─▶ Mul(x, x)
//   reciprocal_div        Reciprocal(s) ─▶ Div(1, s)
//   div_exact_reciprocal  Div(x, 8) ─▶ Mul(x, 0.125)
//   einsum_matmul         Einsum("bhqd,bhkd->bhqk", q, k) ─▶ MatMul(q, Transpose(k, [0,1,3,2]))
//   rotary_batch_caches   RotaryEmbedding(x[b,..], cos[1,s,r], sin[1,s,r]) ─▶ the caches expanded to [b, s, r]
#include "passes/canonicalize.h"

#include <cmath>
#include <map>
#include <set>

#include "passes/canonicalize_rules.h"
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

// Einsum with two operands that is one batched matmul: the operand layouts [batch..., m, k] and
// [batch..., k, n] the MatMul wants, and the output's from [batch..., m, n].
struct EinsumPlan {
  std::string a, b, o;   // the operands' and the output's subscripts
  std::string bo, m, k, n;  // batch letters in the output's order; one letter each for m, k, n
};

std::string einsum_plan(const Match& match, const FusionContext&, EinsumPlan& p) {
  const ir::Node& n = *match.root()->producer();
  std::string eq;
  for (char c : n.attr_string("equation", "")) if (c != ' ') eq += c;
  size_t arrow = eq.find("->"), comma = eq.find(',');
  if (arrow == std::string::npos || comma == std::string::npos || comma > arrow) return "not two operands and an output";
  p.a = eq.substr(0, comma), p.b = eq.substr(comma + 1, arrow - comma - 1), p.o = eq.substr(arrow + 2);
  auto unique = [](const std::string& s) { return std::set<char>(s.begin(), s.end()).size() == s.size() && s.find('.') == std::string::npos; };
  if (!unique(p.a) || !unique(p.b) || !unique(p.o)) return "a repeated subscript or an ellipsis";
  auto in = [](const std::string& s, char c) { return s.find(c) != std::string::npos; };
  std::string batch;
  for (char c : p.a) {
    if (in(p.b, c) && in(p.o, c)) batch += c;
    else if (in(p.b, c)) p.k += c;
    else if (in(p.o, c)) p.m += c;
    else return "an axis of one operand is summed out";
  }
  for (char c : p.b)
    if (!in(p.a, c)) {
      if (!in(p.o, c)) return "an axis of one operand is summed out";
      p.n += c;
    }
  if (p.m.size() != 1 || p.n.size() != 1 || p.k.size() != 1 || p.o.size() != batch.size() + 2)
    return "not one batched matrix product";
  for (char c : p.o) if (in(batch, c)) p.bo += c;
  return "";
}

void einsum_to_matmul(const Match& match, const EinsumPlan& p, RewriteBuilder& b) {
  ir::Graph& g = b.graph();
  ir::Node& n = b.root();
  std::string base = n.output(0)->name();
  auto arrange = [&](ir::Value* v, const std::string& have, const std::string& want) -> ir::Value* {
    if (have == want) return v;
    std::vector<int64_t> perm;
    for (char c : want) perm.push_back(static_cast<int64_t>(have.find(c)));
    ir::Node* t = g.insert_node_before(&n, "Transpose", {v}, {g.unique_name(base + "_t")});
    t->set_attr_ints("perm", perm);
    return t->output(0);
  };
  ir::Value* lhs = arrange(match["a"], p.a, p.bo + p.m + p.k);
  ir::Value* rhs = arrange(match["b"], p.b, p.bo + p.k + p.n);
  std::string mm = p.bo + p.m + p.n;
  if (mm == p.o) {
    respell_node(b.root(), "MatMul", {lhs, rhs});
    return;
  }
  ir::Node* mul = g.insert_node_before(&n, "MatMul", {lhs, rhs}, {g.unique_name(base + "_mm")});
  std::vector<int64_t> perm;
  for (char c : p.o) perm.push_back(static_cast<int64_t>(mm.find(c)));
  respell_node(b.root(), "Transpose", {mul->output(0)})->set_attr_ints("perm", perm);
}

// RotaryEmbedding without position_ids reads cos/sin as [batch, seq, dim/2]; torch's opset-23 exporter
// writes caches of batch 1 for every batch row (ONNX Runtime rejects them, and a kernel reading row b
// of a 1-row cache reads past it). Expanded to x's batch: the same values for every row.
std::string rotary_batch_one_caches(const Match& m, const FusionContext&) {
  const ir::Node& n = *m.root()->producer();
  if (n.num_inputs() < 3 || (n.num_inputs() > 3 && n.input(3))) return "position_ids given";
  const ir::Shape *xs = shape_of(n.input(0)), *cs = shape_of(n.input(1)), *ss = shape_of(n.input(2));
  if (!xs || !cs || !ss || xs->empty() || cs->size() != 3 || ss->size() != 3) return "shapes unknown or not [b, s, r]";
  if ((*xs)[0] == ir::Dim(1) || !((*cs)[0] == ir::Dim(1)) || !((*ss)[0] == ir::Dim(1)))
    return "the caches are not of batch 1 for a larger batch";
  return "";
}

void expand_rotary_caches(const Match&, RewriteBuilder& b) {
  ir::Graph& g = b.graph();
  ir::Node& n = b.root();
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
}

std::string float_x(const Match& m, const FusionContext&) {
  return is_float(m["x"]) ? "" : "not floating point";
}

}  // namespace

std::vector<FusionRule> canonical_op_rules() {
  Pattern x = any().capture("x");
  FusionRule pow_square{"pow_square", "canonical", op("Pow", {x, const_value(2.0).capture("two")}),
      [](const Match& m, const FusionContext&) -> std::string {
        return is_float(m["x"]) && broadcast_free_scalar(*m["two"], *m["x"]) ? "" : "not a float square";
      },
      [](const Match& m, RewriteBuilder& b) { respell_node(b.root(), "Mul", {m["x"], m["x"]}); }};
  FusionRule reciprocal{"reciprocal_div", "canonical", op("Reciprocal", {x}), float_x,
      [](const Match& m, RewriteBuilder& b) {
        ir::Graph& g = b.graph();
        ir::Value* one = g.add_initializer(g.unique_name("one"), scalar_of(m["x"]->dtype(), 1.0));
        respell_node(b.root(), "Div", {one, m["x"]});
      }};
  FusionRule div = planned_rule<ir::Tensor>("div_exact_reciprocal", "canonical",
      op("Div", {x, any().constant().capture("c")}),
      [](const Match& m, const FusionContext&, ir::Tensor& r) -> std::string {
        if (!is_float(m["x"])) return "not floating point";
        r = exact_reciprocal(m["c"]->constant());
        return r.dtype() != ir::DType::Undefined && r.dtype() == m["x"]->dtype() ? "" : "1/c is not exact";
      },
      [](const Match& m, const ir::Tensor& r, RewriteBuilder& b) {
        ir::Graph& g = b.graph();
        respell_node(b.root(), "Mul", {m["x"], g.add_initializer(g.unique_name(m["c"]->name() + "_reciprocal"), r)});
      });
  FusionRule einsum = planned_rule<EinsumPlan>("einsum_matmul", "canonical",
      op("Einsum", {any().capture("a"), any().capture("b")}), einsum_plan, einsum_to_matmul);
  FusionRule rotary{"rotary_batch_caches", "canonical", op("RotaryEmbedding"), rotary_batch_one_caches,
                    expand_rotary_caches};
  // A Div or Pow whose operand the match reads twice (x/x) is still one op: nothing is interior.
  return {pow_square, reciprocal, div, einsum, rotary};
}

bool canonicalize(ir::Model& m, PassContext& ctx) {
  bool changed = m.opset("") < kCanonicalOpset && raise_opset(m, kCanonicalOpset).empty();
  static const std::vector<FusionRule> spellings = [] {
    std::vector<FusionRule> r = canonical_op_rules(), views = canonical_view_rules();
    r.insert(r.end(), views.begin(), views.end());
    return r;
  }();
  static const std::vector<FusionRule> rows = canonical_row_rules();
  changed |= run_fusion_rules(m, spellings, ctx, RuleSetKind::kCanonical);
  return run_fusion_rules(m, rows, ctx, RuleSetKind::kCanonical) || changed;
}

bool canonicalize(ir::Model& m) {
  PassContext ctx;
  return canonicalize(m, ctx);
}

}  // namespace onnxc::passes
