// MatMul batch folding: a batched activation times a 2-D matrix becomes one 2-D product.
#pragma once

#include "ir/graph.h"

namespace onnxc::passes {

// Rewrites y = MatMul(A: [d1,..,dr, M, K], B: [K, N]) (rank of A >= 3, B 2-D) as
//
//   y = Reshape(MatMul(Reshape(A, [-1, K]), B), [d1,..,dr, M, N])
//
// numpy's rules make d1..dr, M batch dims of the product though B has none: a seq-first export
// ([seq, batch, 768] x W) would otherwise run `seq` products of M = batch rows each. The Reshapes
// are views (no copy). A chain of single-use elementwise consumers of y whose other operand is a
// constant broadcast along the last dim (bias) or a tensor of y's exact shape (residual) moves
// inside the Reshape too, so it stays the GEMM's epilogue. Needs inferred shapes; K must be static.
// Guarantees: the same values (each output element is the same sum over the same products).
bool fold_matmul_batch(ir::Model& model);

}  // namespace onnxc::passes
