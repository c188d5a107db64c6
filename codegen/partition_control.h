// Control flow in the plan: If as branch ranges (ABI v3), Loop and Scan as run-time loops (ABI v4).
// The partitioner of the graph holding the node hands these functions a ControlScope, the little of
// itself they need, so control-flow lowering lives apart from grouping and fusion (partition.cpp).
#pragma once

#include <optional>

#include "codegen/partition.h"

namespace onnxc::codegen {

class ControlScope {
 public:
  virtual ~ControlScope() = default;
  virtual Partition& plan() = 0;
  // The tensor of a value, created as an intermediate (or weight, for a constant) on first sight.
  virtual int tensor_of(const ir::Value* v) = 0;
  // From now on value v is tensor t (a body input is the loop's carried tensor, ...).
  virtual void bind(const ir::Value* v, int t) = 0;
  // Appends the kernels of a branch's or body's live nodes, partitioned like any graph (a nested
  // scope: no steps that bind symbols from data inside it).
  virtual void add_body(const ir::Graph& body) = 0;
  // A kernel copying tensor src into tensor dst (same dtype and element count).
  virtual Step copy_kernel(int src, int dst) = 0;
  // True inside an If branch or a loop body.
  virtual bool nested() const = 0;
  // Symbols that graph input dims bind (known before a run).
  virtual bool input_symbol(const std::string& name) const = 0;
};

// If: BRANCH (to the else-range when the condition is false), then-range, JUMP (past the else-range),
// else-range; each range ends with copies of its results into the If's outputs. Control only moves
// forward, so the runtime's liveness over the step list keeps every tensor a range reads alive across
// both ranges. Throws UserError for a non-bool condition and branches whose outputs differ in shape.
void build_if(ControlScope& s, const ir::Node& n);

// Loop: the initial condition and carried values copied in; LOOP {iteration count, M, condition}; the
// body's kernels; a ScanAppend per scan output; the body's condition and carried results copied back;
// NEXT; after the loop a ScanCollect per scan output. The Loop's carried outputs are the carried
// tensors themselves. Throws UserError for shapes that change across iterations and for a scan output
// whose length is data-dependent inside an If branch or another loop.
void build_loop(ControlScope& s, const ir::Node& n);

// Scan (opset 9+; opset 8's batch axis as an outer loop over the batch): the same loop with the trip
// count the scan axis' length, a ScanSlice per scan input, scan outputs stacked on their axes in their
// directions.
void build_scan(ControlScope& s, const ir::Node& n, int64_t opset);

}  // namespace onnxc::codegen
