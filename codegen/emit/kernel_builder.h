// One kernel -> one Halide pipeline: ImageParams for its tensor inputs, Param<int64_t>s for the
// symbols in its shapes, the op lowerings of its nodes, a schedule per output. Also the kernel's
// canonical form, which names its entry point and keys the kernel cache.
#pragma once

#include <Halide.h>

#include <optional>
#include <string>
#include <vector>

#include "codegen/partition.h"

namespace onnxc::codegen {

// One argv entry of a kernel call: a tensor id, or (tensor < 0) the value of a model symbol.
struct KernelArg {
  int tensor = -1;
  std::string symbol;
};

struct BuiltKernel {
  std::string canonical;               // the kernel's canonical text (see canonical_form)
  std::string fn_name;                 // "onnxc_k_<hash of canonical>"
  Halide::Pipeline pipeline;
  std::vector<Halide::Argument> args;  // compile arguments (tensor inputs, then scalars)
  std::vector<KernelArg> call_args;    // argv order: args, then outputs
  // The target to compile with when it is not the model's: int8 kernels add the VNNI dot products
  // (with_dot_products); the canonical text says so, so the cache keeps the two apart.
  std::optional<Halide::Target> compile_target;
};

// Canonical text of a kernel step for a target: op types, opsets, attributes, dtypes, shapes with symbols
// renamed in order of appearance (s0, s1...), constant-data fingerprints. Kernels with equal text
// compile to the same code, whatever their names or the model's symbol names.
std::string canonical_form(const Step& k, const std::string& target);

// Lowers and schedules kernel step `k` of `p` (k.kernel() is set; a host or control step is an
// internal error). Constants a lowering adds (LowerContext::add_constant)
// become new Weight tensors appended to p.tensors. Throws UserError naming the node when a lowering
// rejects it.
BuiltKernel build_kernel(const Step& k, Partition& p, const Halide::Target& target,
                         const std::string& target_name);

// A symbolic dim as a Halide Int(32) Expr, given each symbol's Expr.
Halide::Expr dim_to_expr(const ir::Dim& d, const std::map<std::string, Halide::Expr>& symbols);

}  // namespace onnxc::codegen
