// GEMM schedules and the packed weight layout (see gemm.h for the layout).
#include "codegen/schedule/gemm.h"

#include <cstring>

#include "codegen/schedule/gpu_gemm.h"
#include "codegen/schedule/schedule.h"
#include "ir/error.h"

namespace onnxc::codegen {

using namespace Halide;

PanelShape choose_panel(int64_t n, const TargetDesc& d, int64_t k, int64_t m) {
  // A k step of a block of `rows` rows × `vecs` vectors does rows·vecs FMAs and loads vecs vectors
  // of B plus one broadcast of A per row. Narrow panels reload A more often per FMA: with three or
  // more vectors a block keeps the FMA units busy; two lose ~10%, one ~25% (the weights onnxc's
  // AVX-512 panels have been chosen with since they were first measured). Wider than four vectors
  // leaves too few rows to reuse a B load.
  static const double kSpeed[] = {0, 0.75, 0.9, 1.0, 1.0};
  if (d.gpu) {  // a constant B is packed in panels as wide as a thread block's columns
    const GpuGemmTile tile = gpu_gemm_tile(d);
    return {tile.block_cols, tile.block_rows};
  }
  const int lanes = std::max(1, d.f32_lanes());
  const int budget = std::max(1, d.accumulator_budget());
  // The share of computed rows (or columns) that are real: a block computes whole register blocks,
  // so a last partial one is paid in full.
  auto use = [](int64_t x, int64_t block) {
    return static_cast<double>(x) / static_cast<double>((x + block - 1) / block * block);
  };
  // A run-time M (a sequence length) is scored at 128 rows: prompts and sequences are mostly
  // multiples of 8, which a block of 6 rows never divides (M = 128 computed 132 rows).
  const int64_t m_rows = m < 0 ? 128 : m;
  PanelShape best{lanes, 1};
  double best_score = -1;
  for (int vecs : {3, 4, 2, 1}) {  // ties go to the first: three vectors, then four
    const int max_rows = std::min(24, budget / vecs);
    if (max_rows < 1) continue;
    const int width = vecs * lanes;
    // A panel (K × width) is re-read from L2 by every row block; one past 3/4 of L2 is evicted by
    // the rows of A streaming past it and comes from L3 (128×4096×1024 on Zen 5: 64 columns, a
    // 1 MiB panel, 7% slower than 48 columns).
    const double fits = k > 0 && static_cast<double>(k) * width * 4 > 0.75 * d.l2_bytes ? 0.9 : 1.0;
    // Fewer rows than fit lose nothing while the panel stays in L2 (128×1024×1024 with 64 × 4 and
    // 64 × 6 blocks alike at M = 120); they are tried when they divide M better, down to half.
    const int min_rows = m_rows > 0 ? std::max(std::min(4, max_rows), (max_rows + 1) / 2) : max_rows;
    for (int rows = max_rows; rows >= min_rows; --rows) {
      // A block of fewer rows than 4 reuses each B vector too little, whatever its width.
      const double speed = kSpeed[vecs] * (rows >= 4 ? 1.0 : 0.8) * fits;
      const double score = speed * use(n, width) * (m_rows > 0 ? use(m_rows, rows) : 1.0);
      if (score > best_score + 1e-9) best = {width, rows}, best_score = score;
    }
  }
  return best;
}

ir::Tensor pack_panels(const ir::Tensor& b, bool transposed, int width) {
  internal_check(b.rank() >= 2) << "pack_panels needs a matrix";
  const auto& d = b.dims();
  const size_t r = d.size();
  const int64_t k_ext = transposed ? d[r - 1] : d[r - 2];
  const int64_t n_ext = transposed ? d[r - 2] : d[r - 1];
  const int64_t panels = (n_ext + width - 1) / width;
  std::vector<int64_t> dims(d.begin(), d.end() - 2);
  int64_t batch = 1;
  for (int64_t x : dims) batch *= x;
  dims.insert(dims.end(), {panels, k_ext, width});

  ir::Tensor out(b.dtype(), dims);  // zero-filled: the padding of the last panel stays zero
  const size_t es = ir::dtype_size(b.dtype());
  const auto* src = static_cast<const unsigned char*>(b.raw());
  auto* dst = static_cast<unsigned char*>(out.mutable_raw());
  for (int64_t bi = 0; bi < batch; ++bi) {
    const unsigned char* s = src + static_cast<size_t>(bi * k_ext * n_ext) * es;
    unsigned char* o = dst + static_cast<size_t>(bi * panels * k_ext * width) * es;
    for (int64_t k = 0; k < k_ext; ++k) {
      for (int64_t n = 0; n < n_ext; ++n) {
        int64_t from = transposed ? n * k_ext + k : k * n_ext + n;
        int64_t to = ((n / width) * k_ext + k) * width + n % width;
        std::memcpy(o + static_cast<size_t>(to) * es, s + static_cast<size_t>(from) * es, es);
      }
    }
  }
  return out;
}

namespace {

// True when output dims are acc's (n, m, batch..), so acc can be computed tile by tile inside it.
// An elementwise epilogue keeps them; one that reorders dims of the same rank is not detected.
bool tiles_like_acc(const GemmFuncs& g, const Func& out) {
  return g.output_matches() && out.dimensions() == g.acc.dimensions();
}

// The register-blocked kernel (any SIMD CPU; the block comes from choose_panel). Loop nest of `out`
// (outermost first):
//   parallel task over (row block of `rows`·tiles_per_task rows, panel, batch..)  [constant B]
//                 or (panel, batch..) with the row blocks inside               [staged B]
//     for each register block of `rows` rows:
//       acc block (rows × width) = 0; for k: rows × width/lanes FMAs, all in vector registers
//       for each row: out(width cols) = epilogue(acc)   -- vector stores
// M is a run-time extent; when it is 1 (a decoding step) a specialization uses one-row blocks: an
// 8-row block would compute 7 rows of FMAs for nothing, all from the one clamped row of A. The
// row count is `select(M == 1, 1, rows)` in both branches; each branch's simplifier, knowing the
// condition, turns it into a constant, which the unrolled register block needs.
void schedule_blocked_cpu(GemmFuncs g, Func out, const Target& t) {
  const int vec = t.natural_vector_size<float>();
  const int width = g.panel.width, rows = g.panel.rows;
  std::vector<Var> args = out.args();
  Var n = args[0], m = args[1];
  std::vector<Var> batch(args.begin() + 2, args.end());
  Var no("gemm_no"), ni("gemm_ni"), mo("gemm_mo"), mi("gemm_mi"), mb("gemm_mb");
  // ONNX tensors start at index 0. Saying so lets the simplifier see that a tile starts on a panel
  // boundary, so B's (n % width, n / width) indexing becomes dense vector loads, not gathers.
  for (int d = 0; d < out.dimensions(); ++d) out.output_buffer().dim(d).set_min(0);

  // A static M needs no run-time choice (and no second copy of the kernel to compile).
  Expr one_row = out.output_buffer().dim(1).extent() == 1;
  Expr block_rows = g.m_static ? Expr(*g.m_static == 1 ? 1 : rows) : select(one_row, 1, rows);
  // A task runs ~128 rows past its panel, so a weight panel coming from memory (a model's weights
  // do not stay in cache) is read once per 16 register blocks, not 4. With fewer than 8 panels
  // there would be too few tasks for the threads, so tasks keep ~32 rows then.
  // Measured (gemm_bench, GEMM_BENCH_COLD=1, alternating with 32-row tasks on a loaded machine):
  // within the run-to-run noise, -5% to +8% per shape; no shape consistently slower.
  Expr many_panels = out.output_buffer().dim(0).extent() >= 8 * width;
  Expr tiles_per_task = select(many_panels, std::max(1, 128 / rows), std::max(1, 32 / rows));
  out.split(n, no, ni, width, TailStrategy::GuardWithIf)
      .split(m, mo, mi, block_rows, TailStrategy::GuardWithIf)
      .split(mo, mb, mo, tiles_per_task, TailStrategy::GuardWithIf);
  // A staged B panel is filled once per task, so its task runs every row block of the panel.
  std::vector<VarOrRVar> order = {ni, mi, mo, mb, no};
  std::vector<Var> task_vars = g.b_stage.defined() ? std::vector<Var>{no} : std::vector<Var>{mb, no};
  // At most two batch dims join the parallel task; outer ones (a rank-5 product, e.g. MaxViT's
  // [batch, windows, heads, ...]) stay serial loops around it. Fused any deeper, Halide's bounds for
  // acc's batch dims widen past the one index a task covers, and the run fails
  // (explicit_bounds_too_small).
  for (size_t i = 0; i < batch.size(); ++i) {
    order.push_back(batch[i]);
    if (i < 2) task_vars.push_back(batch[i]);
  }
  // The epilogue over the block is unrolled: indexed by loop variables, the accumulator array could
  // not live in registers (LLVM keeps a variably indexed array in memory), and LLVM unrolls a
  // loop on its own only while the body is small: a GELU's erf was not, on AVX2.
  Var nv("gemm_nv");
  out.reorder(order).split(ni, nv, ni, vec).vectorize(ni).unroll(nv).unroll(mi);
  Var task = fuse_vars(out, task_vars);
  out.parallel(task);
  if (!g.m_static) out.specialize(one_row);  // a copy of the loop nest above, for M == 1

  place_register_block(g.acc, g.k, out, mo, width, block_rows, vec);
  if (g.b_stage.defined()) {
    Var i = g.b_stage.args()[0];
    g.b_stage.compute_at(out, task).vectorize(i, vec);
  }
}

// The output does not tile like acc (a 1-D operand dropped n or m, or an epilogue changed the
// dims): compute the whole product first, in parallel row blocks, then the output elementwise.
void schedule_whole_cpu(GemmFuncs g, Func out, const Target& t) {
  const int vec = std::max(1, t.natural_vector_size(g.acc.output_types().at(0)));
  Var an = g.acc.args()[0], am = g.acc.args()[1];
  Var mo("gemm_mo"), mi("gemm_mi");
  g.acc.compute_root().split(am, mo, mi, 8, TailStrategy::GuardWithIf).parallel(mo);
  if (g.b_vector) {  // one dot product per row
    g.acc.update().split(am, mo, mi, 8, TailStrategy::GuardWithIf).reorder(an, g.k.x, mi, mo).parallel(mo);
  } else {
    g.acc.vectorize(an, vec, TailStrategy::RoundUp);
    g.acc.update()
        .split(am, mo, mi, 8, TailStrategy::GuardWithIf)
        .reorder(an, mi, g.k.x, mo)
        .vectorize(an, vec, TailStrategy::RoundUp)
        .parallel(mo);
  }
  if (g.b_stage.defined()) g.b_stage.compute_root().vectorize(g.b_stage.args()[0], vec);
  schedule_output(out, KernelClass::Elementwise, t);
}

// Any dtype: rows of 8 in parallel, columns vectorized; the accumulator is one row block wide.
void schedule_plain_cpu(GemmFuncs g, Func out, const Target& t) {
  const int vec = std::max(1, t.natural_vector_size(g.acc.output_types().at(0)));
  Var an = g.acc.args()[0], am = g.acc.args()[1];
  std::vector<Var> args = out.args();
  Var n = args[0], m = args[1];
  Var mo("gemm_mo"), mi("gemm_mi");
  out.split(m, mo, mi, 8, TailStrategy::GuardWithIf).vectorize(n, vec, TailStrategy::GuardWithIf);
  std::vector<Var> task_vars = {mo};
  task_vars.insert(task_vars.end(), args.begin() + 2, args.end());
  Var task = fuse_vars(out, task_vars);
  out.parallel(task);
  g.acc.compute_at(out, task).vectorize(an, vec, TailStrategy::RoundUp);
  g.acc.update().reorder(an, am, g.k.x).vectorize(an, vec, TailStrategy::RoundUp);
}

}  // namespace

void place_register_block(Func acc, const RDom& k, Func out, const Var& loop, int width, const Expr& rows, int vec) {
  std::vector<Var> a = acc.args();
  for (size_t i = 2; i < a.size(); ++i) acc.bound_extent(a[i], 1);
  acc.compute_at(out, loop)
      .bound_extent(a[0], width)
      .bound_extent(a[1], rows)
      .store_in(MemoryType::Register)
      .vectorize(a[0], vec)
      .unroll(a[0])
      .unroll(a[1]);
  std::vector<VarOrRVar> order = {a[0], a[1]};
  for (int i = 0; i < k.dimensions(); ++i) order.push_back(k[i]);
  acc.update().reorder(order).vectorize(a[0], vec).unroll(a[0]).unroll(a[1]);
}

void schedule_gemm(const GemmFuncs& g, Func output, const Target& target) {
  if (target.has_gpu_feature()) return schedule_gemm_gpu(g, output, target);
  if (!tiles_like_acc(g, output)) return schedule_whole_cpu(g, output, target);
  if (g.blocked) return schedule_blocked_cpu(g, output, target);
  schedule_plain_cpu(g, output, target);
}

}  // namespace onnxc::codegen
