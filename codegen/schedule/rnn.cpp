// The recurrent kernel's schedule (see rnn.h).
#include "codegen/schedule/rnn.h"

#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

void schedule_rnn(Halide::Func out, const RnnStages& s, const Halide::Target& t) {
  Halide::Func x = s.xw, st = s.state;
  const std::vector<Halide::Var>& pv = s.proj_vars;
  if (s.r_copy) Halide::Func(s.r_weights).compute_root();
  if (s.w_copy) Halide::Func(s.w).compute_root();
  x.compute_root();
  st.compute_root();
  int xvec = vector_width(x, t);
  if (xvec > 1) {
    x.vectorize(pv[0], xvec, Halide::TailStrategy::GuardWithIf);
    x.update(0).reorder(pv[0], s.proj_r.x, pv[1], pv[2], pv[3]).vectorize(pv[0], xvec, Halide::TailStrategy::GuardWithIf);
  }
  // Unrolling the phase loop makes each phase's selects and where clause constant, so each copy
  // holds one phase's code and the loops it does not use are trimmed away.
  st.update(0).unroll(s.r.z);
  // Units are independent within a phase (each reads only earlier phases or other slots), so
  // the unit loop is vectorized; Halide cannot prove that through the clamped row index.
  int vec = vector_width(st, t);
  if (vec > 1) st.update(0).allow_race_conditions().vectorize(s.r.x, vec, Halide::TailStrategy::GuardWithIf);
  schedule_output(out, KernelClass::Elementwise, t);
}

}  // namespace onnxc::codegen
