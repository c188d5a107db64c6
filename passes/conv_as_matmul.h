// Patch convolutions as matrix products: a Conv whose windows tile its input without overlap or gaps
// (kernel = stride, no padding, no dilation, one group) is one GEMM over the patches.
#pragma once

#include "ir/graph.h"

namespace onnxc::passes {

// Rewrites Y = Conv(X [N, C, S1..Sr], W [M, C, k1..kr], B [M]) with strides = k, pads 0,
// dilations 1, group 1, W (and B) constant, C and every Si static and divisible by ki, and a kernel
// larger than 1×1, as
//
//   P = Reshape(Transpose(Reshape(X, [0, C, S1/k1, k1, .., Sr/kr, kr]), [0, 1, 3, 5, .., 2, 4, ..]),
//               [0, C·k1..kr, S1/k1 .. Sr/kr])                  -- the patches as columns
//   Y = Reshape(MatMul(W as [M, C·k1..kr], P) + B as [M, 1], [0, M, S1/k1, .., Sr/kr])
//
// ViT's 16×16 patch embedding and Swin's and ConvNeXt's 4×4 stems take this form. A pointwise conv
// is left to codegen's implicit GEMM, which runs it as fast and fuses its epilogue.
// float32 only. Needs inferred shapes. Guarantees: each output element is the same sum of the same
// products (in another order, as any convolution algorithm may sum them).
bool conv_as_matmul(ir::Model& model);

}  // namespace onnxc::passes
