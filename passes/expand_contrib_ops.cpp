// expand_contrib_ops (see expand_contrib_ops.h): the ONNX Runtime contrib ops that language-model
// exporters write, as the standard ops onnxc already compiles:
//
//   SimplifiedLayerNormalization(X, g)            -> RMSNormalization(X, g)
//   SkipSimplifiedLayerNormalization(x, s, g, b?) -> sum = (x + s) + b ; RMSNormalization(sum, g)
//   com.microsoft.RotaryEmbedding(x, pos, cos, sin)
//                                                 -> RotaryEmbedding(x, cos, sin, pos as [b|1, s])
//   GroupQueryAttention(q, k, v, past_k, past_v, seqlens_k, total, cos?, sin?)
//        q, k, v  (Split of a packed q when k and v are absent)
//          |  RotaryEmbedding at positions past + 0..s-1   (do_rotary)
//        Attention(q, k, v, mask: key <= seqlens_k[b], past_k, past_v; is_causal, q/kv heads)
//
// and the encoder ops of ORT's transformer optimizer (SkipLayerNormalization, BiasGelu, FastGelu,
// Gelu, QuickGelu, Attention, MultiHeadAttention: expand_contrib_encoder.cpp).
//
// So GroupQueryAttention runs on the one fused attention kernel (kv heads broadcast by h / n_rep),
// and its present key/value are Attention's: past and new rows concatenated.
#include "passes/expand_contrib_ops.h"

#include "ir/error.h"
#include "ir/infer/infer.h"
#include "passes/canonicalize.h"
#include "passes/expand_contrib_util.h"
#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

using namespace contrib;  // NOLINT: the helpers shared with expand_contrib_encoder.cpp

// RMSNormalization(x, scale) with the attributes of a (Skip)SimplifiedLayerNormalization node.
ir::Value* rms_norm(Builder& b, const ir::Node& n, ir::Value* x, ir::Value* scale) {
  ir::Node* r = b.named("RMSNormalization", {x, scale}, {name_of(n, 0)});
  r->set_attr_int("axis", n.attr_int("axis", -1));
  r->set_attr_float("epsilon", n.attr_float("epsilon", 1e-5f));
  r->set_attr_int("stash_type", n.attr_int("stash_type", 1));
  return r->output(0);
}

void expand_simplified_layer_norm(ir::Node& n) {
  check_unused(n, 1, "inv_std_var");
  Builder b{&n, *n.graph()};
  take_over(n, 0, rms_norm(b, n, n.input(0), n.input(1)));
}

void expand_skip_simplified_layer_norm(ir::Node& n) {
  check_unused(n, 1, "mean");
  check_unused(n, 2, "inv_std_var");
  Builder b{&n, *n.graph()};
  ir::Value* sum = skip_sum(b, n, 3);
  take_over(n, 0, rms_norm(b, n, sum, n.input(2)));
  take_over(n, 3, sum);
}

// Positions [1, s] = start + 0..s-1 (int64), for a rotary embedding of `x` whose sequence axis is `axis`.
ir::Value* positions_from(Builder& b, ir::Value* start, ir::Value* x, int64_t axis) {
  ir::Value* s = b.dims(x, axis, axis + 1, "seq_len");
  ir::Value* zero = b.constant(i64_scalar(0), "zero");
  ir::Value* one = b.constant(i64_scalar(1), "one");
  ir::Value* axes0 = b.constant(i64_tensor({0}), "axes0");
  ir::Value* count = b.op("Squeeze", {s, axes0}, "seq_len_scalar");
  ir::Value* range = b.op("Range", {zero, count, one}, "positions");
  ir::Value* first = b.op("Squeeze", {start, axes0}, "first_position");
  ir::Value* shifted = b.op("Add", {range, first}, "positions_from");
  return b.op("Unsqueeze", {shifted, axes0}, "position_ids");
}

ir::Node* rotary(Builder& b, ir::Value* x, ir::Value* cos, ir::Value* sin, ir::Value* pos, int64_t heads,
                 int64_t interleaved, int64_t rotary_dim, const std::string& name) {
  ir::Node* r = b.named("RotaryEmbedding", {x, cos, sin, pos}, {name});
  r->set_attr_int("interleaved", interleaved);
  if (heads > 0) r->set_attr_int("num_heads", heads);
  if (rotary_dim > 0) r->set_attr_int("rotary_embedding_dim", rotary_dim);
  return r;
}

