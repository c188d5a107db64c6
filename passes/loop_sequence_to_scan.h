// A Loop-carried sequence that only collects one tensor per iteration becomes a scan output.
#pragma once

#include "ir/graph.h"

namespace onnxc::passes {

// Rewrites the way exporters collect per-step results of a Loop (torch's greedy decoding: a list
// appended to in a `for` loop, stacked or concatenated after it):
//
//   s0 = SequenceEmpty()                            ==>   ..., scan = Loop(M, cond, ...) { ...; return ..., t }
//   ..., s = Loop(M, cond, ..., s0) {                     y = Transpose(scan, perm moving axis 0 to `a`)
//     s_out = SequenceInsert(s_in, t); return ..., s_out }   (no Transpose when a = 0; for new_axis=0
//   y = ConcatFromSequence(s) {axis a, new_axis}             a Reshape then merges the loop axis into a)
//
// A scan output stacks the body's value of every iteration along a new axis 0, which is what
// appending to the back of an empty sequence and stacking it along `a` computes. Conditions: the
// carried value starts as SequenceEmpty; in the body it is read only by one SequenceInsert without a
// position whose result is returned as that carried value and read by nothing else; after the loop
// it is read only by ConcatFromSequence (in the same graph), and is no graph output; the inserted
// tensor has the same shape in every iteration (its dims are numbers or functions of the model's
// input dims); the body holds no nested subgraphs. One difference, on a loop that runs no
// iteration: the result is an empty tensor (stacked) or a Reshape error where ConcatFromSequence of
// an empty sequence is an error. Main graph and subgraphs. Returns whether anything changed.
bool loop_sequence_to_scan(ir::Model& model);

}  // namespace onnxc::passes
