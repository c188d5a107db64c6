// Sequences and optionals whose contents are known at compile time become plain tensors.
#pragma once

#include "ir/graph.h"

namespace onnxc::passes {

// Follows every sequence and optional value whose elements are known at compile time (built by
// SequenceEmpty/Construct/Insert/Erase at constant positions, SplitToSequence with known split
// sizes, Optional, Identity, SequenceMap over such sequences) and rewrites what reads them:
// SequenceAt at a constant position and OptionalGetElement become the element itself,
// SequenceLength and OptionalHasElement constants, ConcatFromSequence a Concat (with Unsqueeze for
// new_axis), SplitToSequence a Split (with Squeeze for keepdims=0), and a SequenceMap the body
// inlined once per element. A SequenceLength whose count alone is known (SplitToSequence by a run-time
// split of static length) also becomes a constant. Values at the graph's interface keep their names;
// the sequence nodes left without uses go with DCE. Sequences whose contents depend on run-time data
// (graph inputs, positions computed at run time, If outputs) are left as they are. Main graph and
// subgraphs; the model's opset decides the form of the Split/Squeeze/Unsqueeze built. Returns whether
// anything changed.
bool resolve_sequences(ir::Model& model);

}  // namespace onnxc::passes
