// The block-quantized weight GEMM: layouts and loops (see gemm_nbits.h).
#include "codegen/schedule/gemm_nbits.h"

#include <cstring>
#include <optional>

#include "codegen/target.h"
#include "ir/error.h"

namespace onnxc::codegen {

using namespace Halide;

NBitsBlock nbits_block(const TargetDesc& d) {
  // Four column vectors: a decode step (one row) then has four independent accumulators for the
  // FMA units while one packed byte load serves two k steps. Rows fill what the accumulator budget
  // leaves after one vector of unpacked codes per column vector (AVX-512: 64 columns × 5 rows in
  // 20 zmm; AVX2: 32 × 2 in 8 ymm; NEON: 16 × 5 in 20 q registers).
  // The float32 block over a dequantized panel needs no register for codes: the budget holds
  // accumulators, the panel's vectors loaded per k step and a broadcast row value must fit beside
  // them, so it covers the whole panel or a half (AVX-512: 64 × 6 in 24 zmm; AVX2: 16 × 6 in 12 ymm,
  // where 32 × 3 spilled and ran 15-25% slower than the n-bit block). It pays from 16 rows: one
  // panel's dequantization costs about as many vector operations as 2-3 of its rows' FMAs.
  const int lanes = std::max(1, d.f32_lanes());
  const int vecs = 4;
  const int budget = d.accumulator_budget();
  int fvecs = vecs;
  while (fvecs > 1 && fvecs * (budget / fvecs) + fvecs + 1 > d.vector_registers) fvecs /= 2;
  return {vecs * lanes, std::max(1, (budget - vecs) / vecs), fvecs * lanes, std::max(1, budget / fvecs), 16};
}

int64_t nbits_f32_chunk(const NBitsWeight& w, int width, const TargetDesc& d) {
  // Measured (16 products 128 × 4096 × 4096, 1 thread, CPU time): tiles of 64 k (16 KiB, half of
  // L1) ran 5-10% slower than tiles of 256-4096 k, which were level with each other; a quarter of
  // L2 leaves room for the task's rows of A and its accumulators.
  const int64_t fit = std::max<int64_t>(1, d.l2_bytes / 4 / (width * 4) / w.block);
  int64_t blocks = 1;
  for (int64_t b = 1; b <= std::min(fit, w.k_blocks()); ++b)
    if (w.k_blocks() % b == 0) blocks = b;
  return blocks * w.block;
}

namespace {

int64_t panels_of(const NBitsWeight& w, int width) { return (w.n + width - 1) / width; }

// Per-block values of column n, block b, from a [N·k_blocks] (or [N, k_blocks]) tensor, as floats.
float param_at(const ir::Tensor& t, int64_t i) {
  if (t.dtype() == ir::DType::Float16) return ir::f16_to_f32(t.data<uint16_t>()[i]);
  return t.data<float>()[i];
}

}  // namespace

ir::Tensor pack_nbits_codes(const ir::Tensor& b, const NBitsWeight& w, int width) {
  const int64_t bytes = w.k_blocks() * w.blob(), panels = panels_of(w, width);
  internal_check(b.nbytes() == static_cast<size_t>(w.n * bytes)) << "MatMulNBits codes of the wrong size";
  ir::Tensor out(ir::DType::UInt8, {panels, bytes, width});  // zero-filled: padded columns
  const auto* src = static_cast<const uint8_t*>(b.raw());
  auto* dst = static_cast<uint8_t*>(out.mutable_raw());
  for (int64_t n = 0; n < w.n; ++n) {
    const int64_t p = n / width, i = n % width;
    for (int64_t j = 0; j < bytes; ++j) dst[(p * bytes + j) * width + i] = src[n * bytes + j];
  }
  return out;
}

ir::Tensor pack_nbits_code_words(const ir::Tensor& b, const NBitsWeight& w, int width) {
  const int64_t bytes = w.k_blocks() * w.blob(), panels = panels_of(w, width);
  internal_check(w.bits == 4 && bytes % 4 == 0) << "code words need 4-bit codes in blocks of at least 8 k";
  internal_check(b.nbytes() == static_cast<size_t>(w.n * bytes)) << "MatMulNBits codes of the wrong size";
  ir::Tensor out(ir::DType::UInt8, {panels, bytes / 4, width * 4});  // zero-filled: padded columns
  const auto* src = static_cast<const uint8_t*>(b.raw());
  auto* dst = static_cast<uint8_t*>(out.mutable_raw());
  for (int64_t n = 0; n < w.n; ++n) {
    const int64_t p = n / width, i = n % width;
    for (int64_t j = 0; j < bytes; ++j) dst[(p * (bytes / 4) + j / 4) * width * 4 + i * 4 + j % 4] = src[n * bytes + j];
  }
  return out;
}

bool nbits_int8_dot(const Target& t) {
  // vpdpbusd multiplies unsigned bytes (the codes, 0..15) by signed ones (the int8 row) four to a
  // lane: 2 instructions per 64 code bytes. Halide 14 emits it only under the Sapphire Rapids
  // feature, which the kernel gets where the CPU has VNNI (with_dot_products). ARM's sdot multiplies
  // signed bytes: codes 0..15 are the same as int8. AVX2 has vpmaddubsw (u8 × s8 pairs into
  // saturating int16 lanes), exact for 4-bit codes: see nbits_int8_pairs.
  const Int8Dot dot = describe(with_dot_products(t)).int8_dot;
  return dot == Int8Dot::Vnni512 || dot == Int8Dot::ArmSdot || nbits_int8_pairs(t);
}

bool nbits_int8_pairs(const Target& t) {
  // Targets whose int8 products are int16 pairs: AVX2, where the byte pairs come at 32 per
  // vpmaddubsw and vpmaddwd widens them. AVX-512 without VNNI would take the same kernel on zmm
  // (AVX512BW), but it has not been measured there: it keeps the float32 products.
  const TargetDesc d = describe(with_dot_products(t));
  return d.int8_dot == Int8Dot::Int16Pairs && d.vector_bytes == 32;
}

ir::Tensor pack_nbits_scales(const ir::Tensor& scales, const NBitsWeight& w, int width) {
  const int64_t kb = w.k_blocks(), panels = panels_of(w, width);
  internal_check(scales.numel() == w.n * kb) << "MatMulNBits scales of the wrong size";
  ir::Tensor out(ir::DType::Float32, {panels, kb, width});  // zero scale in padded columns
  auto* dst = out.mutable_data<float>();
  for (int64_t n = 0; n < w.n; ++n)
    for (int64_t b = 0; b < kb; ++b) dst[((n / width) * kb + b) * width + n % width] = param_at(scales, n * kb + b);
  return out;
}

ir::Tensor pack_nbits_zero_points(const ir::Tensor& zp, const NBitsWeight& w, int width) {
  // Packed like the codes: per column ceil(k_blocks·bits/8) bytes, low bits first.
  const int64_t kb = w.k_blocks(), panels = panels_of(w, width);
  const int64_t row_bytes = (kb * w.bits + 7) / 8;
  internal_check(zp.nbytes() == static_cast<size_t>(w.n * row_bytes)) << "MatMulNBits zero points of the wrong size";
  ir::Tensor out(ir::DType::UInt8, {panels, kb, width});
  const auto* src = static_cast<const uint8_t*>(zp.raw());
  auto* dst = static_cast<uint8_t*>(out.mutable_raw());
  const int per_byte = 8 / w.bits;
  const unsigned mask = (1u << w.bits) - 1;
  for (int64_t n = 0; n < w.n; ++n)
    for (int64_t b = 0; b < kb; ++b) {
      unsigned v = (src[n * row_bytes + b / per_byte] >> ((b % per_byte) * w.bits)) & mask;
      dst[((n / width) * kb + b) * width + n % width] = static_cast<uint8_t>(v);
    }
  return out;
}

namespace {

// The one-row paths share a chain: `acc` (i, p), one panel's columns per task, updated once per k
// block, and `dot` (i, p, b, h), the panel's sums over one k block in registers, two per column
// vector (h: the codes at even and odd k, or the low and high nibbles). A task streams its panel's
// codes once, k block after k block: they are prefetched a few blocks ahead (the hardware
// prefetcher alone left a third of the time waiting on DRAM).
void schedule_row_acc(const NBitsFuncs& g, Func acc, Func out, Var mo, int vec) {
  const auto* codes = g.codes.value().as<Internal::Call>();
  std::vector<Var> a = acc.args();
  acc.compute_at(out, mo).bound_extent(a[0], g.block.width).bound_extent(a[1], 1).vectorize(a[0], vec).unroll(a[0]);
  acc.update().reorder(a[0], a[1], g.kb.x).vectorize(a[0], vec).unroll(a[0]);
  acc.update().prefetch(codes->param, g.kb.x, g.kb.x, static_cast<int>(g.prefetch_blocks),
                        PrefetchBoundStrategy::NonFaulting);
}

// `dot` over its RDom, `across` outermost; `within` (a dot product's reduction), when given,
// innermost and vectorized as one instruction's sum.
void schedule_row_dot(const NBitsFuncs& g, Func dot, Func acc, int vec, RVar across, std::optional<RVar> within) {
  std::vector<Var> d = dot.args();
  dot.compute_at(acc, g.kb.x)
      .bound_extent(d[0], g.block.width)
      .bound_extent(d[1], 1)
      .bound_extent(d[2], 1)
      .bound_extent(d[3], 2)
      .store_in(MemoryType::Register)
      .vectorize(d[0], vec)
      .unroll(d[0])
      .unroll(d[3]);
  Stage u = dot.update();
  if (within) {
    u.reorder(*within, d[0], d[3], d[1], d[2], across).atomic().vectorize(*within);
  } else {
    u.reorder(d[0], d[3], d[1], d[2], across);
  }
  u.vectorize(d[0], vec).unroll(d[0]).unroll(d[3]);
}

// The one-row path with int8 activations: the row's block maxima, its int8 codes and their block
// sums once per run (K values), then the acc8/dot8 chain. With a four-way byte product each lane
// of a 32-bit vector is one column, whose 4 code bytes meet 4 row bytes in one vpdpbusd or sdot
// (r8.x vectorized as the dot product's reduction). With int16 pairs (AVX2) dot8 gathers per k
// block the int16 sums of dot16, which a sub-block of words accumulates in registers: one
// vpmaddubsw per 32 code bytes and nibble (r16.x vectorized as the pair's sum, over the 2 pairs
// of each column's word), then one vpmaddwd-style pair sum into int32 (r8.x).
void schedule_nbits_int8_row(NBitsFuncs g, Func out, Var mo, const Target& t) {
  const int width = g.block.width, vec = t.natural_vector_size<int32_t>();
  g.a_amax.compute_root();
  Var qt = g.a_q.args()[0], qh = g.a_q.args()[1], qg = g.a_q.args()[2];
  g.a_q.compute_root().reorder(qt, qh, qg).bound(qt, 0, 4).bound(qh, 0, 2).unroll(qt).unroll(qh);
  g.a_qsum.compute_root();
  schedule_row_acc(g, g.acc8, out, mo, vec);
  if (!g.pairs) {
    schedule_row_dot(g, g.dot8, g.acc8, vec, g.r8.y, RVar(g.r8.x));
    return;
  }
  g.pair_ones.compute_root();
  std::vector<Var> d = g.dot8.args();
  g.dot8.compute_at(g.acc8, g.kb.x)
      .bound_extent(d[0], width)
      .bound_extent(d[1], 1)
      .bound_extent(d[2], 1)
      .store_in(MemoryType::Register)
      .vectorize(d[0], vec)
      .unroll(d[0]);
  g.dot8.update().reorder(g.r8.x, d[0], d[1], d[2], g.r8.y).atomic().vectorize(g.r8.x).vectorize(d[0], vec).unroll(d[0]);
  std::vector<Var> e = g.dot16.args();
  g.dot16.compute_at(g.dot8, g.r8.y)
      .bound_extent(e[0], 2)
      .bound_extent(e[1], width)
      .bound_extent(e[2], 1)
      .bound_extent(e[3], 1)
      .bound_extent(e[4], 1)
      .store_in(MemoryType::Register)
      .vectorize(e[0])
      .vectorize(e[1], vec)
      .unroll(e[1]);
  // atomic(true): a saturating sum is not associative in general, but these never saturate.
  g.dot16.update()
      .reorder(g.r16.x, e[0], e[1], g.r16.y, e[2], e[3], e[4], g.r16.z)
      .atomic(true)
      .vectorize(g.r16.x)
      .vectorize(e[0])
      .vectorize(e[1], vec)
      .unroll(e[1])
      .unroll(g.r16.y);
}

}  // namespace

// Loop nest of `out` (outermost first):
//   parallel task over (a group of row blocks, column panel)
//     for each row block of `rows` rows (1 when M == 1: a decode step):
//       acc (width × rows) = 0
//       for each k block b:
//         dot (width × rows, in registers) = 0
//         for each packed byte j of the block: unpack a vector of codes per column vector, then
//           one FMA per row and code (two codes a byte for 4 bits)
//         acc += scale · (dot - zero · asum(b))
//       out = acc (+ epilogue)
// So every packed byte of the panel is loaded once per row block and unpacked into registers only;
// a decode step streams the weights once. A task's row blocks reuse the panel from cache.
// One row (decode) runs the same nest with acc1/dot1: two accumulators per column vector (codes at
// even and odd k) instead of one per row, and the codes prefetched `prefetch_blocks` k blocks ahead.
void schedule_nbits_gemm(NBitsFuncs g, Func out, const Target& t, bool is_output) {
  std::vector<Var> args = out.args();
  internal_check(args.size() == 2) << "the n-bit GEMM output must be (n, m)";
  Var n = args[0], m = args[1];
  const int vec = t.natural_vector_size<float>();
  const int width = g.block.width, rows = g.block.rows;
  // Tensors start at index 0; saying so lets the simplifier see whole panels (dense vector loads).
  if (is_output)
    for (int d = 0; d < out.dimensions(); ++d) out.output_buffer().dim(d).set_min(0);

  // Three loop nests chosen by M at run time (or one, when M is static): one row (decode), the
  // n-bit block, and the dequantized panel for many rows. Each branch's simplifier turns the row
  // count into a constant and `select(use_f32, ..)` in the output into one of its two products.
  Expr one_row = g.m_extent == 1, use_f32 = g.use_f32();
  const int frows = g.block.f32_rows;
  Expr block_rows;
  if (g.m_static) {
    block_rows = *g.m_static == 1 ? 1 : *g.m_static >= g.block.f32_min_rows ? frows : rows;
  } else {
    block_rows = select(one_row, 1, select(use_f32, frows, rows));
  }
  Var no("nb_no"), ni("nb_ni"), mo("nb_mo"), mi("nb_mi"), mb("nb_mb"), nv("nb_nv");
  out.split(n, no, ni, width, TailStrategy::GuardWithIf)
      .split(m, mo, mi, block_rows, TailStrategy::GuardWithIf)
      .split(mo, mb, mo, select(use_f32, std::max(1, 128 / frows), std::max(1, 64 / rows)), TailStrategy::GuardWithIf)
      .reorder(ni, mi, mo, no, mb)
      .split(ni, nv, ni, vec)
      .vectorize(ni)
      .unroll(nv)
      .unroll(mi);
  Var task("nb_task");
  out.fuse(no, mb, task).parallel(task);
  if (!g.m_static) {
    out.specialize(one_row);
    out.specialize(use_f32);
  }

  // acc(i, p, m): one panel's columns × the block's rows, updated once per k block.
  std::vector<Var> a = g.acc.args();
  g.acc.compute_at(out, mo)
      .bound_extent(a[0], width)
      .bound_extent(a[1], 1)
      .bound_extent(a[2], block_rows)
      .vectorize(a[0], vec)
      .unroll(a[0])
      .unroll(a[2]);
  g.acc.update().reorder(a[0], a[2], a[1], g.kb.x).vectorize(a[0], vec).unroll(a[0]).unroll(a[2]);

  // dot(i, p, b, m): the register block, summed over one k block's bytes.
  std::vector<Var> d = g.dot.args();
  g.dot.compute_at(g.acc, g.kb.x)
      .bound_extent(d[0], width)
      .bound_extent(d[1], 1)
      .bound_extent(d[2], 1)
      .bound_extent(d[3], block_rows)
      .store_in(MemoryType::Register)
      .vectorize(d[0], vec)
      .unroll(d[0])
      .unroll(d[3]);
  g.dot.update().reorder(d[0], d[3], d[1], d[2], g.j.x).vectorize(d[0], vec).unroll(d[0]).unroll(d[3]);

  const auto* codes = g.codes.value().as<Internal::Call>();
  internal_check(codes && codes->param.defined()) << "the packed codes must be an input";
  if (g.int8) {
    schedule_nbits_int8_row(g, out, mo, t);
  } else {
    schedule_row_acc(g, g.acc1, out, mo, vec);
    schedule_row_dot(g, g.dot1, g.acc1, vec, g.j1.x, std::nullopt);
  }

  // The prefill path, per task (one panel, up to ~128 rows): f32_acc, the task's rows × width in
  // memory, gathers the chunks of k; for each chunk the panel's chunk is dequantized into a tile
  // that stays in L2 and every row block of the task runs its float32 register block (f32_part)
  // over it.
  std::vector<Var> f = g.f32_acc.args();
  const int fwidth = g.block.f32_width;
  Var fo("nb_fo"), fi("nb_fi"), co("nb_co"), ci("nb_ci");
  g.f32_acc.compute_at(out, task).bound_extent(f[0], width).bound_extent(f[1], 1).vectorize(f[0], vec);
  g.f32_acc.update()
      .split(f[2], fo, fi, block_rows, TailStrategy::GuardWithIf)
      .split(f[0], co, ci, fwidth)
      .reorder(ci, fi, co, f[1], fo, g.c.x)
      .vectorize(ci, vec)
      .unroll(ci)
      .unroll(fi);
  std::vector<Var> pa = g.f32_part.args();
  g.f32_part.compute_at(g.f32_acc, co)
      .bound_extent(pa[0], fwidth)
      .bound_extent(pa[1], 1)
      .bound_extent(pa[2], block_rows)
      .bound_extent(pa[3], 1)
      .store_in(MemoryType::Register)
      .vectorize(pa[0], vec)
      .unroll(pa[0])
      .unroll(pa[2]);
  g.f32_part.update()
      .reorder(pa[0], pa[2], pa[1], pa[3], g.kc.x)
      .vectorize(pa[0], vec)
      .unroll(pa[0])
      .unroll(pa[2]);
  if (g.a_rows.defined()) {
    Var ak = g.a_rows.args()[0], am = g.a_rows.args()[1];
    g.a_rows.compute_root().parallel(am, 8).vectorize(ak, vec, TailStrategy::GuardWithIf);
  }
  std::vector<Var> w = g.wdq.args();
  g.wdq.compute_at(g.f32_acc, g.c.x).bound_extent(w[0], width).bound_extent(w[1], 1).vectorize(w[0], vec).unroll(w[0]);

  // Block sums of A: M·K additions, once per kernel run.
  std::vector<Var> s = g.asum.args();
  g.asum.compute_root().parallel(s[1]);
  g.asum.update().parallel(s[1]);
}

}  // namespace onnxc::codegen
