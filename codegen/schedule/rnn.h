// The schedule of the recurrent kernel (RNN, GRU, LSTM; codegen/lower/rnn.cpp builds its Funcs).
#pragma once

#include <Halide.h>

#include <vector>

namespace onnxc::codegen {

// What the recurrent lowering built: `xw`, the input projection X·Wᵀ (an update over `proj_r`, pure
// vars `proj_vars`, innermost first); `state`, the recurrence (an update over `r`: units, gates or
// slots, phases); `w` and `r_weights`, the weights, copied to a layout of their own when they are not
// constants (`w_copy`, `r_copy`).
struct RnnStages {
  Halide::Func xw, r_weights, state, w;
  Halide::RDom r, proj_r;
  std::vector<Halide::Var> proj_vars;
  bool w_copy = false, r_copy = false;
};

// Schedules the stages and `out`, the kernel output reading the state.
void schedule_rnn(Halide::Func out, const RnnStages& s, const Halide::Target& t);

}  // namespace onnxc::codegen
