// onnxc.DynamicQuantMatMul (written by passes/quantize_dynamic_int8.cpp for `--quantize
// dynamic-int8`): the int8 weight qb was quantized per output column at compile time (scale s_b);
// each row of A is quantized at run time over its own range, A[m, k] ≈ lo[m] + s[m]·q[m, k] with
// q in 0..255 (u8, asymmetric: one-sided rows such as GELU outputs keep all 256 levels), so
//   Y[m, n] = s_b[n] · (s[m] · Σ_k q[m, k]·qb[k, n] + lo[m] · Σ_k qb[k, n])
// and the sum runs on u8 × s8 dot products in int32 (VNNI, or vpmaddwd on int16 pairs where there is
// none). With the attribute wide_rows = 1 the rows take up to 32767 levels instead of 256 and the
// sum runs on int16 pairs on every target. A row holding NaN or ±inf gives a NaN row, never a
// silently finite answer. Loops: schedule/gemm_int8.cpp.
#include <algorithm>
#include <cmath>
#include <limits>

#include "codegen/lower/lower.h"
#include "codegen/lower/lower_util.h"
#include "codegen/schedule/gemm_int8.h"
#include "codegen/target.h"
#include "ir/error.h"

namespace onnxc::codegen {
namespace {

using namespace Halide;

constexpr int kMaxLanes = 16;  // partial maxima per row: one zmm of floats

std::vector<HTensor> lower_dynamic_quant_matmul(LowerContext& ctx) {
  const ir::Node& node = ctx.node;
  const HTensor& a = ctx.in.at(0);
  const ir::Tensor* qb = ctx.const_in.data(1);
  const ir::Tensor* sb = ctx.const_in.data(2);
  user_check(!ctx.target.has_gpu_feature()) << node.describe() << ": int8 quantization is for CPU targets";
  user_check(a.rank() == 2 && a.dtype == ir::DType::Float32) << node.describe() << ": A must be a float32 matrix";
  const bool wide = node.attr_int("wide_rows", 0) != 0;
  user_check(qb && (qb->dtype() == ir::DType::Int8 || (wide && qb->dtype() == ir::DType::Int16)) && qb->rank() == 2)
      << node.describe() << ": the weight must be a constant int8 matrix (int16 with wide_rows = 1)";
  const int64_t k_ext = qb->dims()[0], n_ext = qb->dims()[1];
  user_check(sb && sb->dtype() == ir::DType::Float32 && sb->numel() == n_ext)
      << node.describe() << ": the weight scale must be a constant float32 [N]";

  // Constants: the packed weight, and per column its scale and Σ_k qb, both zero in the padding.
  Int8GemmFuncs g;
  // The kernel is compiled for with_dot_products(target) (kernel_builder.cpp), so it is sized for it.
  // Wide rows (the pass sets wide_rows on attention outputs) take int16 pairs on every target.
  TargetDesc desc = describe(with_dot_products(ctx.target));
  if (wide) desc.int8_dot = Int8Dot::Int16Pairs;
  g.block = int8_block(desc);
  const int kg = g.block.k_group;
  ir::Tensor packed = pack_int8_panels(*qb, g.block);
  const int width = g.block.width;
  const int64_t np = packed.dims()[0] * width, kp = packed.dims()[1] * kg;
  ir::Tensor sums(ir::DType::Int32, {np}), scale(ir::DType::Float32, {np});
  auto qv = [&](int64_t i) -> int32_t {
    return qb->dtype() == ir::DType::Int8 ? static_cast<const int8_t*>(qb->raw())[i] : static_cast<const int16_t*>(qb->raw())[i];
  };
  const auto* sv = static_cast<const float*>(sb->raw());
  int32_t wmax = 1;
  for (int64_t n = 0; n < n_ext; ++n) {
    int64_t sum = 0;
    for (int64_t k = 0; k < k_ext; ++k) sum += qv(k * n_ext + n), wmax = std::max(wmax, std::abs(qv(k * n_ext + n)));
    user_check(sum == static_cast<int32_t>(sum)) << node.describe() << ": a weight column's sum exceeds int32";
    sums.mutable_data<int32_t>()[n] = static_cast<int32_t>(sum);
    scale.mutable_data<float>()[n] = sv[n];
  }
  // Levels of a quantized row: 255 (u8), or with wide rows as many as keep every int32 sum exact,
  // K·levels·max|qb| < 2^31, at most int16's 32767 (K = 768 with the pass's ±1672 weights: 1672).
  const double levels =
      wide ? std::clamp(std::floor(2147483647.0 / (static_cast<double>(wmax) * static_cast<double>(k_ext))), 255.0, 32767.0)
           : 255.0;
  user_check(!wide || levels * wmax * static_cast<double>(k_ext) < 2147483648.0)
      << node.describe() << ": the int16 weight is too wide for exact int32 sums over K = " << k_ext;
  HTensor bp = ctx.add_constant("int8_panels", std::move(packed));
  HTensor colsum = ctx.add_constant("int8_colsum", std::move(sums));
  HTensor sc = ctx.add_constant("int8_scale", std::move(scale));

  const Expr m_ext = a.shape[0];
  auto a_at = [&](const Expr& k, const Expr& m) { return a.at({clamp(m, 0, m_ext - 1), min(k, Expr(static_cast<int>(k_ext) - 1))}); };

  // The row's range [lo, hi] from vector-wide partial extrema; a non-finite element makes hi +inf.
  const Expr kInf = Expr(std::numeric_limits<float>::infinity());
  const Expr k_end = Expr(static_cast<int>(k_ext));
  Var l("l"), m("m"), k("k"), n("n");
  RDom j(0, static_cast<int>((k_ext + kMaxLanes - 1) / kMaxLanes), "j");
  Expr idx = j * kMaxLanes + l;
  Expr x = a_at(idx, m);  // past K: a repeat of the last element, which changes neither extreme
  g.lo_part = Func("int8_lo_part");
  g.lo_part(l, m) = kInf;
  g.lo_part(l, m) = min(g.lo_part(l, m), select(is_finite(x), x, kInf));
  g.hi_part = Func("int8_hi_part");
  g.hi_part(l, m) = -kInf;
  g.hi_part(l, m) = max(g.hi_part(l, m), select(is_finite(x), x, kInf));
  RDom lanes(0, kMaxLanes, "lanes");
  g.lo = Func("int8_lo");
  g.lo(m) = kInf;
  g.lo(m) = min(g.lo(m), g.lo_part(lanes, m));
  g.hi = Func("int8_hi");
  g.hi(m) = -kInf;
  g.hi(m) = max(g.hi(m), g.hi_part(lanes, m));

  // The quantized row: q = round((a - lo) / s) in [0, levels], s = (hi - lo) / levels, so a ≈ lo + s·q;
  // k past K reads 0, which meets zero weights anyway. Differences are taken on halved operands:
  // a finite row spanning more than FLT_MAX (lo = -3e38, hi = 3e38) would overflow hi - lo to inf
  // and turn into NaN; halving is exact (normal floats), so other rows get the same bits as before.
  Expr lo = g.lo(m), hi = g.hi(m);
  const float top = static_cast<float>(levels);
  Expr step = (hi * 0.5f - lo * 0.5f) / (top * 0.5f);
  Expr recip = 1.0f / step;  // inf for a subnormal step: such a row is quantized to its low end
  Expr inv2 = select(step > 0.0f && is_finite(recip), recip * 2.0f, 0.0f);
  Expr q = clamp(round((a_at(k, m) * 0.5f - lo * 0.5f) * inv2), 0.0f, top);
  // Pairs of int16 (k group 2) are what vpmaddwd multiplies: the row is stored widened once. ARM's
  // sdot multiplies like-signed bytes, so there the row is stored as q - 128 (s8, exact) and the
  // int32 sum gets 128·Σ_k qb back below: the same int32 as u8 × s8.
  const bool sdot = kg == 4 && desc.int8_dot == Int8Dot::ArmSdot;
  const Type row_type = kg == 2 ? Int(16) : sdot ? Int(8) : UInt(8);
  g.aq = Func("int8_rows");
  g.aq(k, m) = select(k < k_end, sdot ? cast(row_type, cast<int32_t>(q) - 128) : cast(row_type, q), cast(row_type, 0));

  g.r = RDom(0, kg, 0, static_cast<int>(kp / kg), "r");
  g.acc = Func("int8_acc");
  g.acc(n, m) = 0;
  g.acc(n, m) += cast<int32_t>(g.aq(g.r.y * kg + g.r.x, m)) * cast<int32_t>(bp.at({n / width, g.r.y, (n % width) * kg + g.r.x}));

  // Σ_k a·w ≈ s_w[n] · (s·Σ_k q·qw + lo·Σ_k qw). The two terms cancel; for rows near FLT_MAX
  // each would overflow while their sum does not, so such rows are summed scaled by 2^-64 (exact;
  // other rows multiply by 1 and keep their bits).
  Func result("int8_matmul");
  Expr t = select(max(abs(lo), abs(hi)) > 1e30f, Expr(0x1p-64f), Expr(1.0f));
  Expr dot = sdot ? g.acc(n, m) + 128 * colsum.at({n}) : g.acc(n, m);  // int32, exact: see the rows
  Expr sum = (step * t) * cast<float>(dot) + (lo * t) * cast<float>(colsum.at({n}));
  Expr value = sc.at({n}) * sum * (1.0f / t);
  result(n, m) = select(is_finite(hi), value, Expr(std::numeric_limits<float>::quiet_NaN()));
  ctx.schedule = [g](Func output, const Target& t) { schedule_int8_gemm(g, output, t); };
  ctx.kclass = KernelClass::MatMul;
  return {HTensor{result, ctx.out_shape.at(0), ir::DType::Float32}};
}

const Registrar kDynamicQuantMatMul("onnxc", "DynamicQuantMatMul", KernelClass::MatMul, lower_dynamic_quant_matmul);

}  // namespace
}  // namespace onnxc::codegen
