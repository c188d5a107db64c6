// The default pipeline: one readable list. Each step is a registered pass (passes/registry.cpp);
// a fixpoint group repeats until none of its passes changes the model.
#include "passes/pipeline.h"

namespace onnxc::passes {

std::vector<std::string> default_pipeline() {
  return {
      "infer_shapes",  // types and symbolic shape values for everything below
      // A Gradient names the values it differentiates: written out before anything renames them.
      "lower_gradient",
      // ONNX Runtime's contrib ops (language-model exports) become the standard ops they compute.
      "expand_contrib_ops",
      // Shape chains collapse in rounds: folding makes constants, simplify_shapes turns known shape
      // values into constants or onnxc.SymbolicShape, which lets more nodes fold; ConstantOfShape
      // becomes a scalar or an Expand; an If on a constant becomes its branch; sequences built and
      // read at compile-time positions become the tensors they hold, and a list a Loop collects
      // becomes a scan output; ops that return their input go; CSE merges the copies exporters emit
      // per layer, and DCE drops what no longer has a use.
      // canonicalize raises the model to one internal opset and gives each idiom one spelling, so the
      // fusions below each match one core form.
      "fixpoint(constant_folding, fold_constant_if, resolve_sequences, loop_sequence_to_scan, simplify_shapes, "
      "simplify_constant_of_shape, remove_identities, "
      "canonicalize, cse, dce)",
      // Fusions, largest first: attention contains no norm, norms contain no GELU, so the order only
      // matters for the report.
      "fuse_attention_forms",
      "fuse_attention",
      "fuse_layer_norm",
      "fuse_rms_norm",
      "fuse_gelu",
      "fuse_rotary",
      // An int4/int8 weight written as DequantizeLinear(blocks) -> MatMul stays packed.
      "fuse_dequantize_matmul",
      // [seq, batch, K] x W[K, N] is one [seq*batch, K] x W GEMM, not seq products of `batch` rows.
      "fold_matmul_batch",
      // BatchNormalization (and a per-channel Mul or Add) after a Conv costs nothing folded into it.
      "fold_batch_norm",
      // A patch-embedding Conv is one GEMM over its patches.
      "conv_as_matmul",
      // past/present pairs of a decoder step: appended in place by the runtime.
      "use_kv_cache",
      "fixpoint(constant_folding, remove_identities, cse, dce)",
      "infer_shapes",  // final types on the simplified graph, for codegen
  };
}

void run_pipeline(ir::Model& model, const std::vector<std::string>& names, const PipelineOptions& opt) {
  PassManager pm(opt);
  pm.run(model, names);
}

}  // namespace onnxc::passes
