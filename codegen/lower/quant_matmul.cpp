// onnxc.DynamicQuantMatMul (written by passes/quantize_dynamic_int8.cpp for `--quantize
// dynamic-int8`): the int8 weight qb was quantized per output column at compile time (scale s_b);
// each row of A is quantized at run time over its own range, A[m, k] ≈ lo[m] + s[m]·q[m, k] with
// q in 0..255 (u8, asymmetric: one-sided rows such as GELU outputs keep all 256 levels), so
//   Y[m, n] = s_b[n] · (s[m] · Σ_k q[m, k]·qb[k, n] + lo[m] · Σ_k qb[k, n])
// and the sum runs on u8 × s8 dot products in int32 (VNNI, or vpmaddwd on int16 pairs where there is none). A row holding NaN or ±inf gives a NaN
// row, never a silently finite answer. Loops: schedule/gemm_int8.cpp.
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
  user_check(qb && qb->dtype() == ir::DType::Int8 && qb->rank() == 2)
      << node.describe() << ": the weight must be a constant int8 matrix";
  const int64_t k_ext = qb->dims()[0], n_ext = qb->dims()[1];
  user_check(sb && sb->dtype() == ir::DType::Float32 && sb->numel() == n_ext)
      << node.describe() << ": the weight scale must be a constant float32 [N]";

  // Constants: the packed weight, and per column its scale and Σ_k qb, both zero in the padding.
  Int8GemmFuncs g;
  // The kernel is compiled for with_dot_products(target) (kernel_builder.cpp), so it is sized for it.
  g.block = int8_block(describe(with_dot_products(ctx.target)));
  const int kg = g.block.k_group;
  ir::Tensor packed = pack_int8_panels(*qb, g.block);
  const int width = g.block.width;
  const int64_t np = packed.dims()[0] * width, kp = packed.dims()[1] * kg;
  ir::Tensor sums(ir::DType::Int32, {np}), scale(ir::DType::Float32, {np});
  const auto* qv = static_cast<const int8_t*>(qb->raw());
  const auto* sv = static_cast<const float*>(sb->raw());
  for (int64_t n = 0; n < n_ext; ++n) {
    int32_t sum = 0;
    for (int64_t k = 0; k < k_ext; ++k) sum += qv[k * n_ext + n];
    sums.mutable_data<int32_t>()[n] = sum;
    scale.mutable_data<float>()[n] = sv[n];
  }
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

  // The quantized row: q = round((a - lo) / s) in [0, 255], s = (hi - lo) / 255, so a ≈ lo + s·q;
  // k past K reads 0, which meets zero weights anyway. Differences are taken on halved operands:
  // a finite row spanning more than FLT_MAX (lo = -3e38, hi = 3e38) would overflow hi - lo to inf
  // and turn into NaN; halving is exact (normal floats), so other rows get the same bits as before.
  Expr lo = g.lo(m), hi = g.hi(m);
  Expr step = (hi * 0.5f - lo * 0.5f) / 127.5f;
  Expr recip = 1.0f / step;  // inf for a subnormal step: such a row is quantized to its low end
  Expr inv2 = select(step > 0.0f && is_finite(recip), recip * 2.0f, 0.0f);
  Expr q = clamp(round((a_at(k, m) * 0.5f - lo * 0.5f) * inv2), 0.0f, 255.0f);
  // Pairs of int16 (k group 2) are what vpmaddwd multiplies: the row is stored widened once.
  const Type row_type = kg == 2 ? Int(16) : UInt(8);
  g.aq = Func("int8_rows");
  g.aq(k, m) = select(k < k_end, cast(row_type, q), cast(row_type, 0));

  g.r = RDom(0, kg, 0, static_cast<int>(kp / kg), "r");
  g.acc = Func("int8_acc");
  g.acc(n, m) = 0;
  g.acc(n, m) += cast<int32_t>(g.aq(g.r.y * kg + g.r.x, m)) * cast<int32_t>(bp.at({n / width, g.r.y, (n % width) * kg + g.r.x}));

  // Σ_k a·w ≈ s_w[n] · (s·Σ_k q·qw + lo·Σ_k qw). The two terms cancel; for rows near FLT_MAX
  // each would overflow while their sum does not, so such rows are summed scaled by 2^-64 (exact;
  // other rows multiply by 1 and keep their bits).
  Func result("int8_matmul");
  Expr t = select(max(abs(lo), abs(hi)) > 1e30f, Expr(0x1p-64f), Expr(1.0f));
  Expr sum = (step * t) * cast<float>(g.acc(n, m)) + (lo * t) * cast<float>(colsum.at({n}));
  Expr value = sc.at({n}) * sum * (1.0f / t);
  result(n, m) = select(is_finite(hi), value, Expr(std::numeric_limits<float>::quiet_NaN()));
  ctx.schedule = [g](Func output, const Target& t) { schedule_int8_gemm(g, output, t); };
  ctx.kclass = KernelClass::MatMul;
  return {HTensor{result, ctx.out_shape.at(0), ir::DType::Float32}};
}

const Registrar kDynamicQuantMatMul("onnxc", "DynamicQuantMatMul", KernelClass::MatMul, lower_dynamic_quant_matmul);

}  // namespace
}  // namespace onnxc::codegen
