// Pooling schedules (see pool.h).
#include "codegen/schedule/pool.h"

#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

using namespace Halide;

// Loop nest (outermost first):
//   parallel task over (channel, image)
//     padded plane: -inf over the region read (x vectorized), then the image's rows copied over it
//       (each row a dense vector load, its last vector masked)
//     rows: for each input row the window reads, the horizontal maxima, x vectorized (a strided
//       window's taps are evenly spaced loads)
//     output: for each output row, the vertical maximum of `rows`, x vectorized, the last vector masked
// A plane of ResNet's first pool (112×112 floats, padded 113×113) and its row maxima take ~75 KiB:
// they stay in L2 between being written and read.
void schedule_max_pool_rows(const MaxPoolRowsFuncs& g, Func output, const Target& t) {
  Func padded = g.padded, rows = g.rows;
  if (t.has_gpu_feature() || output.dimensions() != 4) {  // not the pool's own output: whole stages
    padded.compute_root();
    rows.compute_root();
    return schedule_output(output, KernelClass::Reduction, t);
  }
  const int vec = t.natural_vector_size<float>();
  std::vector<Var> o = output.args();
  Var task("mp_task");
  output.vectorize(o[0], vec, TailStrategy::Predicate).fuse(o[2], o[3], task).parallel(task);
  rows.compute_at(output, task).vectorize(rows.args()[0], vec, TailStrategy::RoundUp);
  padded.compute_at(output, task).vectorize(padded.args()[0], vec, TailStrategy::RoundUp);
  // An image row's elements are distinct plane elements (the copy is injective), which Halide
  // cannot prove for run-time extents.
  padded.update().allow_race_conditions().vectorize(g.interior.x, vec, TailStrategy::Predicate);
}

}  // namespace onnxc::codegen
