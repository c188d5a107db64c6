// Ops that run as host steps: the runtime executes them in C (runtime/src/host_ops.c) because their
// output sizes depend on input data (NonZero, Compress, Unique, NonMaxSuppression, ReduceSum with
// axes given at run time and keepdims=0), TfIdfVectorizer (n-gram counting against a pool) and the ops
// on string tensors (StringNormalizer, Cast to and from strings): strings never reach a kernel. This file maps an IR node to the host op's fixed argument list
// (enum onnxc_host_op in runtime/include/onnxc/model_abi.h): inputs, with defaults for absent optional
// ones; outputs, with shapes for absent ones; int64 attributes; and which output dims it binds.
#pragma once

#include <optional>
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
  };
  int op = -1;                  // enum onnxc_host_op
  std::vector<Input> inputs;
  std::vector<Output> outputs;
  std::vector<int64_t> scalars;
  // The data dims the op binds, in the op's order: (output index, axis) whose size it computes.
  std::vector<std::pair<int, int>> binds;
};

// True when `n` runs as a host step.
bool is_host_op(const ir::Node& n);

// The host step for `n` (is_host_op(n)); shapes and dtypes inferred. Throws UserError for an invalid
// attribute (the node named).
HostStepArgs host_step_args(const ir::Node& n);

}  // namespace onnxc::codegen
