// Run-time sequences and optionals in the plan (ABI v5): the nodes that become more than one value host
// step, and copies of values (an If's results, a graph output that is an input), which a kernel cannot do.
#pragma once

#include "codegen/partition_control.h"

namespace onnxc::codegen {

// SequenceConstruct(a, b, ...) as SequenceEmpty, then a SequenceInsert at the back per input, each into a
// sequence of its own (a host step's output never aliases its inputs).
void build_sequence_construct(ControlScope& s, const ir::Node& n);

// A host step copying sequence or optional tensor src into dst (an optional from a sequence too).
Step value_copy_kernel(const Partition& p, int src, int dst);

}  // namespace onnxc::codegen
