// The int8 GEMM schedule and weight layout (see gemm_int8.h).
#include "codegen/schedule/gemm_int8.h"

#include <cstring>

#include "codegen/schedule/schedule.h"
#include "ir/error.h"

namespace onnxc::codegen {

using namespace Halide;

Int8Block int8_block(const TargetDesc& d) {
  const int lanes = std::max(1, d.f32_lanes());  // int32 lanes: as many as float32 ones
  // Four-way dot products (vpdpbusd on zmm, sdot on NEON): the accumulator budget split into
  // column vectors × rows with the fewest loads per product ((vecs + rows) / (vecs · rows): a weight
  // vector per column vector and a broadcast per row each k step). AVX-512: 48 columns × 8 rows in
  // 24 zmm, 11 loads per 24 vpdpbusd (32 × 12 took 14: gemm_bench --int8 on BERT's shapes, 1 thread,
  // 73-85% -> 86-92% of the VNNI peak; it also divides seq 128). Three vectors at most: 64 × 6 ran at
  // 13% of the peak (gemm_bench, same day; not looked into). NEON: 12 × 8 in 24 of 32 q registers.
  if (d.int8_dot == Int8Dot::Vnni512 || d.int8_dot == Int8Dot::ArmSdot) {
    Int8Block best{lanes, 1, 4};
    double best_loads = 2.0;
    for (int vecs : {2, 3}) {
      const int rows = std::max(1, d.accumulator_budget() / vecs);
      const double loads = static_cast<double>(vecs + rows) / (vecs * rows);
      if (loads < best_loads) best = {vecs * lanes, rows, 4}, best_loads = loads;
    }
    return best;
  }
  if (d.int8_dot == Int8Dot::Int16Pairs) {
    // Registers: rows·vecs accumulators, vecs weight vectors, one broadcast pair of the row, one
    // product on its way to its accumulator, and one spare: with none (12 accumulators in 16 ymm)
    // LLVM spilled an accumulator inside the k loop of kernels whose epilogue holds constants (BERT's
    // GELU: 1.6x the time of the same product without it). Most accumulators wins; ties go to
    // fewer loads per product (more columns), and a block keeps at least 4 rows to reuse each
    // weight vector.
    Int8Block best{lanes, 1, 2};
    for (int vecs : {2, 3, 4}) {
      const int rows = std::min(16, (d.vector_registers - vecs - 3) / vecs);
      if (rows < 4) continue;
      if (rows * vecs > best.rows * (best.width / lanes)) best = {vecs * lanes, rows, 2};
    }
    return best;
  }
  // Bytes widened inside the loop (NEON without dotprod, x86 below AVX2, neither of which
  // `--quantize dynamic-int8` quantizes for unless forced): room for the widened operands beside
  // the accumulators.
  const int spare = d.vector_registers > 16 ? 0 : 4;
  return {2 * lanes, std::max(1, (d.accumulator_budget() - spare) / 2), 4};
}

ir::Tensor pack_int8_panels(const ir::Tensor& b, const Int8Block& block) {
  const int64_t g = block.k_group, width = block.width;
  internal_check(b.rank() == 2 && (b.dtype() == ir::DType::Int8 || (g == 2 && b.dtype() == ir::DType::Int16)))
      << "pack_int8_panels needs an int8 matrix (or int16 for int16 pairs)";
  internal_check(g == 2 || g == 4) << "int8 k group " << g;
  const int64_t k_ext = b.dims()[0], n_ext = b.dims()[1];
  const int64_t kp = (k_ext + g - 1) / g * g;
  const int64_t np = (n_ext + width - 1) / width * width;
  ir::Tensor out(g == 4 ? ir::DType::Int8 : ir::DType::Int16, {np / width, kp / g, g * width});  // zero-filled padding
  auto src = [&](int64_t i) -> int16_t {
    return b.dtype() == ir::DType::Int8 ? static_cast<const int8_t*>(b.raw())[i] : static_cast<const int16_t*>(b.raw())[i];
  };
  auto put = [&](int64_t at, int16_t v) {
    if (g == 4) out.mutable_data<int8_t>()[at] = static_cast<int8_t>(v);
    else out.mutable_data<int16_t>()[at] = v;
  };
  for (int64_t k = 0; k < k_ext; ++k)
    for (int64_t n = 0; n < n_ext; ++n)
      put((((n / width) * (kp / g) + k / g) * width + n % width) * g + k % g, src(k * n_ext + n));
  return out;
}

void schedule_int8_gemm(Int8GemmFuncs g, Func out, const Target& t) {
  std::vector<Var> args = out.args();
  internal_check(args.size() == 2) << "the int8 GEMM output must be (n, m)";
  Var n = args[0], m = args[1];
  Var an = g.acc.args()[0], am = g.acc.args()[1];
  const int vec = t.natural_vector_size<int32_t>();

  // Rows: the range from vector-wide partial extrema, then the quantized row, once per row for
  // every column panel (M·K bytes: small next to the weights).
  Var ak = g.aq.args()[0], arow = g.aq.args()[1];
  g.aq.compute_root().parallel(arow, 4, TailStrategy::GuardWithIf).vectorize(ak, t.natural_vector_size(g.aq.output_types().at(0)), TailStrategy::GuardWithIf);
  for (auto [total, part] : {std::pair{g.lo, g.lo_part}, std::pair{g.hi, g.hi_part}}) {
    Var mrow = total.args()[0];
    total.compute_root().parallel(mrow, 8, TailStrategy::GuardWithIf);
    total.update().unscheduled();  // 16 partial extrema per row: scalar is fine
    Var pl = part.args()[0];
    part.compute_at(total, mrow).vectorize(pl);
    part.update().vectorize(pl);
  }

  // Columns in panels of the block width, rows in register blocks of its rows; a task is a panel ×
  // 4 row blocks, so the panel stays in L1 while the rows stream past, and consecutive tasks take
  // the same panel's next rows: each panel comes from memory once per call (the rows, M·K bytes or
  // twice that, stay in L2), not once per row group.
  const int width = g.block.width, rows = g.block.rows;
  for (int d = 0; d < out.dimensions(); ++d) out.output_buffer().dim(d).set_min(0);
  Var no("q8_no"), ni("q8_ni"), mo("q8_mo"), mi("q8_mi"), mb("q8_mb");
  out.split(n, no, ni, width, TailStrategy::GuardWithIf)
      .split(m, mo, mi, rows, TailStrategy::GuardWithIf)
      .split(mo, mb, mo, 4, TailStrategy::GuardWithIf)
      .reorder(ni, mi, mo, mb, no)
      .vectorize(ni, vec);
  Var task("q8_task");
  out.fuse(mb, no, task).parallel(task);

  g.acc.compute_at(out, mo)
      .bound_extent(an, width)
      .bound_extent(am, rows)
      .store_in(MemoryType::Register)
      .vectorize(an, vec)
      .unroll(an)
      .unroll(am);
  // ki innermost and vectorized with n: each lane's sum of k_group products is one vpdpbusd (VNNI,
  // four u8 × s8) or one vpmaddwd (two int16 × int16) per vector, added to the accumulator.
  g.acc.update()
      .reorder(g.r.x, an, am, g.r.y)
      .atomic()
      .vectorize(g.r.x)
      .vectorize(an, vec)
      .unroll(an)
      .unroll(am);
}

}  // namespace onnxc::codegen
