// MatMul and Gemm lowerings: numpy-style batched matmul (1-D operands, broadcast batch dims) and
// Gemm (transA/transB, alpha, beta, broadcast C). Constant weights are packed into column panels at
// compile time; the loops are in schedule/gemm.cpp.
#include <functional>
#include <optional>

#include "codegen/lower/lower.h"
#include "codegen/lower/lower_util.h"
#include "codegen/schedule/gemm.h"
#include "ir/error.h"

namespace onnxc::codegen {
namespace {

using namespace Halide;

// Index into an operand dim of extent `ext` broadcast against output index `v`: 0 for a static 1,
// `v` for another static extent (then it equals the output's), min(v, ext-1) for a symbolic one,
// which is 0 when it is 1 at run time and `v` otherwise.
Expr broadcast_index(const Expr& ext, const Expr& v) {
  if (Internal::is_const_one(ext)) return 0;
  if (Internal::as_const_int(ext)) return v;
  return min(v, ext - 1);
}

std::optional<int64_t> static_extent(const Expr& e) {
  if (const int64_t* c = Internal::as_const_int(e)) return *c;
  return std::nullopt;
}

// A·B in matrix form, whatever the op: operands as given plus how to read them.
struct Product {
  HTensor a, b;
  bool trans_a = false, trans_b = false;
  bool a_vec = false, b_vec = false;  // 1-D MatMul operands
  const ir::Tensor* b_const = nullptr;
  std::vector<Expr> out_shape;        // ONNX order
};

// Batch indices of operand `t` (rank-2 trailing matrix dims) for output batch vars given in ONNX
// order; operand batch dims align to the right, numpy style.
std::vector<Expr> batch_index(const HTensor& t, int matrix_dims, const std::vector<Expr>& out_batch) {
  int tb = t.rank() - matrix_dims;
  std::vector<Expr> idx;
  for (int j = 0; j < tb; ++j)
    idx.push_back(broadcast_index(t.shape[j], out_batch[out_batch.size() - tb + j]));
  return idx;
}

struct Built {
  GemmFuncs g;
  std::vector<Var> acc_vars;  // n, m, batch (innermost first)
  std::vector<Expr> out_batch;  // batch vars, ONNX order
};

// Defines acc(n, m, batch..) = Σ_k A(m, k)·B(k, n), packing or staging B as the target wants.
Built build_product(LowerContext& ctx, const Product& p) {
  const int ra = p.a.rank(), rb = p.b.rank();
  const Expr k_ext = p.a_vec ? p.a.shape[0] : p.a.shape[p.trans_a ? ra - 2 : ra - 1];
  const Expr m_ext = p.a_vec ? Expr(1) : p.a.shape[p.trans_a ? ra - 1 : ra - 2];
  const Expr n_ext = p.b_vec ? Expr(1) : p.b.shape[p.trans_b ? rb - 2 : rb - 1];
  const int nbatch = static_cast<int>(p.out_shape.size()) - (p.a_vec ? 0 : 1) - (p.b_vec ? 0 : 1);

  Built out;
  Var n("n"), m("m");
  out.acc_vars = {n, m};
  for (int i = 0; i < nbatch; ++i) out.acc_vars.push_back(Var(std::string("b").append(std::to_string(i))));
  for (int i = nbatch - 1; i >= 0; --i) out.out_batch.push_back(out.acc_vars[2 + i]);

  // f16/bf16 products are summed in f32 and rounded once, as ONNX Runtime does.
  const Type acc_t = accumulator_type(halide_type(p.a.dtype));
  const bool cpu = !ctx.target.has_gpu_feature();
  const bool f32 = p.a.dtype == ir::DType::Float32 && p.b.dtype == ir::DType::Float32;
  const auto n_static = static_extent(n_ext);
  out.g.blocked = cpu && f32 && !p.a_vec && !p.b_vec && n_static.value_or(16) >= 16;
  // A run-time N (attention's key length) gets 64-wide panels: no padding for powers of two.
  out.g.m_static = static_extent(m_ext);
  out.g.panel = choose_panel(n_static.value_or(64), describe(ctx.target), static_extent(k_ext).value_or(0),
                             out.g.m_static.value_or(-1));
  const int width = out.g.panel.width;

  // A(m, k), rows clamped so a register block may run past the last row (its rows are not stored).
  auto a_at = [&](const Expr& k, const Expr& row, const std::vector<Expr>& ob) {
    if (p.a_vec) return p.a.at({k});
    std::vector<Expr> idx = batch_index(p.a, 2, ob);
    Expr r = min(row, m_ext - 1);
    if (p.trans_a) idx.insert(idx.end(), {k, r}); else idx.insert(idx.end(), {r, k});
    return p.a.at(idx);
  };
  // B(k, n), columns clamped for the same reason.
  auto b_at = [&](const Expr& k, const Expr& col, const std::vector<Expr>& ob) {
    if (p.b_vec) return p.b.at({k});
    std::vector<Expr> idx = batch_index(p.b, 2, ob);
    Expr c = min(col, n_ext - 1);
    if (p.trans_b) idx.insert(idx.end(), {c, k}); else idx.insert(idx.end(), {k, c});
    return p.b.at(idx);
  };

  RDom k(0, k_ext, "k");
  out.g.k = k;
  // B(k, n) as the product reads it. GPU targets pack a constant f32 B too (panels as wide as a
  // thread block's columns: each k row of a block's columns is one contiguous, coalesced read); a
  // run-time B is read where it lies.
  const bool gpu_panels = !cpu && f32 && p.b_const && !p.a_vec && !p.b_vec && n_static.value_or(0) >= 16;
  std::function<Expr(const Expr&)> b_value;
  if ((out.g.blocked || gpu_panels) && p.b_const) {
    ir::Tensor packed = pack_panels(*p.b_const, p.trans_b, width);
    HTensor bp = ctx.add_constant("b_panels", std::move(packed));
    b_value = [bp, n, width, ob = out.out_batch, b = p.b](const Expr& kk) {
      std::vector<Expr> idx = batch_index(b, 2, ob);
      idx.insert(idx.end(), {n / width, kk, n % width});
      return bp.at(idx);
    };
  } else if (out.g.blocked) {
    Func stage("b_panels");
    Var i("i"), kk("kk"), pn("p");
    std::vector<Var> sargs = {i, kk, pn};
    sargs.insert(sargs.end(), out.acc_vars.begin() + 2, out.acc_vars.end());
    stage(sargs) = b_at(kk, pn * width + i, out.out_batch);
    out.g.b_stage = stage;
    b_value = [stage, n, width, batch = std::vector<Var>(out.acc_vars.begin() + 2, out.acc_vars.end())](const Expr& kk) {
      std::vector<Expr> sidx = {n % width, kk, n / width};
      sidx.insert(sidx.end(), batch.begin(), batch.end());
      return stage(sidx);
    };
  } else {
    b_value = [&b_at, n, ob = out.out_batch](const Expr& kk) { return b_at(kk, n, ob); };
  }
  Expr a_val = a_at(k.x, m, out.out_batch), b_val = b_value(k.x);
  if (!cpu && !p.a_vec && !p.b_vec) {
    // GPU schedules stage tiles of A and B in shared memory (gpu_gemm.cpp). The tiles are Funcs of
    // their own with k clamped as rows and columns are, so a tile may cover k, rows and columns
    // past the ends: those values are loaded but feed no output.
    Var kk("kk");
    std::vector<Var> batch(out.acc_vars.begin() + 2, out.acc_vars.end());
    std::vector<Var> a_args = {kk, m}, b_args = {n, kk};
    a_args.insert(a_args.end(), batch.begin(), batch.end());
    b_args.insert(b_args.end(), batch.begin(), batch.end());
    Func a_tile("gemm_a_tile"), b_tile("gemm_b_tile");
    a_tile(a_args) = a_at(min(kk, k_ext - 1), m, out.out_batch);
    b_tile(b_args) = b_value(min(kk, k_ext - 1));
    std::vector<Expr> a_idx = {k.x, m}, b_idx = {n, k.x};
    a_idx.insert(a_idx.end(), batch.begin(), batch.end());
    b_idx.insert(b_idx.end(), batch.begin(), batch.end());
    a_val = a_tile(a_idx);
    b_val = b_tile(b_idx);
    out.g.a_tile = a_tile;
    out.g.b_tile = b_tile;
  }

  Func acc("matmul_acc");
  acc(out.acc_vars) = cast(acc_t, 0);
  acc(out.acc_vars) += cast(acc_t, a_val) * cast(acc_t, b_val);
  ctx.reassociable.push_back(acc);
  // Until the schedule callback places them per output tile (and if it never runs: emission gives
  // a fresh output its default schedule when a Func is shared), the product is computed whole.
  acc.compute_root();
  if (out.g.b_stage.defined()) out.g.b_stage.compute_root();
  out.g.acc = acc;
  out.g.a_vector = p.a_vec;
  out.g.b_vector = p.b_vec;
  return out;
}

// The output Func over ONNX output dims: `value(acc_ref)` maps acc(n, m, batch) to the element.
HTensor finish(LowerContext& ctx, const Product& p, Built& b, const std::function<Expr(Expr, Var, Var)>& value) {
  std::vector<Var> vars;  // output vars, innermost first
  Var n = b.acc_vars[0], m = b.acc_vars[1];
  if (!p.b_vec) vars.push_back(n);
  if (!p.a_vec) vars.push_back(m);
  std::vector<Expr> acc_idx = {p.b_vec ? Expr(0) : Expr(n), p.a_vec ? Expr(0) : Expr(m)};
  for (size_t i = 2; i < b.acc_vars.size(); ++i) vars.push_back(b.acc_vars[i]), acc_idx.push_back(b.acc_vars[i]);

  Func result(ctx.node.op_type() == "Gemm" ? "gemm" : "matmul");
  result(vars) = cast(halide_type(p.a.dtype), value(b.g.acc(acc_idx), n, m));
  GemmFuncs g = b.g;
  ctx.schedule = [g](Func output, const Target& t) { schedule_gemm(g, output, t); };
  ctx.kclass = KernelClass::MatMul;
  return HTensor{result, p.out_shape, p.a.dtype};
}

std::vector<HTensor> lower_matmul(LowerContext& ctx) {
  Product p;
  p.a = ctx.in.at(0);
  p.b = ctx.in.at(1);
  user_check(p.a.rank() >= 1 && p.b.rank() >= 1) << ctx.node.describe() << ": MatMul operands must have rank >= 1";
  p.a_vec = p.a.rank() == 1;
  p.b_vec = p.b.rank() == 1;
  p.b_const = ctx.const_in.data(1);
  p.out_shape = ctx.out_shape.at(0);
  Built b = build_product(ctx, p);
  return {finish(ctx, p, b, [](Expr acc, Var, Var) { return acc; })};
}

std::vector<HTensor> lower_gemm(LowerContext& ctx) {
  const ir::Node& node = ctx.node;
  Product p;
  p.a = ctx.in.at(0);
  p.b = ctx.in.at(1);
  user_check(p.a.rank() == 2 && p.b.rank() == 2) << node.describe() << ": Gemm operands must be matrices";
  p.trans_a = node.attr_int("transA", 0) != 0;
  p.trans_b = node.attr_int("transB", 0) != 0;
  p.b_const = ctx.const_in.data(1);
  p.out_shape = ctx.out_shape.at(0);
  const float alpha = node.attr_float("alpha", 1.0f);
  const float beta = node.attr_float("beta", 1.0f);
  const HTensor c = ctx.in.size() > 2 ? ctx.in[2] : HTensor{};
  user_check(!c.defined() || c.rank() <= 2) << node.describe() << ": Gemm's C must have rank <= 2";

  Built b = build_product(ctx, p);
  const Type acc_t = b.g.acc.output_types().at(0);
  auto value = [&](Expr acc, Var n, Var m) {
    Expr v = alpha == 1.0f ? acc : acc * cast(acc_t, alpha);
    if (c.defined() && beta != 0.0f) {
      std::vector<Expr> idx;
      if (c.rank() == 2) idx.push_back(broadcast_index(c.shape[0], m));
      if (c.rank() >= 1) idx.push_back(broadcast_index(c.shape[c.rank() - 1], n));
      Expr cv = cast(acc_t, c.at(idx));
      v += beta == 1.0f ? cv : cv * cast(acc_t, beta);
    }
    return v;
  };
  return {finish(ctx, p, b, value)};
}

const Registrar kMatMul("", "MatMul", KernelClass::MatMul, lower_matmul);
const Registrar kGemm("", "Gemm", KernelClass::MatMul, lower_gemm);

}  // namespace
}  // namespace onnxc::codegen