void expand_rotary_embedding(ir::Node& n) {
  user_check(n.attr_int("is_packed_batching", 0) == 0) << n.describe() << ": is_packed_batching=1 is not supported";
  Builder b{&n, *n.graph()};
  int64_t r = rank_of(n, 0, "input");
  user_check(r == 3 || r == 4) << n.describe() << ": input must be 3-D or 4-D, not " << r << "-D";
  ir::Value* pos = n.input(1);
  int64_t pr = rank_of(n, 1, "position_ids");
  user_check(pr == 1 || pr == 2) << n.describe() << ": position_ids must be [1] (an offset) or [batch, seq]";
  if (pr == 1) pos = positions_from(b, pos, n.input(0), r == 4 ? 2 : 1);
  ir::Node* rot = rotary(b, n.input(0), n.input(2), n.input(3), pos, r == 3 ? n.attr_int("num_heads", 0) : 0,
                         n.attr_int("interleaved", 0), n.attr_int("rotary_embedding_dim", 0), name_of(n, 0));
  take_over(n, 0, rot->output(0));
}

// GroupQueryAttention inputs and attributes by position (ONNX Runtime's contrib spec).
enum Gqa { kQ, kK, kV, kPastK, kPastV, kSeqlensK, kTotal, kCos, kSin, kPositions, kBias, kSink };

void expand_group_query_attention(ir::Node& n) {
  int64_t heads = n.attr_int("num_heads", 0), kv_heads = n.attr_int("kv_num_heads", 0);
  user_check(heads > 0 && kv_heads > 0 && heads % kv_heads == 0)
      << n.describe() << ": num_heads (" << heads << ") must be a positive multiple of kv_num_heads (" << kv_heads << ")";
  user_check(n.attr_int("smooth_softmax", 0) == 0 && !n.input(kSink))
      << n.describe() << ": smooth_softmax and head_sink are not supported";
  user_check(n.attr_int("qk_output", 0) == 0) << n.describe() << ": qk_output is not supported";
  user_check(!n.input(kBias)) << n.describe() << ": attention_bias is not supported";
  user_check(n.input(kSeqlensK)) << n.describe() << ": seqlens_k is required";
  user_check(rank_of(n, kQ, "query") == 3) << n.describe() << ": query must be 3-D [batch, seq, hidden]";
  user_check(!n.input(kPastK) || rank_of(n, kPastK, "past_key") == 4)
      << n.describe() << ": past_key must be 4-D [batch, kv_num_heads, past, head_size] (BNSH)";
  Builder b{&n, *n.graph()};
  ir::Value *q = n.input(kQ), *k = n.input(kK), *v = n.input(kV);
  std::optional<int64_t> hidden = static_dim(q, 2);
  if (!k) {  // packed QKV: [batch, seq, (heads + 2 kv_heads) * head_size]
    user_check(!v && hidden && *hidden % (heads + 2 * kv_heads) == 0)
        << n.describe() << ": a packed query (no key/value) needs a static last dim divisible by num_heads + 2 kv_num_heads";
    int64_t hd = *hidden / (heads + 2 * kv_heads);
    ir::Value* split = b.constant(i64_tensor({heads * hd, kv_heads * hd, kv_heads * hd}), "qkv_split");
    ir::Node* s = b.node("Split", {q, split}, 3, "qkv");
    s->set_attr_int("axis", 2);
    q = s->output(0), k = s->output(1), v = s->output(2);
    hidden = heads * hd;
  }
  user_check(k && v) << n.describe() << ": key and value must be given together";
  ir::Value* past = n.input(kPastK) ? b.dims(n.input(kPastK), 2, 3, "past_len") : b.constant(i64_tensor({0}), "past_len");
  if (n.attr_int("do_rotary", 0) != 0) {
    user_check(n.input(kCos) && n.input(kSin)) << n.describe() << ": do_rotary=1 needs cos_cache and sin_cache";
    ir::Value* pos = n.input(kPositions) ? n.input(kPositions) : positions_from(b, past, q, 1);
    int64_t rd = 0;  // the rotated part of each head: 2 x the caches' width when that is static
    if (std::optional<int64_t> half = static_dim(n.input(kCos), 1); half && hidden) {
      if (2 * *half != *hidden / heads) rd = 2 * *half;
    } else {
      user_error << n.describe() << ": do_rotary needs a static hidden size and cos_cache width";
    }
    int64_t il = n.attr_int("rotary_interleaved", 0);
    q = rotary(b, q, n.input(kCos), n.input(kSin), pos, heads, il, rd, b.g.unique_name("q_rotated"))->output(0);
    k = rotary(b, k, n.input(kCos), n.input(kSin), pos, kv_heads, il, rd, b.g.unique_name("k_rotated"))->output(0);
  }
  // Keys past a batch entry's seqlens_k (its last valid position) are padding: mask [b, 1, 1, total].
  ir::Value* kv_len = b.dims(k, 1, 2, "kv_len");
  ir::Value* total = b.op("Add", {past, kv_len}, "total_len");
  ir::Value* axes0 = b.constant(i64_tensor({0}), "axes0");
  ir::Value* keys = b.op("Range", {b.constant(i64_scalar(0), "zero"), b.op("Squeeze", {total, axes0}, "total_scalar"),
                                   b.constant(i64_scalar(1), "one")},
                         "key_index");
  ir::Node* last = b.node("Cast", {n.input(kSeqlensK)}, 1, "seqlens_k_i64");
  last->set_attr_int("to", static_cast<int64_t>(ir::DType::Int64));
  ir::Value* last4 = b.op("Reshape", {last->output(0), b.constant(i64_tensor({-1, 1, 1, 1}), "mask_shape")}, "last_key");
  ir::Value* mask = b.op("LessOrEqual", {keys, last4}, "gqa_mask");

  std::vector<ir::Value*> in = {q, k, v, mask};
  if (n.input(kPastK)) in.insert(in.end(), {n.input(kPastK), n.input(kPastV)});
  ir::Node* a = b.named("Attention", in, {name_of(n, 0), name_of(n, 1), name_of(n, 2)});
  a->set_attr_int("is_causal", 1);
  a->set_attr_int("q_num_heads", heads);
  a->set_attr_int("kv_num_heads", kv_heads);
  if (float s = n.attr_float("scale", 0.0f); s != 0.0f) a->set_attr_float("scale", s);
  if (float c = n.attr_float("softcap", 0.0f); c != 0.0f) a->set_attr_float("softcap", c);
  if (int64_t w = n.attr_int("local_window_size", -1); w >= 0) a->set_attr_int("left_window_size", w);
  for (size_t i = 0; i < 3; ++i) take_over(n, i, a->output(i));
}

