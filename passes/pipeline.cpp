// The default pipeline: one readable list. Each step is a registered pass (passes/registry.cpp);
// a fixpoint group repeats until none of its passes changes the model.
#include "passes/pipeline.h"

namespace onnxc::passes {

std::vector<std::string> default_pipeline() {
  return {
      "infer_shapes",  // types and symbolic shape values for everything below
      // Shape chains collapse in rounds: folding makes constants, simplify_shapes turns known shape
      // values into constants or onnxc.SymbolicShape, which lets more nodes fold; ConstantOfShape
      // becomes a scalar or an Expand; ops that return their input go; CSE merges the copies
      // exporters emit per layer, and DCE drops what no longer has a use.
      "fixpoint(constant_folding, simplify_shapes, simplify_constant_of_shape, remove_identities, cse, dce)",
      // [seq, batch, K] x W[K, N] is one [seq*batch, K] x W GEMM, not seq products of `batch` rows.
      "fold_matmul_batch",
      "infer_shapes",  // final types on the simplified graph, for codegen
  };
}

void run_pipeline(ir::Model& model, const std::vector<std::string>& names, const PipelineOptions& opt) {
  PassManager pm(opt);
  pm.run(model, names);
}

}  // namespace onnxc::passes
