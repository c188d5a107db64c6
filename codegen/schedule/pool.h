// Pooling schedules: the separable MaxPool over 2-D images. lower/pooling.cpp builds the Funcs;
// this file owns the loops.
#pragma once

#include <Halide.h>

namespace onnxc::codegen {

// What the separable MaxPool lowering built (lower/pooling.cpp, max_pool_rows), every Func over
// (x, y, c, n) in Halide order:
//   padded(ix, iy, c, n)  -inf, then one update copying the image over `interior` (input
//                         coordinates: the pads are the -inf around it, at negative coordinates
//                         and past the image's end)
//   rows(ox, iy, c, n)    the maximum of each input row's horizontal window (NaN when one is NaN)
//   output(ox, oy, c, n)  the maximum over the window's rows of `rows`
struct MaxPoolRowsFuncs {
  Halide::Func padded, rows;
  Halide::RDom interior;
};

// Parallel tasks over (channel, image) planes; in each, the plane's padded copy, then its row
// maxima, then its output, each vectorized along x, so a plane's intermediates stay in cache.
void schedule_max_pool_rows(const MaxPoolRowsFuncs& g, Halide::Func output, const Halide::Target& target);

}  // namespace onnxc::codegen