bool reads_ranks(const ir::Node& n) {
  const std::string& op = n.op_type();
  return op == "Attention" || op == "MultiHeadAttention" || op == "GroupQueryAttention" || op == "RotaryEmbedding";
}

void expand(ir::Node& n) {
  const std::string& op = n.op_type();
  if (is_encoder_op(n)) expand_encoder_op(n);
  else if (op == "SimplifiedLayerNormalization") expand_simplified_layer_norm(n);
  else if (op == "SkipSimplifiedLayerNormalization") expand_skip_simplified_layer_norm(n);
  else if (op == "RotaryEmbedding") expand_rotary_embedding(n);
  else expand_group_query_attention(n);
  for (ir::Value* o : n.outputs()) user_check(!o || !is_used(*o)) << n.describe() << ": internal: an output kept a use";
  n.graph()->remove_node(&n);
}

}  // namespace

bool expand_contrib_ops(ir::Model& m) {
  std::vector<ir::Node*> found;
  for (ir::Node* n : m.graph->nodes()) {
    const std::string& op = n->op_type();
    bool simplified = op == "SimplifiedLayerNormalization" && (n->domain().empty() || is_ms(*n));
    if (simplified || is_encoder_op(*n) ||
        (is_ms(*n) && (op == "SkipSimplifiedLayerNormalization" || op == "RotaryEmbedding" || op == "GroupQueryAttention")))
      found.push_back(n);
  }
  if (found.empty()) return false;
  // The expansions are opset-23 ops (RMSNormalization, RotaryEmbedding, Attention).
  if (m.opset("") < kCanonicalOpset) {
    std::string why = raise_opset(m, kCanonicalOpset);
    user_check(why.empty()) << "the model's contrib ops expand to opset " << kCanonicalOpset << " ops, but " << why;
  }
  // Norms and activations first: they need no shapes. The attention ops read their inputs' ranks,
  // which ORT's optimizer output leaves unknown behind the contrib ops before them (no inference
  // rule): in graph order, the shapes are inferred again where an input's is unknown.
  std::vector<ir::Node*> attention;
  for (ir::Node* n : found) {
    if (reads_ranks(*n)) attention.push_back(n);
    else expand(*n);
  }
  for (ir::Node* n : attention) {
    if (!n->input(0)->shape()) ir::infer_shapes(m);
    expand(*n);
  }
  return true;
}

}  // namespace onnxc::passes
