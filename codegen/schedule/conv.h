// Convolution schedules: the implicit GEMM (im2col panels gathered per task and fed to the GEMM's
// register block) and the depthwise kernel. lower/conv.cpp builds the Funcs; this file owns the loops.
#pragma once

#include <Halide.h>

#include "codegen/schedule/gemm.h"

namespace onnxc::codegen {

// What the implicit-GEMM convolution lowering built (lower/conv.cpp explains the two forms). Pixels
// p are flattened row-major over a grid of p_extent pixels:
//   input(q, c, n)         stride 1: channel c of image n zero-padded and flattened (else undefined)
//   stage(i, kk, panel, n) other strides: the im2col panel, column i is pixel panel·width + i
//   acc(p, m, n)           zero, then one update summing W[m, k] · B(k, p) over the RDom `k`
//   gemm(p, m, n)          acc realized whole over [0, p_extent) × [0, m_extent): the output Func
//                          reads it at its pixel, adding bias and any epilogue
struct ConvGemmFuncs {
  Halide::Func input, stage, acc, gemm;
  Halide::RDom k;
  PanelShape panel;
  Halide::Expr p_extent;
  int m_extent = 0;
};

// Register-blocked tasks over (row block group, pixel panel, image), each running every row block of
// its group over its panel (gathered first, for the im2col form); `output` (elementwise over gemm)
// follows.
void schedule_conv_gemm(ConvGemmFuncs g, Halide::Func output, const Halide::Target& target);

// A depthwise 2-D convolution `acc(x, y, c, n)` (zero, then one update over the window `r`), read
// by `output` over the same dims: computed one output row at a time inside the output's loops, each
// vector of the row summing the whole (unrolled) window in a register; parallel over channels and
// images.
void schedule_depthwise(Halide::Func acc, const Halide::RDom& r, Halide::Func output, const Halide::Target& target);

}  // namespace onnxc::codegen
