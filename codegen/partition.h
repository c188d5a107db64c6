// Partitioning: a model graph becomes a table of tensors and an ordered list of steps (Halide kernels,
// host steps, control steps). The result is plain data: each kernel owns a small copy of its nodes (a
// mini graph whose inputs carry the constant data of weights), so nothing after this step points into
// the model's graph.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "codegen/lower/lower.h"
#include "ir/graph.h"

namespace onnxc::codegen {

// Numbered as enum onnxc_tensor_kind in runtime/include/onnxc/model_abi.h.
enum class TensorKind { Input = 0, Output = 1, Intermediate = 2, Weight = 3, View = 4 };

struct PlanTensor {
  std::string name;
  ir::DType dtype = ir::DType::Undefined;
  ir::Shape shape;
  TensorKind kind = TensorKind::Intermediate;
  int view_of = -1;                 // View: the (non-view) tensor whose bytes this is
  std::optional<ir::Tensor> data;   // Weight: the bytes
  int value = 0;                    // enum onnxc_value_kind: 0 a tensor; else a run-time sequence or
                                    // optional (rank 0, dtype its elements'), never in the arena
};


// A step is one entry of the plan's step list: a Halide kernel, a host step or a control step. The
// fields every kind has are on Step; each kind's own fields are in its alternative of Step::kind, so
// code that handles one kind reads only that kind's fields (step.kernel(), step.host(), step.control()).

// A Halide kernel (codegen/emit/kernel_builder.h). Its graph holds the kernel's nodes, copied: graph
// inputs are aligned with Step::inputs, graph outputs with Step::outputs. Inputs bound to weights
// carry the weight's constant data.
struct KernelStep {
  KernelClass kclass = KernelClass::Elementwise;
  std::shared_ptr<ir::Graph> graph;
  std::map<std::string, int64_t> opsets;  // opset per domain of its nodes ("" = ai.onnx)
  // Inputs (indices into Step::inputs) the runtime may pass with strides that are not dense: a KV
  // cache kept with capacity along its sequence axis (onnxc.CacheAppend's past and present).
  std::set<size_t> strided_inputs;
};

// A host step (codegen/host_steps.h): an op the runtime runs in C. Step::inputs and Step::outputs are
// the op's tensor arguments in its order.
struct HostStep {
  int op = -1;                                 // enum onnxc_host_op
  std::vector<int64_t> scalars;                // int64 attributes, after the tensors
  std::vector<std::pair<int, int>> binds;      // (index into outputs, axis) of each data dim it binds
  std::vector<std::string> bind_symbols;       // or the symbols it binds by name (ONNXC_HOST_VALUE_SIZE)
};

// A control step (enum onnxc_step_kind BRANCH, JUMP, LOOP, NEXT). BRANCH reads the bool tensor
// Step::inputs[0]; each goes on at step index `target` (steps.size(): the end). LOOP reads inputs
// {iteration count, trip count, condition}; inputs[1] is -1 when the trip count is the shape
// expression `trip` (a Scan's length). NEXT's target is its LOOP.
struct ControlStep {
  int kind = 0;
  int target = -1;
  std::optional<ir::Dim> trip;
};

using StepKind = std::variant<KernelStep, HostStep, ControlStep>;

struct Step {
  std::string name;                 // for messages and profiles: the root node, e.g. "Softmax 'sm'"
  std::vector<int> inputs;          // tensor ids
  std::vector<int> outputs;         // tensor ids
  StepKind kind;                    // default: a kernel step whose graph the partitioner fills

  // The step's own fields if it is of that kind, else null.
  KernelStep* kernel() { return std::get_if<KernelStep>(&kind); }
  const KernelStep* kernel() const { return std::get_if<KernelStep>(&kind); }
  HostStep* host() { return std::get_if<HostStep>(&kind); }
  const HostStep* host() const { return std::get_if<HostStep>(&kind); }
  ControlStep* control() { return std::get_if<ControlStep>(&kind); }
  const ControlStep* control() const { return std::get_if<ControlStep>(&kind); }
};

struct Partition {
  std::vector<PlanTensor> tensors;
  std::vector<int> inputs;          // graph inputs, in order
  std::vector<int> outputs;         // graph outputs, in order
  std::vector<Step> steps;          // in execution order
};

// Ops that are views of their first input (same bytes, another shape); they never get a kernel.
bool is_view_op(const ir::Node& n);

// Live nodes (those graph outputs depend on) that have no lowering: one "OpType (node)" entry each;
// first, graph inputs and outputs that are no tensors (sequences, optionals).
std::vector<std::string> find_unsupported(const ir::Model& m);

// Partitions a model whose values all have inferred dtypes and shapes. Kernels: one per node, except
// that views get none; a MatMul/Gemm takes its single-use elementwise consumers (bias, activation)
// as an epilogue; elementwise and data-movement producers whose every use is inside one consumer
// kernel are inlined into it (chains and trees of elementwise/broadcast ops become one kernel); and
// Shape / onnxc.SymbolicShape nodes are copied into the kernels that read them. Ops whose output sizes
// depend on data (NonZero, Compress, Unique, NonMaxSuppression) become host steps of their own. Graph outputs that
// are inputs, weights or views get a copy kernel; graph inputs with an initializer are weights.
// An If becomes BRANCH, its then_branch's kernels, copies of their results into the If's outputs, JUMP,
// the same for else_branch; branch kernels read outer values as the tensors they are (nested Ifs too).
// Loop and Scan become LOOP .. NEXT ranges (codegen/partition_control.h).
// Throws UserError for unsupported ops (listing all of them) and for values without a shape.
Partition partition_model(const ir::Model& m);

}  // namespace onnxc::codegen
