// Evaluator: elementwise ops. Unary math, binary arithmetic with numpy broadcasting, comparisons
// and logic, variadic Min/Max/Sum/Mean, Where, Clip, IsNaN and Cast. Integer/bool tensors compute in int64,
// float tensors in double, and the result is stored in the output dtype.
#include <cmath>
#include <cstring>

#include "ir/eval/eval_internal.h"

namespace onnxc::ir::eval_detail {
namespace {

// ---- unary ----

struct UnaryOp {
  double (*f)(double);    // float lane
  int64_t (*i)(int64_t);  // integer lane; null = the op is float-only
};

const std::map<std::string, UnaryOp>& unary_ops() {
  static const std::map<std::string, UnaryOp> t = {
      {"Neg", {[](double x) { return -x; }, [](int64_t x) { return -x; }}},
      {"Abs", {[](double x) { return std::fabs(x); }, [](int64_t x) { return x < 0 ? -x : x; }}},
      {"Sign", {[](double x) { return double((x > 0) - (x < 0)); }, [](int64_t x) { return int64_t((x > 0) - (x < 0)); }}},
      {"Relu", {[](double x) { return x > 0 ? x : 0.0; }, [](int64_t x) { return x > 0 ? x : 0; }}},
      {"Not", {nullptr, [](int64_t x) { return int64_t(x == 0); }}},
      {"Sqrt", {[](double x) { return std::sqrt(x); }, nullptr}},
      {"Reciprocal", {[](double x) { return 1.0 / x; }, nullptr}},
      {"Floor", {[](double x) { return std::floor(x); }, nullptr}},
      {"Ceil", {[](double x) { return std::ceil(x); }, nullptr}},
      {"Round", {[](double x) { return std::nearbyint(x); }, nullptr}},  // half to even
      {"Exp", {[](double x) { return std::exp(x); }, nullptr}},
      {"Log", {[](double x) { return std::log(x); }, nullptr}},
      {"Erf", {[](double x) { return std::erf(x); }, nullptr}},
      {"Tanh", {[](double x) { return std::tanh(x); }, nullptr}},
      {"Cos", {[](double x) { return std::cos(x); }, nullptr}},
      {"Sin", {[](double x) { return std::sin(x); }, nullptr}},
      {"Sigmoid", {[](double x) { return 1.0 / (1.0 + std::exp(-x)); }, nullptr}},
  };
  return t;
}

std::vector<Tensor> eval_unary(Ctx& c) {
  const UnaryOp& op = unary_ops().at(c.node.op_type());
  const Tensor& x = c.in(0);
  require_numeric(x);
  Tensor out = c.make(x.dtype(), x.dims());
  bool fl = float_lane(x.dtype());
  if ((fl && !op.f) || (!fl && !op.i)) throw NotEvaluable{};
  for (int64_t k = 0; k < x.numel(); ++k) {
    if (fl) set_f64(out, k, op.f(x.get_f64(k)));
    else set_i64(out, k, op.i(x.get_i64(k)));
  }
  return {out};
}

// ---- binary ----

int64_t floor_mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
int64_t int_pow(int64_t b, int64_t e) {
  if (e < 0) return b == 1 ? 1 : (b == -1 ? (e % 2 ? -1 : 1) : 0);
  int64_t r = 1;
  while (e--) r *= b;
  return r;
}
int64_t checked_div(int64_t a, int64_t b) {
  if (b == 0) throw NotEvaluable{};
  return a / b;  // ONNX integer Div truncates toward zero
}
int64_t checked_mod(int64_t a, int64_t b) {
  if (b == 0) throw NotEvaluable{};
  return floor_mod(a, b);
}

struct BinaryOp {
  double (*f)(double, double);
  int64_t (*i)(int64_t, int64_t);
  bool to_bool = false;  // comparisons and logic produce bool
};

const std::map<std::string, BinaryOp>& binary_ops() {
  static const std::map<std::string, BinaryOp> t = {
      {"Add", {[](double a, double b) { return a + b; }, [](int64_t a, int64_t b) { return a + b; }}},
      {"Sub", {[](double a, double b) { return a - b; }, [](int64_t a, int64_t b) { return a - b; }}},
      {"Mul", {[](double a, double b) { return a * b; }, [](int64_t a, int64_t b) { return a * b; }}},
      {"Div", {[](double a, double b) { return a / b; }, checked_div}},
      {"Mod", {[](double a, double b) { return a - std::floor(a / b) * b; }, checked_mod}},
      {"Pow", {[](double a, double b) { return std::pow(a, b); }, int_pow}},
      {"Min", {[](double a, double b) { return std::isnan(a) ? a : std::fmin(a, b); }, [](int64_t a, int64_t b) { return std::min(a, b); }}},
      {"Max", {[](double a, double b) { return std::isnan(a) ? a : std::fmax(a, b); }, [](int64_t a, int64_t b) { return std::max(a, b); }}},
      {"Sum", {[](double a, double b) { return a + b; }, [](int64_t a, int64_t b) { return a + b; }}},
      {"Mean", {[](double a, double b) { return a + b; }, [](int64_t a, int64_t b) { return a + b; }}},
      {"Equal", {[](double a, double b) { return double(a == b); }, [](int64_t a, int64_t b) { return int64_t(a == b); }, true}},
      {"Less", {[](double a, double b) { return double(a < b); }, [](int64_t a, int64_t b) { return int64_t(a < b); }, true}},
      {"Greater", {[](double a, double b) { return double(a > b); }, [](int64_t a, int64_t b) { return int64_t(a > b); }, true}},
      {"LessOrEqual", {[](double a, double b) { return double(a <= b); }, [](int64_t a, int64_t b) { return int64_t(a <= b); }, true}},
      {"GreaterOrEqual", {[](double a, double b) { return double(a >= b); }, [](int64_t a, int64_t b) { return int64_t(a >= b); }, true}},
      {"And", {nullptr, [](int64_t a, int64_t b) { return int64_t(a && b); }, true}},
      {"Or", {nullptr, [](int64_t a, int64_t b) { return int64_t(a || b); }, true}},
      {"Xor", {nullptr, [](int64_t a, int64_t b) { return int64_t(!a != !b); }, true}},
  };
  return t;
}

// A partial result of a variadic op, rounded as a kernel holds it: in f32 for f32 and for f16/bf16
// (computed in f32, rounded to the narrow type once). Sum(max, max, -max) in f32 is inf, not max.
double round_partial(DType dt, double v) {
  bool narrow = dt == DType::Float32 || dt == DType::Float16 || dt == DType::BFloat16;
  return narrow ? static_cast<float>(v) : v;
}

// Folds the inputs left to right with `op`, broadcasting; Min/Max/Sum/Mean are variadic. Each
// partial result is rounded to the output precision, as the op computes it one input at a time.
std::vector<Tensor> eval_binary(Ctx& c) {
  const std::string& name = c.node.op_type();
  BinaryOp op = binary_ops().at(name);
  if (name == "Mod" && c.node.attr_int("fmod", 0) == 1) {
    op.f = [](double a, double b) { return std::fmod(a, b); };
    op.i = [](int64_t a, int64_t b) { return b == 0 ? throw NotEvaluable{} : a % b; };
  }
  size_t n = c.num_inputs();
  user_check(n >= 1) << c.where() << "needs inputs";
  std::vector<std::vector<int64_t>> shapes;
  for (size_t k = 0; k < n; ++k) {
    require_numeric(c.in(k));
    shapes.push_back(c.in(k).dims());
  }
  std::vector<int64_t> dims = broadcast(c, shapes);
  const Tensor& a0 = c.in(0);
  // Pow keeps the base's lane: an integer base with a float exponent still computes in double.
  bool fl = float_lane(a0.dtype()) || (name == "Pow" && float_lane(c.in(1).dtype()));
  if ((fl && !op.f) || (!fl && !op.i)) throw NotEvaluable{};
  Tensor out = c.make(op.to_bool ? DType::Bool : a0.dtype(), dims);
  int64_t total = numel(dims);
  std::vector<double> accf(fl ? total : 0);
  std::vector<int64_t> acci(fl ? 0 : total);
  auto idx0 = broadcast_index(a0.dims(), dims);
  for (int64_t e = 0; e < total; ++e) {
    if (fl) accf[e] = a0.get_f64(idx0[e]);
    else acci[e] = a0.get_i64(idx0[e]);
  }
  for (size_t k = 1; k < n; ++k) {
    const Tensor& b = c.in(k);
    auto idx = broadcast_index(b.dims(), dims);
    for (int64_t e = 0; e < total; ++e) {
      if (fl) accf[e] = round_partial(a0.dtype(), op.f(accf[e], b.get_f64(idx[e])));
      else acci[e] = op.i(acci[e], b.get_i64(idx[e]));
    }
  }
  double div = name == "Mean" ? static_cast<double>(n) : 1.0;
  for (int64_t e = 0; e < total; ++e) {
    if (fl) set_f64(out, e, accf[e] / div);
    else set_i64(out, e, name == "Mean" ? acci[e] / static_cast<int64_t>(n) : acci[e]);
  }
  return {out};
}

// ---- the rest ----

std::vector<Tensor> eval_where(Ctx& c) {
  const Tensor &cond = c.in(0), &x = c.in(1), &y = c.in(2);
  std::vector<int64_t> dims = broadcast(c, {cond.dims(), x.dims(), y.dims()});
  c.check_size(dims);
  auto ic = broadcast_index(cond.dims(), dims), ix = broadcast_index(x.dims(), dims),
       iy = broadcast_index(y.dims(), dims);
  if (x.dtype() == DType::String || y.dtype() == DType::String) throw NotEvaluable{};
  require_numeric(cond);
  Tensor xs = take(c, x, dims, ix), ys = take(c, y, dims, iy);  // same dtype: pick bytes per element
  Tensor out = c.make(x.dtype(), dims);
  size_t es = dtype_size(x.dtype());
  auto* dst = static_cast<unsigned char*>(out.mutable_raw());
  for (size_t e = 0; e < ic.size(); ++e) {
    const Tensor& src = cond.get_i64(ic[e]) ? xs : ys;
    std::memcpy(dst + e * es, static_cast<const unsigned char*>(src.raw()) + e * es, es);
  }
  return {out};
}

std::vector<Tensor> eval_clip(Ctx& c) {
  const Tensor& x = c.in(0);
  require_numeric(x);
  bool fl = float_lane(x.dtype());
  double lo = -INFINITY, hi = INFINITY;
  if (c.num_inputs() == 1) {  // opset < 11: bounds are attributes
    lo = c.node.attr_float("min", -INFINITY);
    hi = c.node.attr_float("max", INFINITY);
  }
  if (const Tensor* t = c.opt_in(1)) lo = scalar_f64(c, *t);
  if (const Tensor* t = c.opt_in(2)) hi = scalar_f64(c, *t);
  Tensor out = c.make(x.dtype(), x.dims());
  for (int64_t e = 0; e < x.numel(); ++e) {
    if (fl) set_f64(out, e, std::min(std::max(x.get_f64(e), lo), hi));
    else set_i64(out, e, static_cast<int64_t>(std::min(std::max(static_cast<double>(x.get_i64(e)), lo), hi)));
  }
  return {out};
}

std::vector<Tensor> eval_isnan(Ctx& c) {
  const Tensor& x = c.in(0);
  require_numeric(x);
  if (!float_lane(x.dtype())) throw NotEvaluable{};
  Tensor out = c.make(DType::Bool, x.dims());
  for (int64_t e = 0; e < x.numel(); ++e) set_i64(out, e, std::isnan(x.get_f64(e)) ? 1 : 0);
  return {out};
}

// A cast to an 8- or 4-bit float reads the node's `saturate` (opset 19) and `round_mode` (opset 24, E8M0);
// the value goes through float32 first, as in the kernels and ONNX's reference.
std::vector<Tensor> cast_to(Ctx& c, const Tensor& x, DType to) {
  require_numeric(x);
  if (to == DType::String || dtype_size(to) == 0 || to == DType::Complex64 || to == DType::Complex128)
    throw NotEvaluable{};
  Tensor out = c.make(to, x.dims());
  bool fl = float_lane(x.dtype());
  if (dtype_is_narrow_float(to)) {
    bool saturate = c.node.attr_int("saturate", 1) != 0;
    E8M0Round mode = E8M0Round::Up;
    if (!e8m0_round_from_name(c.node.attr_string("round_mode", "up"), &mode)) throw NotEvaluable{};
    for (int64_t e = 0; e < x.numel(); ++e) {
      float v = static_cast<float>(fl ? x.get_f64(e) : static_cast<double>(x.get_i64(e)));
      out.mutable_data<uint8_t>()[e] =
          to == DType::Float8E8M0 ? f32_to_e8m0(v, saturate, mode) : f32_to_float8(v, to, saturate);
    }
    return {out};
  }
  for (int64_t e = 0; e < x.numel(); ++e) {
    if (fl) set_f64(out, e, x.get_f64(e));
    else set_i64(out, e, x.get_i64(e));
  }
  return {out};
}

std::vector<Tensor> eval_cast(Ctx& c) {
  int64_t to = c.node.attr_int("to", 0);
  user_check(dtype_is_valid(static_cast<int32_t>(to))) << c.where() << "invalid 'to' dtype " << to;
  return cast_to(c, c.in(0), static_cast<DType>(to));
}

std::vector<Tensor> eval_cast_like(Ctx& c) { return cast_to(c, c.in(0), c.in(1).dtype()); }

}  // namespace

void add_elementwise_evals(EvalTable& t) {
  for (const auto& [name, op] : unary_ops()) t.add(name, eval_unary);
  for (const auto& [name, op] : binary_ops()) t.add(name, eval_binary);
  t.add("Where", eval_where);
  t.add("Clip", eval_clip);
  t.add("IsNaN", eval_isnan);
  t.add("Cast", eval_cast);
  t.add("CastLike", eval_cast_like);
}

}  // namespace onnxc::ir::eval_detail
