// Runs a GPU schedule's loop nest on the CPU, so a CUDA schedule can be checked against a reference
// on a machine without a GPU: Halide's GPU loops have the meaning of serial loops (the CUDA backend
// adds the barriers and the thread mapping that keep that meaning), so the same Funcs, bounds,
// tilings, staging and tails, run serially, must give the values the GPU gives up to the order of
// float additions that the schedule itself fixes.
#pragma once

#include <Halide.h>

namespace onnxc::codegen::testing {

// Rewrites, in place, every schedule of every Func that `output` calls (its own included): GPU block,
// thread and lane loops become serial host loops (unrolled loops serial too), and GPU shared or register storage becomes the
// host's default. Returns how many loops were GPU loops (0 means the schedule was not a GPU one).
int gpu_loops_to_host(const Halide::Func& output);

}  // namespace onnxc::codegen::testing
