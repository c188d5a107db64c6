// Elementwise ops: unary math and activations (shape kept; PRelu's slope broadcasts to X, and before
// opset 7 along the channel axis), binary and variadic ops with numpy
// broadcasting, comparisons and logic (bool), Where, Cast. Integer arithmetic on shape values is
// done on dims, so `Mul(Gather(Shape(x),0), Gather(Shape(x),1))` holds `batch*seq`.
#include "ir/infer/context.h"

namespace onnxc::ir {
namespace {

// An integer op on two dims (is_float: the tensor is float, so results must stay integral;
// fmod: Mod's fmod attribute). nullopt: the element cannot be decided.
using DimFn = std::optional<Dim> (*)(const Dim& a, const Dim& b, bool is_float, bool fmod);

// a < b. Symbols are extents (never negative); an unknown element may hold any value, even one
// from data, so nothing is decided about it.
std::optional<bool> known_less(const Dim& a, const Dim& b) {  // a < b
  if (a.has_unknown() || b.has_unknown()) return std::nullopt;
  if (known_nonnegative(b - a - 1)) return true;
  if (known_nonnegative(a - b)) return false;
  return std::nullopt;
}

std::optional<Dim> from_bool(std::optional<bool> b) {
  if (!b) return std::nullopt;
  return Dim(*b ? 1 : 0);
}

// Values of inputs `a` and `b` combined elementwise (with broadcasting of one-element values).
std::optional<std::vector<Dim>> combine(const InferContext& ctx, DimFn fn, bool is_float, bool fmod) {
  auto va = ctx.in_value(0), vb = ctx.in_value(1);
  if (!va || !vb) return std::nullopt;
  size_t n = std::max(va->size(), vb->size());
  if ((va->size() != n && va->size() != 1) || (vb->size() != n && vb->size() != 1)) return std::nullopt;
  std::vector<Dim> r;
  for (size_t i = 0; i < n; ++i) {
    auto d = fn((*va)[va->size() == 1 ? 0 : i], (*vb)[vb->size() == 1 ? 0 : i], is_float, fmod);
    r.push_back(d ? *d : Dim::unknown());
  }
  return r;
}

// Shape values of float tensors are tracked only while integral (Cast(Shape(x)) -> ... -> Cast).
std::optional<Dim> divide(const Dim& a, const Dim& b, bool is_float) {
  if (b == Dim(0)) return std::nullopt;
  if (a.is_const() && b.is_const()) {
    if (is_float && a.value() % b.value() != 0) return std::nullopt;
    return Dim(a.value() / b.value());  // ONNX integer division truncates
  }
  Dim q = floordiv(a, b);
  if (q.kind() == Dim::Kind::FloorDiv && is_float) return std::nullopt;
  return q;
}

std::optional<Dim> mod_dims(const Dim& a, const Dim& b, bool fmod) {
  if (b == Dim(0)) return std::nullopt;
  if (!fmod) return mod(a, b);
  if (a.is_const() && b.is_const()) return Dim(a.value() % b.value());
  return std::nullopt;
}

std::optional<Dim> and_dims(const Dim& a, const Dim& b) {
  if (a == Dim(0) || b == Dim(0)) return Dim(0);
  return a.is_const() && b.is_const() ? std::optional<Dim>(1) : std::nullopt;
}

std::optional<Dim> or_dims(const Dim& a, const Dim& b) {
  if ((a.is_const() && a.value()) || (b.is_const() && b.value())) return Dim(1);
  return a.is_const() && b.is_const() ? std::optional<Dim>(0) : std::nullopt;
}

// Equal on shape values: torch's `expand` guard `Where(Equal(size, -1), 1, size)` decides
// `batch == -1` as false, so the expanded shape stays symbolic.
std::optional<Dim> equal_dims(const Dim& a, const Dim& b) {
  if (a == b) return Dim(1);
  Dim d = a - b;
  if (d.is_const()) return Dim(d.value() == 0 ? 1 : 0);
  if (known_less(a, b).value_or(false) || known_less(b, a).value_or(false)) return Dim(0);
  return std::nullopt;
}

std::optional<bool> negate(std::optional<bool> b) { return b ? std::optional<bool>(!*b) : std::nullopt; }

// Ops with a rule on shape values.
const std::map<std::string, DimFn>& value_fns() {
  static const std::map<std::string, DimFn> fns = {
      {"Add", [](const Dim& a, const Dim& b, bool, bool) -> std::optional<Dim> { return a + b; }},
      {"Sub", [](const Dim& a, const Dim& b, bool, bool) -> std::optional<Dim> { return a - b; }},
      {"Mul", [](const Dim& a, const Dim& b, bool, bool) -> std::optional<Dim> { return a * b; }},
      {"Div", [](const Dim& a, const Dim& b, bool f, bool) { return divide(a, b, f); }},
      {"Mod", [](const Dim& a, const Dim& b, bool, bool fm) { return mod_dims(a, b, fm); }},
      {"Max", [](const Dim& a, const Dim& b, bool, bool) -> std::optional<Dim> { return max(a, b); }},
      {"Min", [](const Dim& a, const Dim& b, bool, bool) -> std::optional<Dim> { return min(a, b); }},
      {"Equal", [](const Dim& a, const Dim& b, bool, bool) { return equal_dims(a, b); }},
      {"Less", [](const Dim& a, const Dim& b, bool, bool) { return from_bool(known_less(a, b)); }},
      {"Greater", [](const Dim& a, const Dim& b, bool, bool) { return from_bool(known_less(b, a)); }},
      {"LessOrEqual", [](const Dim& a, const Dim& b, bool, bool) { return from_bool(negate(known_less(b, a))); }},
      {"GreaterOrEqual", [](const Dim& a, const Dim& b, bool, bool) { return from_bool(negate(known_less(a, b))); }},
      {"And", [](const Dim& a, const Dim& b, bool, bool) { return and_dims(a, b); }},
      {"Or", [](const Dim& a, const Dim& b, bool, bool) { return or_dims(a, b); }},
  };
  return fns;
}

bool trackable(DType t) { return dtype_is_integer(t) || t == DType::Bool || dtype_is_float(t); }

std::optional<Shape> broadcast_inputs(const InferContext& ctx, size_t first, size_t count) {
  std::vector<std::optional<Shape>> shapes;
  for (size_t i = first; i < first + count; ++i)
    if (ctx.has_input(i)) shapes.push_back(ctx.in_shape(i));
  return broadcast_shapes(ctx, shapes);
}

// Output: `dt` with the broadcast shape of all inputs; the shape value when the op has a dim rule.
void broadcast_to(InferContext& ctx, DType dt) {
  ctx.set_tensor(0, dt, broadcast_inputs(ctx, 0, ctx.num_inputs()));
  if (!trackable(dt) || ctx.num_inputs() < 1) return;
  const auto& fns = value_fns();
  auto it = fns.find(ctx.node().op_type());
  if (it == fns.end()) return;
  if (ctx.num_inputs() == 1) {
    if (auto v = ctx.in_value(0)) ctx.set_value(0, *v);
    return;
  }
  bool is_float = dtype_is_float(ctx.in_dtype(0)), fmod = ctx.node().attr_int("fmod", 0) != 0;
  if (ctx.num_inputs() == 2)
    if (auto v = combine(ctx, it->second, is_float, fmod)) ctx.set_value(0, *v);
}

void infer_same(InferContext& ctx) { ctx.set_tensor(0, ctx.in_dtype(0), ctx.in_shape(0)); }

// Shape values are integral, so rounding keeps them.
void infer_rounding(InferContext& ctx) { same_as_input(ctx); }

void infer_to_bool(InferContext& ctx) { ctx.set_tensor(0, DType::Bool, ctx.in_shape(0)); }

void infer_neg(InferContext& ctx) {
  infer_same(ctx);
  if (auto v = ctx.in_value(0)) {
    for (auto& d : *v) d = -d;
    ctx.set_value(0, *v);
  }
}

void infer_relu(InferContext& ctx) {
  infer_same(ctx);
  if (auto v = ctx.in_value(0)) {
    for (auto& d : *v) d = max(d, Dim(0));
    ctx.set_value(0, *v);
  }
}

void infer_abs(InferContext& ctx) {
  infer_same(ctx);
  if (auto v = ctx.in_value(0)) {
    for (auto& d : *v) {
      if (d.is_const()) d = Dim(std::abs(d.value()));
      else if (!known_nonnegative(d)) d = Dim::unknown();
    }
    ctx.set_value(0, *v);
  }
}

void infer_not(InferContext& ctx) {
  infer_to_bool(ctx);
  if (auto v = ctx.in_value(0)) {
    for (auto& d : *v) d = d.is_const() ? Dim(d.value() ? 0 : 1) : Dim::unknown();
    ctx.set_value(0, *v);
  }
}

void infer_identity(InferContext& ctx) { same_as_input(ctx, 0); }

void infer_arith(InferContext& ctx) { broadcast_to(ctx, ctx.in_dtype(0)); }
void infer_compare(InferContext& ctx) { broadcast_to(ctx, DType::Bool); }

void infer_variadic(InferContext& ctx) {
  DType dt = DType::Undefined;
  for (size_t i = 0; i < ctx.num_inputs() && dt == DType::Undefined; ++i) dt = ctx.in_dtype(i);
  broadcast_to(ctx, dt);
}

void infer_where(InferContext& ctx) {
  DType dt = ctx.in_dtype(1) != DType::Undefined ? ctx.in_dtype(1) : ctx.in_dtype(2);
  ctx.set_tensor(0, dt, broadcast_inputs(ctx, 0, 3));
  auto c = ctx.in_value(0), a = ctx.in_value(1), b = ctx.in_value(2);
  if (!c || !a || !b) return;
  size_t n = std::max({c->size(), a->size(), b->size()});
  auto at = [n](const std::vector<Dim>& v, size_t i) -> const Dim* {
    if (v.size() == n) return &v[i];
    return v.size() == 1 ? &v[0] : nullptr;
  };
  std::vector<Dim> r;
  for (size_t i = 0; i < n; ++i) {
    const Dim *ci = at(*c, i), *ai = at(*a, i), *bi = at(*b, i);
    if (!ci || !ai || !bi) return;
    if (ci->is_const()) r.push_back(ci->value() ? *ai : *bi);
    else r.push_back(*ai == *bi ? *ai : Dim::unknown());
  }
  ctx.set_value(0, r);
}

void cast_to(InferContext& ctx, DType to) {
  ctx.set_tensor(0, to, ctx.in_shape(0));
  auto v = ctx.in_value(0);
  if (!v || !trackable(to)) return;
  if (to == DType::Bool)
    for (auto& d : *v) d = d.is_const() ? Dim(d.value() ? 1 : 0) : Dim::unknown();
  ctx.set_value(0, *v);
}

void infer_cast(InferContext& ctx) { cast_to(ctx, dtype_attr(ctx, "to", DType::Undefined)); }
void infer_cast_like(InferContext& ctx) { cast_to(ctx, ctx.in_dtype(1)); }

// BitCast (opset 26): the same bits read as `to`, which must have the input's element size.
void infer_bitcast(InferContext& ctx) { ctx.set_tensor(0, dtype_attr(ctx, "to", DType::Undefined), ctx.in_shape(0)); }

void infer_dropout(InferContext& ctx) {
  infer_same(ctx);
  ctx.set_tensor(1, DType::Bool, ctx.in_shape(0));
}

}  // namespace

void add_elementwise_ops(OpTable& t) {
  t.add_all({"Ceil", "Floor", "Round"}, kElementwise, infer_rounding);
  t.add_all({"Acos",   "Acosh",     "Asin",        "Asinh",      "Atan",       "Atanh",    "Cos",
             "Cosh",   "Erf",       "Exp",         "Log",        "Reciprocal", "Sigmoid",  "Sign",
             "Sin",    "Sinh",      "Sqrt",        "Tan",        "Tanh",       "Elu",      "Selu",
             "Celu",   "LeakyRelu", "HardSigmoid", "HardSwish",  "Softplus",   "Softsign", "ThresholdedRelu",
             "Shrink", "Mish",      "Gelu",        "BitwiseNot", "Clip",       "PRelu",    "Swish"},
            kElementwise, infer_same);
  t.add_all({"IsNaN", "IsInf"}, kElementwise, infer_to_bool);
  t.add_all({"Neg"}, kElementwise, infer_neg);
  t.add_all({"Relu"}, kElementwise, infer_relu);
  t.add_all({"Abs"}, kElementwise, infer_abs);
  t.add_all({"Not"}, kElementwise, infer_not);
  t.add_all({"Identity"}, kElementwise | kSequence | kView, infer_identity);
  t.add_all({"Add", "Mul", "BitwiseAnd", "BitwiseOr", "BitwiseXor"}, kElementwise | kCommutative, infer_arith);
  t.add_all({"Sub", "Div", "Pow", "Mod", "BitShift"}, kElementwise, infer_arith);
  t.add_all({"SwiGLU"}, kElementwise, infer_arith);  // A and B of one shape (opset 28)
  t.add_all({"Equal", "And", "Or", "Xor"}, kElementwise | kCommutative, infer_compare);
  t.add_all({"Less", "Greater", "LessOrEqual", "GreaterOrEqual"}, kElementwise, infer_compare);
  t.add_all({"Max", "Min", "Sum", "Mean"}, kElementwise | kCommutative, infer_variadic);
  t.add_all({"Where"}, kElementwise, infer_where);
  t.add_all({"Cast"}, kElementwise, infer_cast);
  t.add_all({"CastLike"}, kElementwise, infer_cast_like);
  t.add_all({"BitCast"}, kElementwise, infer_bitcast);
  t.add_all({"Dropout"}, kElementwise | kView, infer_dropout);
}

}  // namespace onnxc::ir
