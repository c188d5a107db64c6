// The contrib ops of ONNX Runtime's com.microsoft domain that language-model exporters write
// (ORT GenAI's model builder, Olive, optimum), as the standard ops onnxc compiles.
#pragma once

#include "ir/graph.h"

namespace onnxc::passes {

// Rewrites SimplifiedLayerNormalization (default or com.microsoft domain) and com.microsoft's
// SkipSimplifiedLayerNormalization, RotaryEmbedding and GroupQueryAttention, and the encoder ops of
// ORT's transformer optimizer (SkipLayerNormalization, BiasGelu, FastGelu, Gelu, QuickGelu, Attention,
// MultiHeadAttention) as opset-23 RMSNormalization, LayerNormalization, Gelu, Add, RotaryEmbedding and
// Attention (raising the model to opset 23 first); ORT's masks (mask_index, key_padding_mask,
// unidirectional) become an additive attn_mask with ORT's mask_filter_value, attention_bias added.
// Every value keeps its meaning; graph outputs keep their names. GroupQueryAttention's present
// key/value are the past and new rows concatenated (ORT's form when past and present do not share
// a buffer). Throws UserError naming the node for a form it does not handle (GroupQueryAttention's
// smooth_softmax, head_sink, attention_bias, qk_output; ORT's 4-D Megatron mask, packed or BNSH
// MultiHeadAttention inputs, cache_indirection; an unknown rank; a mean or inv_std_var output in use).
// Returns whether anything changed.
bool expand_contrib_ops(ir::Model& m);

}  // namespace onnxc::passes
