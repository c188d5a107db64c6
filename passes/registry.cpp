// The table of passes: one row per pass (name = file stem, one-line summary, factory). The pass
// manager, `--help`, `--dump-after` and `onnxc inspect` read it. Add a pass here, and to the
// pipeline in pipeline.cpp if it should run by default.
#include <algorithm>

#include "ir/infer/infer.h"
#include "passes/constant_folding.h"
#include "passes/canonicalize.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/expand_contrib_ops.h"
#include "passes/fold_constant_if.h"
#include "passes/fold_matmul_batch.h"
#include "passes/fuse_attention.h"
#include "passes/fuse_attention_forms.h"
#include "passes/fuse_dequantize_matmul.h"
#include "passes/fuse_norms.h"
#include "passes/fuse_rotary.h"
#include "passes/fusion.h"
#include "passes/legalize_symbolic_shapes.h"
#include "passes/loop_sequence_to_scan.h"
#include "passes/pass.h"
#include "passes/conv_as_matmul.h"
#include "passes/fold_batch_norm.h"
#include "passes/lower_gradient.h"
#include "passes/quantize_dynamic_int8.h"
#include "passes/quantize_int4_weights.h"
#include "passes/remove_identities.h"
#include "passes/resolve_sequences.h"
#include "passes/simplify_constant_of_shape.h"
#include "passes/simplify_shapes.h"
#include "passes/use_kv_cache.h"

