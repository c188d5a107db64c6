// Contractions: MatMul (numpy rules, 1-D operands included), Gemm, Einsum, the quantized
// MatMulInteger/QLinearMatMul, and Det.
#include <map>

#include "ir/infer/context.h"

namespace onnxc::ir {
namespace {

// Dims a contraction pairs up must agree when both are known.
void check_same(const InferContext& ctx, const Dim& a, const Dim& b, const char* what) {
  infer_check(ctx, !(a.is_const() && b.is_const()) || a == b)
      << what << " dims differ: " << a.str() << " vs " << b.str();
}

std::optional<Shape> matmul_shape(const InferContext& ctx, size_t ia, size_t ib) {
  const auto &sa = ctx.in_shape(ia), &sb = ctx.in_shape(ib);
  if (!sa || !sb) return std::nullopt;
  infer_check(ctx, !sa->empty() && !sb->empty()) << "operands must not be scalars";
  Shape a = *sa, b = *sb;
  if (a.size() == 1) a.insert(a.begin(), Dim(1));
  if (b.size() == 1) b.push_back(Dim(1));
  check_same(ctx, a.back(), b[b.size() - 2], "contracted");
  auto batch = broadcast_shapes(ctx, {Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2)});
  Shape out = *batch;
  if (sa->size() > 1) out.push_back(a[a.size() - 2]);
  if (sb->size() > 1) out.push_back(b.back());
  return out;
}

void infer_matmul(InferContext& ctx) { ctx.set_tensor(0, ctx.in_dtype(0), matmul_shape(ctx, 0, 1)); }
void infer_matmul_integer(InferContext& ctx) { ctx.set_tensor(0, DType::Int32, matmul_shape(ctx, 0, 1)); }
void infer_qlinear_matmul(InferContext& ctx) { ctx.set_tensor(0, ctx.in_dtype(7), matmul_shape(ctx, 0, 3)); }

void infer_gemm(InferContext& ctx) {
  const auto &sa = ctx.in_shape(0), &sb = ctx.in_shape(1);
  std::optional<Shape> out;
  if (sa && sb) {
    infer_check(ctx, sa->size() == 2 && sb->size() == 2)
        << "expects 2-D operands, got " << shape_str(*sa) << " and " << shape_str(*sb);
    bool ta = ctx.node().attr_int("transA", 0) != 0, tb = ctx.node().attr_int("transB", 0) != 0;
    check_same(ctx, (*sa)[ta ? 0 : 1], (*sb)[tb ? 1 : 0], "contracted");
    out = Shape{(*sa)[ta ? 1 : 0], (*sb)[tb ? 0 : 1]};
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
}

void infer_det(InferContext& ctx) {
  std::optional<Shape> out;
  if (const auto& s = ctx.in_shape(0)) {
    infer_check(ctx, s->size() >= 2) << "expects rank >= 2, got " << shape_str(*s);
    out = Shape(s->begin(), s->end() - 2);
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
}

// ---- Einsum ----

struct EinsumTerm {
  std::string letters;
  bool ellipsis = false;
  size_t ellipsis_at = 0;  // letter index where "..." stands
};

EinsumTerm parse_term(const std::string& t) {
  EinsumTerm r;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == ' ') continue;
    if (t[i] == '.') {
      r.ellipsis = true;
      r.ellipsis_at = r.letters.size();
      i += 2;
      continue;
    }
    r.letters += t[i];
  }
  return r;
}

std::vector<std::string> split_terms(const std::string& s) {
  std::vector<std::string> r(1);
  for (char c : s) {
    if (c == ',') r.emplace_back();
    else r.back() += c;
  }
  return r;
}

void infer_einsum(InferContext& ctx) {
  std::string eq = ctx.node().attr_string("equation", "");
  size_t arrow = eq.find("->");
  auto ins = split_terms(eq.substr(0, arrow));
  infer_check(ctx, ins.size() == ctx.num_inputs())
      << "equation '" << eq << "' has " << ins.size() << " terms for " << ctx.num_inputs() << " inputs";
  std::map<char, Dim> dims;
  std::map<char, int> count;
  std::optional<Shape> ell = Shape{};
  for (size_t i = 0; i < ins.size(); ++i) {
    EinsumTerm t = parse_term(ins[i]);
    for (char c : t.letters) ++count[c];
    const auto& s = ctx.in_shape(i);
    if (!s) {
      if (t.ellipsis) ell.reset();
      continue;
    }
    size_t n_ell = s->size() - t.letters.size();
    infer_check(ctx, s->size() >= t.letters.size() && (t.ellipsis || n_ell == 0))
        << "term '" << ins[i] << "' does not fit " << shape_str(*s);
    for (size_t k = 0; k < t.letters.size(); ++k) {
      const Dim& d = (*s)[k < t.ellipsis_at || !t.ellipsis ? k : k + n_ell];
      auto it = dims.find(t.letters[k]);
      if (it == dims.end() || it->second == Dim(1) || it->second.is_unknown()) dims[t.letters[k]] = d;
    }
    if (t.ellipsis && ell)
      ell = broadcast_shapes(ctx, {ell, Shape(s->begin() + t.ellipsis_at, s->begin() + t.ellipsis_at + n_ell)});
  }
  EinsumTerm out;
  if (arrow != std::string::npos) {
    out = parse_term(eq.substr(arrow + 2));
  } else {
    out.ellipsis = true;
    for (const auto& [c, n] : count)
      if (n == 1) out.letters += c;
  }
  Shape shape;
  for (size_t k = 0; k <= out.letters.size(); ++k) {
    if (out.ellipsis && k == out.ellipsis_at) {
      if (!ell) {
        ctx.set_tensor(0, ctx.in_dtype(0), std::nullopt);
        return;
      }
      shape.insert(shape.end(), ell->begin(), ell->end());
    }
    if (k < out.letters.size()) {
      auto it = dims.find(out.letters[k]);
      shape.push_back(it == dims.end() ? Dim::unknown() : it->second);
    }
  }
  ctx.set_tensor(0, ctx.in_dtype(0), shape);
}

}  // namespace

void add_matmul_ops(OpTable& t) {
  t.add_all({"MatMul"}, 0, infer_matmul);
  t.add_all({"MatMulInteger"}, 0, infer_matmul_integer);
  t.add_all({"QLinearMatMul"}, 0, infer_qlinear_matmul);
  t.add_all({"Gemm"}, 0, infer_gemm);
  t.add_all({"Einsum"}, 0, infer_einsum);
  t.add_all({"Det"}, 0, infer_det);
}

}  // namespace onnxc::ir
