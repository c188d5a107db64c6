// The KV cache of a decoder step, in place: past/present pairs as onnxc.CacheAppend.
#pragma once

#include "ir/graph.h"
#include "passes/pass_context.h"

namespace onnxc::passes {

// Rewrites each Concat(past, new) whose first operand is a graph input and whose result is a graph
// output (torch's `torch.cat([past_k, k])` exports), and each Attention whose past_key/past_value are
// graph inputs and whose present_key/present_value are graph outputs (opset 23, and
// GroupQueryAttention after expand_contrib_ops), as onnxc.CacheAppend(past, new; axis[, heads]):
// the same values, computed by a runtime step that writes only the new rows when the session keeps
// the cache (present then shares past's buffer; onnxc_session_keep_cache). The Attention reads the
// cache as its keys and values (ir::kCausalFromEnd keeps its causal alignment). TensorScatter(past input, ...) -> present output
// (opset 24's cache of fixed length, read by Attention's nonpad_kv_seqlen) becomes onnxc.CacheScatter,
// which writes only the update's rows when present is past's buffer. Returns whether anything changed.
// First, caches stacked into one tensor become such pairs or chains of in-place appends
// (stacked_kv_cache.h); forms it leaves as they are go to ctx.report's near misses.
bool use_kv_cache(ir::Model& m, PassContext& ctx);
bool use_kv_cache(ir::Model& m);

}  // namespace onnxc::passes
