// Per-channel affine maps after a convolution folded into its constant weights and bias.
#pragma once

#include "ir/graph.h"

namespace onnxc::passes {

// Rewrites Conv(X, W, B) followed by a chain of BatchNormalization (inference form), Mul or Add by a
// per-channel constant as one Conv(X, W', B') (see fold_batch_norm.cpp). float32 only; W, B and the
// affine's operands constant; the Conv's output read by the affine alone. The folded products are
// computed in double and rounded once, so Y differs from the unfolded chain only by rounding.
bool fold_batch_norm(ir::Model& model);

}  // namespace onnxc::passes
