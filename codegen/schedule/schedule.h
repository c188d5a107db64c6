// Schedules by kernel class and target. Emission applies schedule_output() to each kernel output
// unless the lowering scheduled its Funcs itself (LowerContext::schedule); row-wise lowerings
// (reductions, softmax, norms) call schedule_rowwise() from their own LowerContext::schedule.
#pragma once

#include <vector>

#include "codegen/lower/lower.h"

namespace onnxc::codegen {

// Default schedule of a kernel output Func (already compute_root): vectorize the innermost dim by the
// target's natural width, parallelize the outer dims when the output is large (CPU); tile over GPU
// blocks and threads (CUDA).
void schedule_output(Halide::Func out, KernelClass k, const Halide::Target& t);

// Specializes a scheduled output on each of `empty` (conditions under which an input it reads is
// empty, LowerContext::empty_reads) and on every combination of them, within each specialization
// the schedule made (a specialization copies the schedule it starts from, not the ones inside it).
// At most kMaxEmptyReads conditions (LowerContext::empty_reads_left): each doubles the copies of
// the loop nest.
constexpr size_t kMaxEmptyReads = 4;
void specialize_empty_reads(Halide::Func out, const std::vector<Halide::Expr>& empty);

// Computes root a Func whose update definitions each copy one part into it (a Concat as copies,
// each over an RDom of the part's rows along dim `copied_dim`, Halide order): each copy loops over
// its rows outside the innermost dim, which is vectorized, unless the rows are the innermost dim.
void schedule_copies(Halide::Func f, int copied_dim, const Halide::Target& t);

// A row-wise kernel: `out` reads per-row statistics `stats` (e.g. max and sum of a softmax row).
// `reduced_inner` is how many innermost dims of `out` form a row; each stat is defined over the
// remaining dims of `out`, in the same order. The stats are computed once per row, inside the
// parallel row loop (CPU), or in the row's thread block (CUDA). With reduced_inner == 0 the stats
// cover other dims; they are then computed root and scheduled like elementwise outputs.
void schedule_rowwise(Halide::Func out, const std::vector<Halide::Func>& stats, int reduced_inner,
                      const Halide::Target& t);

// The CUDA form of schedule_rowwise for rows of one dim (gpu_rows.cpp): one thread block per row,
// the stats in shared memory. False (nothing scheduled) for shapes it does not handle.
bool schedule_rowwise_gpu(Halide::Func out, const std::vector<Halide::Func>& stats, int reduced_inner);

// A reduction accumulator computed root (pure definition and updates over an RDom): its innermost
// dim vectorized when `vectorize_inner` (the input's innermost dim is not reduced, so neighbouring
// outputs read neighbouring inputs), its outer dims in parallel when `large` holds at run time.
void schedule_reduction(Halide::Func acc, bool vectorize_inner, const Halide::Expr& large, const Halide::Target& t);

// The run-time condition under which a kernel with output `out` runs its loops in parallel: enough
// elements that waking the thread pool pays off.
Halide::Expr worth_parallel(const Halide::Func& out);

// Natural vector width for a Func's value type on the target (1 for GPU targets).
int vector_width(const Halide::Func& f, const Halide::Target& t);

// True for targets whose kernels run on a GPU (CUDA).
bool is_gpu(const Halide::Target& t);

// Fuses the loop vars vars[from..] of one stage (innermost first) into one var and returns it
// (vars[from] itself when it is the only one; an undefined Var when there is none).
Halide::Var fuse_vars(Halide::Stage s, const std::vector<Halide::Var>& vars, size_t from = 0);

}  // namespace onnxc::codegen
