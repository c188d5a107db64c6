// com.microsoft.MatMulNBits (ONNX Runtime's block-quantized weight product, also what
// passes/fuse_dequantize_matmul.cpp and `--quantize int4-weights` write): Y = A · W with
//   W[k, n] = (code[n, k] - zero[n, k / block]) · scale[n, k / block]
// codes 4 or 8 bits, packed along k. The weight is never expanded to floats: the kernel sums
// A · code over each block in registers and applies the block's scale and zero point once,
//   Y[m, n] = Σ_b scale[n, b] · (Σ_{k in b} A[m, k]·code[n, k] - zero[n, b] · Σ_{k in b} A[m, k]).
// Loops and layout: schedule/gemm_nbits.cpp.
#include <algorithm>
#include <limits>

#include "codegen/lower/lower.h"
#include "codegen/lower/lower_util.h"
#include "codegen/schedule/gemm_nbits.h"
#include "codegen/target.h"
#include "ir/error.h"

namespace onnxc::codegen {
namespace {

using namespace Halide;

// The weight's description from the node's attributes, with every input's layout checked.
NBitsWeight check_inputs(const LowerContext& ctx) {
  const ir::Node& node = ctx.node;
  NBitsWeight w;
  w.bits = static_cast<int>(node.attr_int("bits", 4));
  w.block = node.attr_int("block_size", 0);
  w.k = node.attr_int("K", 0);
  w.n = node.attr_int("N", 0);
  user_check(w.bits == 4 || w.bits == 8) << node.describe() << ": bits " << w.bits << " is not supported (4 or 8)";
  user_check(w.block >= 16 && (w.block & (w.block - 1)) == 0)
      << node.describe() << ": block_size " << w.block << " must be a power of two of at least 16";
  user_check(w.k > 0 && w.n > 0) << node.describe() << ": attributes K and N must be positive";
  user_check(!ctx.target.has_gpu_feature()) << node.describe() << ": MatMulNBits is compiled for CPU targets only";
  const HTensor& a = ctx.in.at(0);
  user_check(a.dtype == ir::DType::Float32)
      << node.describe() << ": A must be float32 (a " << ir::dtype_name(a.dtype) << " A is not supported)";
  const ir::Tensor* b = ctx.const_in.data(1);
  user_check(b && b->dtype() == ir::DType::UInt8 && b->numel() == w.n * w.k_blocks() * w.blob())
      << node.describe() << ": B must be a constant uint8 [N, k_blocks, blob_size] = [" << w.n << ", " << w.k_blocks()
      << ", " << w.blob() << "]";
  const ir::Tensor* s = ctx.const_in.data(2);
  user_check(s && (s->dtype() == ir::DType::Float32 || s->dtype() == ir::DType::Float16) &&
             s->numel() == w.n * w.k_blocks())
      << node.describe() << ": scales must be a constant float [N · k_blocks] = [" << w.n * w.k_blocks() << "]";
  if (has_input(ctx, 3)) {
    const ir::Tensor* z = ctx.const_in.data(3);
    user_check(z && z->dtype() == ir::DType::UInt8 && z->numel() == w.n * ((w.k_blocks() * w.bits + 7) / 8))
        << node.describe() << ": zero_points must be a constant packed uint8 [N · ceil(k_blocks · bits / 8)] (float "
        << "zero points are not supported)";
  }
  user_check(!has_input(ctx, 4)) << node.describe() << ": g_idx (act-order) is not supported";
  if (has_input(ctx, 5)) {
    user_check(ctx.in[5].dtype == ir::DType::Float32 && ctx.in[5].rank() == 1)
        << node.describe() << ": bias must be float32 [N]";
  }
  return w;
}

int64_t node_accuracy_level(const LowerContext& ctx) {
  const int64_t level = ctx.node.attr_int("accuracy_level", 0);
  user_check(level >= 0 && level <= 4) << ctx.node.describe() << ": accuracy_level " << level << " is not 0..4";
  return level;
}

// The one-row kernel with int8 activations (accuracy_level 4), as ONNX Runtime's MLAS quantizes
// them: per k block of the row, s_a = max|a| / 127 and q = round_half_even(a · (127 / max|a|))
// (0 for an all-zero block), so
//   Y[n] = Σ_b scale[n, b] · s_a[b] · (Σ_{k in b} q[k]·code[n, k] - zero[n, b] · Σ_{k in b} q[k])
// with the inner sums exact in int32 (|q·code| ≤ 127·15). A block holding NaN or ±inf has
// max|a| = inf: its q are 0 and s_a = inf, so every output of the row is NaN.
template <typename AAt>
void define_int8_row(NBitsFuncs& g, const NBitsWeight& w, const HTensor& codes, const HTensor& scales,
                     const std::optional<HTensor>& zeros, const AAt& a_at) {
  const int block = static_cast<int>(w.block), words = static_cast<int>(w.blob() / 4);
  const Expr inf = Expr(std::numeric_limits<float>::infinity());
  Var b("b"), t("t"), h("h"), gq("gq"), i("i"), p("p");
  RDom ra(0, block, "ra");
  g.a_amax = Func("nbits_a_amax");
  g.a_amax(b) = 0.0f;
  Expr x = a_at(b * block + ra, 0);
  g.a_amax(b) = max(g.a_amax(b), select(is_finite(x), abs(x), inf));
  // Row byte t of word gq at nibble h: k = 8·gq + 2·t + h (pack_nbits_code_words).
  Expr k = 8 * gq + 2 * t + h, amax = g.a_amax(k / block);
  Expr inv = select(amax > 0.0f && is_finite(amax), 127.0f / amax, 0.0f);
  Expr xk = a_at(k, 0);
  g.a_q = Func("nbits_a_q");
  g.a_q(t, h, gq) = cast<int8_t>(clamp(round(select(is_finite(xk), xk, 0.0f) * inv), -127.0f, 127.0f));
  RDom rq(0, 4, 0, 2, 0, block / 8, "rq");
  g.a_qsum = Func("nbits_a_qsum");
  g.a_qsum(b) = 0;
  g.a_qsum(b) += cast<int32_t>(g.a_q(rq.x, rq.y, b * (block / 8) + rq.z));

  Expr zero = zeros ? cast<int32_t>(zeros->at({p, g.kb, i})) : Expr(static_cast<int32_t>(w.default_zero_point()));
  Expr sum;
  g.dot8 = Func("nbits_dot8");
  if (g.pairs) {
    // vpmaddubsw (AVX2): two u8 codes times two s8 row values summed into an int16 lane, saturating,
    // which never happens here: each product is at most 15·127 = 1905 in magnitude, so the 16 of
    // a lane over 4 words (both nibbles: 32 k) stay within 30480 < 32767. A sub-block of up to 4
    // words therefore sums exactly in int16 (Halide 14 emits vpmaddubsw only for a saturating
    // sum); the sub-blocks and the two pairs of a column's word add up in int32.
    const int sub = std::min(words, 4);
    Var e("e"), s("s");
    g.r16 = RDom(0, 2, 0, 2, 0, sub, "r16");
    Expr word = b * words + s * sub + g.r16.z;
    Expr byte = codes.at({p, word, i * 4 + e * 2 + g.r16.x});
    Expr code = select(g.r16.y == 0, byte & cast<uint8_t>(15), byte >> cast<uint8_t>(4));
    g.dot16 = Func("nbits_dot16");
    g.dot16(e, i, p, b, s) = cast<int16_t>(0);
    g.dot16(e, i, p, b, s) = saturating_add(
        g.dot16(e, i, p, b, s), cast<int16_t>(code) * cast<int16_t>(g.a_q(e * 2 + g.r16.x, g.r16.y, word)));
    // The two pairs of a column into int32 as a product by ones that the simplifier cannot fold
    // (a computed Func): Halide 14 then emits one vpmaddwd, where a plain widening sum of
    // adjacent lanes took four instructions (extract, two sign-extensions, vphaddd).
    g.r8 = RDom(0, 2, 0, words / sub, "r8");
    Var o("o");
    g.pair_ones = Func("nbits_pair_ones");
    g.pair_ones(o) = cast<int16_t>(1);
    g.dot8(i, p, b) = 0;
    g.dot8(i, p, b) += cast<int32_t>(g.dot16(g.r8.x, i, p, b, g.r8.y)) * cast<int32_t>(g.pair_ones(g.r8.x));
    sum = g.dot8(i, p, g.kb) - zero * g.a_qsum(g.kb);
  } else {
    g.r8 = RDom(0, 4, 0, words, "r8");
    Expr byte = codes.at({p, b * words + g.r8.y, i * 4 + g.r8.x});
    Expr code = select(h == 0, byte & cast<uint8_t>(15), byte >> cast<uint8_t>(4));
    g.dot8(i, p, b, h) = 0;
    if (g.signed_codes) code = cast<int8_t>(code);  // 0..15 either way
    g.dot8(i, p, b, h) += cast<int32_t>(code) * cast<int32_t>(g.a_q(g.r8.x, h, b * words + g.r8.y));
    sum = g.dot8(i, p, g.kb, 0) + g.dot8(i, p, g.kb, 1) - zero * g.a_qsum(g.kb);
  }
  g.acc8 = Func("nbits_acc8");
  g.acc8(i, p) = 0.0f;
  g.acc8(i, p) += scales.at({p, g.kb, i}) * ((g.a_amax(g.kb) / 127.0f) * cast<float>(sum));
}

std::vector<HTensor> lower_matmul_nbits(LowerContext& ctx) {
  const NBitsWeight w = check_inputs(ctx);
  const HTensor& a = ctx.in.at(0);
  NBitsFuncs g;
  g.block = nbits_block(describe(ctx.target));
  const int width = g.block.width;
  // accuracy_level 4 lets A be quantized to int8 per block (ONNX Runtime's MatMulNBits contract):
  // the one-row kernel then multiplies in integers where the target has a byte dot product, and reads
  // the codes in 32-bit words (pack_nbits_code_words); the other paths read the same words.
  g.int8 = node_accuracy_level(ctx) == 4 && w.bits == 4 && nbits_int8_dot(ctx.target);
  g.pairs = g.int8 && nbits_int8_pairs(ctx.target);
  g.signed_codes = describe(with_dot_products(ctx.target)).int8_dot == Int8Dot::ArmSdot;
  HTensor codes = ctx.add_constant("nbits_codes", g.int8 ? pack_nbits_code_words(*ctx.const_in.data(1), w, width)
                                                         : pack_nbits_codes(*ctx.const_in.data(1), w, width));
  // Byte j (along the packed k) of column i of panel p, in either layout.
  auto code_byte = [&](const Expr& p, const Expr& j, const Expr& i) {
    return g.int8 ? codes.at({p, j / 4, i * 4 + j % 4}) : codes.at({p, j, i});
  };
  HTensor scales = ctx.add_constant("nbits_scales", pack_nbits_scales(*ctx.const_in.data(2), w, width));
  std::optional<HTensor> zeros;
  if (has_input(ctx, 3))
    zeros = ctx.add_constant("nbits_zero_points", pack_nbits_zero_points(*ctx.const_in.data(3), w, width));

  // A as rows (m) of K: leading dims flattened, row-major.
  const int rank = a.rank();
  Expr m_ext = 1;
  for (int i = 0; i + 1 < rank; ++i) m_ext = m_ext * a.shape[i];
  g.m_extent = Halide::Internal::simplify(m_ext);
  if (const int64_t* c = Halide::Internal::as_const_int(g.m_extent)) g.m_static = *c;
  auto a_at = [&](const Expr& k, const Expr& m) {
    Index idx(rank);
    idx[rank - 1] = min(k, Expr(static_cast<int>(w.k) - 1));
    Expr rest = clamp(m, 0, m_ext - 1);  // rows past M belong to a partial register block
    for (int i = rank - 2; i >= 0; --i) {
      idx[i] = i == 0 ? rest : rest % a.shape[i];
      if (i > 0) rest = rest / a.shape[i];
    }
    Expr v = a.at(idx);
    return w.k % w.block == 0 ? v : select(k < static_cast<int>(w.k), v, 0.0f);  // the last block's padding
  };

  Var i("i"), p("p"), b("b"), m("m"), n("n");
  const int block = static_cast<int>(w.block), blob = static_cast<int>(w.blob());
  RDom r(0, block, "r");
  g.asum = Func("nbits_asum");
  g.asum(b, m) = 0.0f;
  g.asum(b, m) += a_at(b * block + r, m);

  g.j = RDom(0, blob, "j");
  Expr byte = code_byte(p, b * blob + g.j, i);
  g.dot = Func("nbits_dot");
  g.dot(i, p, b, m) = 0.0f;
  if (w.bits == 4) {
    Expr k0 = b * block + 2 * g.j;
    g.dot(i, p, b, m) += a_at(k0, m) * cast<float>(byte & 15) + a_at(k0 + 1, m) * cast<float>(byte >> 4);
  } else {
    g.dot(i, p, b, m) += a_at(b * block + g.j, m) * cast<float>(byte);
  }

  g.kb = RDom(0, static_cast<int>(w.k_blocks()), "kb");
  Expr zero = zeros ? cast<float>(zeros->at({p, g.kb, i})) : Expr(static_cast<float>(w.default_zero_point()));
  g.acc = Func("nbits_acc");
  g.acc(i, p, m) = 0.0f;
  g.acc(i, p, m) += scales.at({p, g.kb, i}) * (g.dot(i, p, g.kb, m) - zero * g.asum(g.kb, m));

  // One row (decode): the codes at even and odd k go to two accumulators (h), so the FMAs of a
  // packed byte no longer wait on each other (8 independent chains per 64 columns on AVX-512). Each
  // nibble costs an AND (and a shift) on 16 bytes, a widening to 32-bit lanes, a conversion and
  // one FMA: LLVM narrows a mask of the widened byte back to bytes, so widening once and masking
  // the 32-bit lanes, or taking floor(byte / 16) in float (split into 256-bit halves on AVX-512:
  // 30% slower in cache), gives no fewer instructions.
  Var h("h");
  g.codes = codes.func;
  // Measured (16 chained 4096 × 4096 products, block 32, 1 thread): 2 to 32 blocks ahead cut the
  // CPU time from DRAM by a third (8.7 → 5.7-5.9 ms) and left the in-cache time level; a quarter
  // of L1 ahead, 8 blocks there. Prefetching the scales and zero points too gained nothing.
  g.prefetch_blocks = std::max<int64_t>(1, describe(ctx.target).l1d_bytes / 4 / (w.blob() * width));
  if (g.int8) {
    define_int8_row(g, w, codes, scales, zeros, a_at);
  } else {
    g.j1 = RDom(0, w.bits == 4 ? blob : blob / 2, "j1");
    g.dot1 = Func("nbits_dot1");
    g.dot1(i, p, b, h) = 0.0f;
    if (w.bits == 4) {
      Expr wide = cast<int32_t>(codes.at({p, b * blob + g.j1, i}));
      Expr code1 = select(h == 0, wide & 15, wide >> 4);
      g.dot1(i, p, b, h) += a_at(b * block + 2 * g.j1 + h, 0) * cast<float>(code1);
    } else {
      g.dot1(i, p, b, h) += a_at(b * block + 2 * g.j1 + h, 0) * cast<float>(codes.at({p, b * blob + 2 * g.j1 + h, i}));
    }
    g.acc1 = Func("nbits_acc1");
    g.acc1(i, p) = 0.0f;
    g.acc1(i, p) += scales.at({p, g.kb, i}) * (g.dot1(i, p, g.kb, 0) + g.dot1(i, p, g.kb, 1) - zero * g.asum(g.kb, 0));
  }

  // Prefill: the weight itself, (code - zero)·scale exactly as DequantizeLinear writes it, one
  // panel at a time, times A in float32.
  Var kk("kk");
  Expr kblk = kk / block;
  Expr code;
  if (w.bits == 4) {
    Expr pair = code_byte(p, kblk * blob + (kk % block) / 2, i);
    code = (pair >> cast<uint8_t>((kk % 2) * 4)) & 15;
  } else {
    code = code_byte(p, kblk * blob + kk % block, i);
  }
  Expr zero_k = zeros ? cast<float>(zeros->at({p, kblk, i})) : Expr(static_cast<float>(w.default_zero_point()));
  g.wdq = Func("nbits_dequantized");
  g.wdq(i, p, kk) = (cast<float>(code) - zero_k) * scales.at({p, kblk, i});
  const int64_t chunk = nbits_f32_chunk(w, width, describe(ctx.target));
  g.kc = RDom(0, static_cast<int>(chunk), "kc");
  g.c = RDom(0, static_cast<int>(w.k_blocks() * w.block / chunk), "c");
  Var c("c");
  g.f32_part = Func("nbits_f32_part");
  g.f32_part(i, p, m, c) = 0.0f;
  Expr kk_c = c * static_cast<int>(chunk) + g.kc;
  // A of rank 3 or more is first copied as rows of K (M·K floats, once per run): read in place, its
  // register block computed each row's index (a division by the sequence length) in the inner
  // loop and spilled accumulators, 25% slower than a rank-2 A.
  if (rank > 2) {
    Var ak("ak");
    g.a_rows = Func("nbits_a_rows");
    g.a_rows(ak, m) = a_at(ak, m);
    g.f32_part(i, p, m, c) += g.a_rows(kk_c, m) * g.wdq(i, p, kk_c);
  } else {
    g.f32_part(i, p, m, c) += a_at(kk_c, m) * g.wdq(i, p, kk_c);
  }
  g.f32_acc = Func("nbits_f32_acc");
  g.f32_acc(i, p, m) = 0.0f;
  g.f32_acc(i, p, m) += g.f32_part(i, p, m, g.c);
  ctx.reassociable.insert(ctx.reassociable.end(), {g.asum, g.dot, g.acc, g.f32_part, g.f32_acc});
  if (g.int8) {
    // Not a_amax: its is_finite test must survive (Halide's default float lowering may assume it).
    ctx.reassociable.insert(ctx.reassociable.end(), {g.acc8});
  } else {
    ctx.reassociable.insert(ctx.reassociable.end(), {g.dot1, g.acc1});
  }

  // The product as (n, m), then in the output's own dims.
  Func y("matmul_nbits");
  Expr f32_value = g.f32_acc(n % width, n / width, m), nbits_value = g.acc(n % width, n / width, m);
  Expr one_value = g.int8 ? g.acc8(n % width, n / width) : g.acc1(n % width, n / width);
  // M can be 1 unless the simplifier proves otherwise (a rank-3 A of [2, m, K] has M = 2·m): then
  // the one-row kernel is left out, and its Funcs are not reached.
  Expr rows_of_one = Halide::Internal::simplify(g.m_extent == 1);
  Expr many = select(g.use_f32(), f32_value, nbits_value);
  Expr value = !g.m_static ? (Halide::Internal::is_const_zero(rows_of_one) ? many : select(rows_of_one, one_value, many))
               : *g.m_static == 1                     ? one_value
               : *g.m_static >= g.block.f32_min_rows ? f32_value
                                                      : nbits_value;  // a static M: one kernel
  if (has_input(ctx, 5)) value = value + ctx.in[5].at({n});
  y(n, m) = value;
  const auto& shape = ctx.out_shape.at(0);
  if (rank == 2) {
    ctx.schedule = [g](Func output, const Target& t) { schedule_nbits_gemm(g, output, t); };
    ctx.kclass = KernelClass::MatMul;
    return {HTensor{y, shape, ir::DType::Float32}};
  }
  // [.., N] with leading dims: rows flattened row-major, the product computed whole first.
  HTensor out = define("matmul_nbits_out", shape, ir::DType::Float32, [&](const Index& o) {
    Expr row = 0;
    for (int d = 0; d + 1 < rank; ++d) row = row * shape[d] + o[d];
    return y(o[rank - 1], row);
  });
  ctx.schedule = [g, y](Func output, const Target& t) {
    Func prod = y;
    prod.compute_root();
    for (int d = 0; d < output.dimensions(); ++d) output.output_buffer().dim(d).set_min(0);  // whole panels
    schedule_nbits_gemm(g, prod, t, /*is_output=*/false);
    Var x = output.args()[0];
    output.vectorize(x, t.natural_vector_size<float>(), TailStrategy::GuardWithIf);
  };
  ctx.kclass = KernelClass::MatMul;
  return {out};
}

const Registrar kMatMulNBits("com.microsoft", "MatMulNBits", KernelClass::MatMul, lower_matmul_nbits);

}  // namespace
}  // namespace onnxc::codegen