namespace onnxc::passes {
namespace {

std::function<std::unique_ptr<Pass>()> fn(std::function<bool(ir::Model&)> f) {
  return [f] { return std::make_unique<FunctionPass>(f); };
}

}  // namespace

const std::vector<PassInfo>& pass_registry() {
  static const std::vector<PassInfo> table = {
      {"infer_shapes", "infer dtypes, symbolic shapes and shape values (ir/infer); changes no structure",
       fn([](ir::Model& m) {
         ir::infer_shapes(m);
         return false;
       })},
      {"expand_contrib_ops",
       "com.microsoft GroupQueryAttention, RotaryEmbedding, (Skip)SimplifiedLayerNormalization -> Attention, "
       "RotaryEmbedding, RMSNormalization (opset 23)",
       fn(expand_contrib_ops), /*needs_shapes=*/true},
      {"use_kv_cache",
       "Concat(past input, new) -> present output, caches stacked across layers or K/V, and Attention's past/present -> "
       "onnxc.CacheAppend (in place at run time)",
       [] { return std::make_unique<ContextFunctionPass>([](ir::Model& m, PassContext& c) { return use_kv_cache(m, c); }); },
       /*needs_shapes=*/true},
      {"constant_folding", "evaluate Constant nodes, nodes with constant inputs, and Shape/Size of static shapes",
       fn([](ir::Model& m) { return fold_constants(m); })},
      {"simplify_shapes",
       "shape arithmetic -> constants, Reshape targets with 0/-1, or one onnxc.SymbolicShape per shape",
       fn(simplify_shapes)},
      {"simplify_constant_of_shape", "ConstantOfShape -> a broadcast scalar, else Expand(scalar, shape)",
       fn(simplify_constant_of_shape), /*needs_shapes=*/true},
      {"fold_constant_if", "If with a constant condition -> the nodes of the branch it takes",
       fn(fold_constant_if)},
      {"resolve_sequences",
       "sequences/optionals with compile-time contents -> tensors (SequenceAt -> element, ConcatFromSequence -> "
       "Concat, SplitToSequence -> Split, SequenceMap -> body per element)",
       fn(resolve_sequences), /*needs_shapes=*/true},
      {"loop_sequence_to_scan",
       "a Loop-carried sequence appended to per iteration and stacked after the loop -> a scan output",
       fn(loop_sequence_to_scan), /*needs_shapes=*/true},
      {"remove_identities", "drop ops that return their input (Identity, same-dtype Cast, x*1, x/1, x-0, no-op Reshape)",
       fn(remove_identities), /*needs_shapes=*/true},
      {"cse", "merge identical nodes and equal small constants",
       fn([](ir::Model& m) { return eliminate_common_subexpressions(m); })},
      {"fold_matmul_batch", "MatMul of a batched A by a 2-D B -> one 2-D product between Reshape views",
       fn(fold_matmul_batch), /*needs_shapes=*/true},
      {"lower_gradient", "Gradient (ai.onnx.preview.training) of elementwise Add/Sub/Mul/Div/Neg -> its derivative in plain ops",
       fn(lower_gradient), /*needs_shapes=*/true},
      {"fold_batch_norm", "Conv followed by BatchNormalization or a per-channel Mul/Add -> Conv with folded weights and bias",
       fn(fold_batch_norm), /*needs_shapes=*/true},
      {"conv_as_matmul", "Conv whose windows tile the input (kernel = stride > 1, no pads) -> one MatMul over the patches",
       fn(conv_as_matmul), /*needs_shapes=*/true},
      {"quantize_dynamic_int8",
       "float32 MatMul/Gemm by a constant weight -> onnxc.DynamicQuantMatMul (int8; --quantize dynamic-int8)",
       make_quantize_dynamic_int8_pass, /*needs_shapes=*/true},
      {"quantize_int4_weights",
       "float32 MatMul/Gemm by a constant weight -> com.microsoft.MatMulNBits (4-bit blocks; --quantize int4-weights)",
       make_quantize_int4_weights_pass, /*needs_shapes=*/true},
      {"dce", "remove unused nodes and initializers", fn([](ir::Model& m) { return eliminate_dead_code(m); })},
      {"canonicalize",
       "raise the model to opset 23 forms; Pow(x,2) -> x*x, Reciprocal -> Div(1,x), x/2^k -> x*2^-k, Einsum -> MatMul",
       [] {
         return std::make_unique<ContextFunctionPass>([](ir::Model& m, PassContext& c) { return canonicalize(m, c); });
       },
       /*needs_shapes=*/true},
      {"fuse_attention", "softmax(Q*K^T*scale + mask)*V in plain ops -> Attention (opset 23)",
       fusion_pass(attention_rules), /*needs_shapes=*/true},
      {"fuse_attention_forms",
       "additive (Bahdanau), cosine (NTM) and Nadaraya-Watson attention -> one onnxc op each",
       fusion_pass(attention_form_rules), /*needs_shapes=*/true},
      {"fuse_layer_norm", "ReduceMean/Sub/Mul/ReduceMean/Add/Sqrt/Div (+scale, +bias) -> LayerNormalization",
       fusion_pass(layer_norm_rules), /*needs_shapes=*/true},
      {"fuse_rms_norm", "x * 1/sqrt(mean(x*x) + eps) (* w), with fp32 Casts -> RMSNormalization",
       fusion_pass(rms_norm_rules), /*needs_shapes=*/true},
      {"legalize_symbolic_shapes", "onnxc.SymbolicShape -> Shape/Gather/Add/Mul/Concat (for ONNX export)",
       fn(legalize_symbolic_shapes)},
      {"fuse_dequantize_matmul",
       "MatMul by a blocked DequantizeLinear of a constant int4/int8 weight -> com.microsoft.MatMulNBits",
       fusion_pass(dequantize_matmul_rules), /*needs_shapes=*/true},
      {"fuse_gelu", "0.5*x*(1+erf(x/sqrt2)), the tanh form, x*sigmoid(1.702x) -> Gelu", fusion_pass(gelu_rules),
       /*needs_shapes=*/true},
      {"fuse_rotary", "x*cos + rotate_half(x)*sin (HF apply_rotary_pos_emb, full or partial) -> RotaryEmbedding",
       fusion_pass(rotary_rules), /*needs_shapes=*/true},
  };
  return table;
}

const PassInfo* find_pass(std::string_view name) {
  const auto& t = pass_registry();
  auto it = std::find_if(t.begin(), t.end(), [&](const PassInfo& p) { return p.name == name; });
  return it == t.end() ? nullptr : &*it;
}

}  // namespace onnxc::passes
