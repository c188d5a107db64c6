// The execution plan as plain data, one to one with onnxc_model_desc (runtime/include/onnxc/
// model_abi.h): symbols, shape expressions in reverse Polish notation, tensors, kernels, steps and the
// weights blob. make_plan() builds it from a partition and its built kernels; generate_plan_c()
// prints it as the C file every compiled library carries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/emit/kernel_builder.h"
#include "codegen/partition.h"

namespace onnxc::codegen {

// The weights blob as laid out: each distinct weight's bytes at a 64-byte aligned offset, zeros
// between. The pieces share their tensors' storage (mapped external data stays mapped) and the
// library writer streams them to the blob file, so the whole blob is never copied into memory:
// a model with 3 GiB of weights compiles without a 3 GiB buffer.
struct WeightsBlob {
  struct Piece {
    uint64_t offset = 0;
    ir::Tensor tensor;
  };
  std::vector<Piece> pieces;  // in increasing offset order
  uint64_t size = 0;
  // Bytes [0, copy_size) hold every weight some step may read in whole; the rest (from a 4 KiB
  // boundary) only weights whose every reader is a gather's data input (onnxc_model_desc's
  // weights_copy_size): the runtime leaves those in the library's pages.
  uint64_t copy_size = 0;
  bool empty() const { return size == 0; }
};


struct PlanDescription {
  struct Tensor {
    std::string name;
    int32_t dtype = 0;
    int32_t kind = 0;               // enum onnxc_tensor_kind
    std::vector<int32_t> dims;      // expression ids
    int32_t view_of = -1;
    uint64_t weight_offset = 0, weight_bytes = 0;
    int32_t value = 0;              // enum onnxc_value_kind: a tensor, or a run-time sequence/optional
  };
  struct Step {
    int32_t kind = 0;               // enum onnxc_step_kind
    int32_t kernel = 0;             // index into kernels; a host step's enum onnxc_host_op
    std::vector<int32_t> binds;     // host steps: the symbols it binds from data (-1: a known dim)
    std::vector<int32_t> args;      // tensor ids; -(expr+1) for scalars
    std::string comment;            // the kernel's root node, for readers of the C file
    std::string nodes;              // every node the kernel computes, for profiles
    int32_t flops = -1;             // expression id of its floating-point operations; -1: not counted
  };
  std::string name, target, producer;
  bool uses_cuda = false;
  int32_t default_num_threads = 0;          // onnxc compile --threads; 0 = all cores
  std::vector<std::string> symbols;
  std::vector<std::vector<int64_t>> exprs;  // each expression's RPN words
  std::vector<std::string> expr_text;       // each expression as text, for comments
  std::vector<Tensor> tensors;
  std::vector<int32_t> inputs, outputs;
  std::vector<std::string> kernels;         // entry point names (the argv function is NAME_argv)
  std::vector<Step> steps;
  WeightsBlob weights;
};

// Builds the plan: drops tensors no step, input or output refers to, lays out the weights blob (equal
// weights share bytes), serializes shapes. built[i] is kernel i of p. Throws UserError when a symbol
// is neither a dim of some graph input nor bound from data by a host step (the runtime could not bind it).
PlanDescription make_plan(const Partition& p, const std::vector<BuiltKernel>& built, const std::string& name,
                          const std::string& target, bool uses_cuda);

// The generated C source defining `onnxc_model_<name>` and the weak `onnxc_model_entry`. The weights
// blob is the symbol `onnxc_weights_<name>`, defined elsewhere (an .incbin object) when non-empty.
std::string generate_plan_c(const PlanDescription& plan);

// C text defining onnxc_set_num_threads and installing the library's thread-pool and scratch-memory
// hooks into its Halide runtime (host_runtime_c.cpp); part of every plan C.
const char* host_runtime_c();

// The public header NAME.h declaring onnxc_model_<name>.
std::string generate_header(const std::string& name);

}  // namespace onnxc::codegen
