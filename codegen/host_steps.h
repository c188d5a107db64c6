// Ops that run as host steps: the runtime executes them in C (runtime/src/host_ops.c holds the table,
// host_*.c the ops) because their output sizes depend on input data (NonZero, Compress, Unique,
// NonMaxSuppression, ReduceSum with axes given at run time and keepdims=0), TfIdfVectorizer (n-gram
// counting against a pool), the ops on string tensors (StringNormalizer, StringConcat, Cast to and
// from strings: strings never reach a kernel) and
// the ops over run-time sequences and optionals (runtime/src/host_sequence.c). This file maps an IR
// node to the host op's fixed argument list
// (enum onnxc_host_op in runtime/include/onnxc/model_abi.h): inputs, with defaults for absent optional
// ones; outputs, with shapes for absent ones; int64 attributes; and which output dims it binds.
// One table in host_steps.cpp (kHostOps) builds their arguments; which nodes run on the host is
// decided by the op table's traits (kDataDependent, kHostOnly: always) and, for ops that run in
// kernels otherwise, by the row's form. Adding a host op is a row there, its builder, and its C file
// in runtime/src.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace onnxc::codegen {

struct HostStepArgs {
  struct Input {
    const ir::Value* value = nullptr;  // null: absent, use `fallback`
    std::optional<ir::Tensor> fallback;
  };
  struct Output {
    const ir::Value* value = nullptr;  // null or dead: the op still writes it, into a tensor of this type
    ir::DType dtype = ir::DType::Undefined;
    ir::Shape shape;
    int value_kind = 0;  // enum onnxc_value_kind of the output (a sequence or optional: shape is empty)
  };
  int op = -1;                  // enum onnxc_host_op
  std::vector<Input> inputs;
  std::vector<Output> outputs;
  std::vector<int64_t> scalars;
  // The data dims the op binds, in the op's order: (output index, axis) whose size it computes.
  std::vector<std::pair<int, int>> binds;
};

// The enum onnxc_value_kind of a value's type: 0 for a tensor; -1 for what the runtime does not carry
// (maps, nested sequences, sparse tensors, an unknown element type).
int value_kind_of(const ir::Type& t);
// The dtype of a value's tensors (a tensor's own, a sequence's or optional's elements').
ir::DType element_dtype(const ir::Type& t);

// True when `n` runs as a host step.
bool is_host_op(const ir::Node& n);

// The rows of the host-op table, for tests that check it against the op table's traits.
struct HostOpRow {
  std::string domain;
  std::string op;      // empty: any op its form accepts
  bool by_traits;      // no form: runs on the host whenever the op's traits say so
};
std::vector<HostOpRow> host_op_rows();

// The host step for `n` (is_host_op(n)); shapes and dtypes inferred. Throws UserError for an invalid
// attribute (the node named).
HostStepArgs host_step_args(const ir::Node& n);

}  // namespace onnxc::codegen
