// Winograd F(m×m, 3×3) convolution (conv_winograd.cpp), chosen by conv.cpp per convolution.
#pragma once

#include <vector>

#include "codegen/lower/window.h"

namespace onnxc::codegen {

// The output tile m (2 or 4) for a 3×3 stride-1 undilated 2-D convolution with `channels` input and
// `m_ext` output channels whose output extents `out` ([N, M, H, W]) and pads are known when
// compiling, or 0 for the direct form. The default picks from the target description
// (choose_winograd_tile); the environment variable ONNXC_CONV_WINOGRAD (read when compiling; part of
// the kernel cache key) overrides it: "2" or "4" force that tile wherever it applies, "0" (or any
// value but "auto") keeps the direct form. Non-finite inputs give the direct form's outputs exactly:
// an output that the tile transforms leave NaN or ±inf is recomputed as the direct 3×3 sum, so a NaN
// or ±inf reaches only the outputs whose own window holds it, with the direct form's inf signs.
int winograd_tile(const LowerContext& ctx, const Window& win, const std::vector<Halide::Expr>& out, int64_t channels, int64_t m_ext);

// The convolution as F(tile×tile, 3×3) (constant float32 weights, one group, CPU).
std::vector<HTensor> conv_winograd(LowerContext& ctx, const Window& win, int tile);

}  // namespace onnxc::codegen
