// A small reference evaluator for constant subgraphs: given a node whose inputs are all constant
// tensors, compute its outputs. It covers the ops that shape arithmetic and constant folding of
// exported transformer models need (shape ops, integer and float arithmetic with broadcasting,
// comparisons, data movement, small reductions), plus MatMul/Gemm/Softmax/LayerNormalization so
// tests can run whole transformer blocks as a reference. It is written for clarity, not speed: every op
// walks output elements one by one, in int64 for integer/bool tensors and in double for floats.
//
// Usage:
//   std::vector<const ir::Tensor*> in = {&a->constant(), &b->constant()};
//   if (auto out = ir::evaluate(*node, in)) use((*out)[0]);  // nullopt: unsupported op/case or too big
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op_registry.h"
#include "ir/tensor.h"

namespace onnxc::ir {

struct EvalOptions {
  // No output may hold more elements than this; a larger result makes evaluate() return nullopt.
  // Keeps constant folding from materialising huge tensors (e.g. Expand to [4096, 4096]).
  int64_t max_output_elements = int64_t{1} << 20;
  // The opset of the node's domain: picks the evaluator's entry for that version (the newest when
  // the caller does not know; the op table's opset_of gives it for a model's node).
  int64_t opset = kLatestOpset;
};

// Computes the outputs of `node` from constant `inputs` (one per node input; null = an omitted
// optional input). Attributes come from the node; per-opset forms are told apart by the inputs
// present (e.g. Unsqueeze's axes as attribute before opset 13, as input after).
// Returns nullopt when the op or this use of it (dtype, attribute form) is not supported, when an
// output would exceed the size limit, or when the arithmetic is undefined (integer division by
// zero). Throws UserError, naming the node, when the inputs contradict the op (e.g. Concat of
// tensors with different ranks, an axis out of range).
std::optional<std::vector<Tensor>> evaluate(const Node& node, const std::vector<const Tensor*>& inputs,
                                            const EvalOptions& opt = {});

// Whether evaluate() knows the op at any opset, so callers can skip
// collecting inputs for ops it would never fold.
bool can_evaluate(const std::string& domain, const std::string& op_type);

// The tensor a Constant node holds, from whichever attribute form it uses (value, value_float(s),
// value_int(s), value_string(s)); nullopt for sparse_value.
std::optional<Tensor> constant_node_value(const Node& node);

}  // namespace onnxc::ir
