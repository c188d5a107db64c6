// The encoder ops of ONNX Runtime's transformer optimizer (onnxruntime.transformers.optimizer, and
// Optimum's ORT exports) as the standard ops onnxc compiles and fuses:
//
//   SkipLayerNormalization(x, skip, g, b?, bias?) -> sum = (x + skip) + bias ; LayerNormalization(sum, g, b)
//   BiasGelu(a, bias)                             -> Gelu(a + bias)
//   FastGelu(x, bias?)                            -> Gelu(x + bias, approximate="tanh")
//   Gelu(x)                                       -> Gelu(x)
//   QuickGelu(x)                                  -> x · Sigmoid(alpha · x)
//   Attention(x, W, bias?, mask_index?, past?)    -> q, k, v = Split(x·W + bias) ; Attention(q, k, v, mask, ...)
//   MultiHeadAttention(q, k, v, bias?, key_padding_mask?, -, past_key?, past_value?)
//                                                 -> Attention(q + bq, k + bk, v + bv, mask, past_key, past_value)
//
// The mask is ORT's (PrepareMask): 0 where a key is kept and mask_filter_value (-10000 unless given)
// where it is masked, added to the scaled scores; `unidirectional` adds mask_filter_value again to
// the keys after each query's position (past + row); attention_bias is added after them. All are
// built from the graph as an additive attn_mask of the input's type, so the scores keep ORT's values and the Attention node sees one
// additive mask, the form it fuses and runs on its one kernel.
#include "ir/error.h"
#include "passes/expand_contrib_util.h"
#include "passes/rewrite.h"

namespace onnxc::passes::contrib {
namespace {

ir::Value* f32_like(Builder& b, float v, ir::Value* like, const std::string& hint) {
  ir::Value* c = b.constant(ir::Tensor::scalar(ir::DType::Float32, v), hint);
  return b.op("CastLike", {c, like}, hint + "_like");
}

ir::Value* add_bias(Builder& b, ir::Value* x, ir::Value* bias, const std::string& hint) {
  return bias ? b.op("Add", {x, bias}, hint) : x;
}

void expand_skip_layer_norm(ir::Node& n) {
  check_unused(n, 1, "mean");
  check_unused(n, 2, "inv_std_var");
  Builder b{&n, *n.graph()};
  ir::Value* sum = skip_sum(b, n, 4);
  std::vector<ir::Value*> in = {sum, n.input(2)};
  if (n.input(3)) in.push_back(n.input(3));
  ir::Node* ln = b.named("LayerNormalization", in, {name_of(n, 0)});
  ln->set_attr_int("axis", -1);
  ln->set_attr_float("epsilon", n.attr_float("epsilon", 1e-12f));
  take_over(n, 0, ln->output(0));
  take_over(n, 3, sum);
}

void expand_gelu(ir::Node& n, bool tanh) {
  Builder b{&n, *n.graph()};
  ir::Value* x = add_bias(b, n.input(0), n.inputs().size() > 1 ? n.input(1) : nullptr, "gelu_in");
  ir::Node* g = b.named("Gelu", {x}, {name_of(n, 0)});
  if (tanh) g->set_attr_string("approximate", "tanh");
  take_over(n, 0, g->output(0));
}

void expand_quick_gelu(ir::Node& n) {
  Builder b{&n, *n.graph()};
  ir::Value* x = n.input(0);
  ir::Value* ax = b.op("Mul", {x, f32_like(b, n.attr_float("alpha", 1.702f), x, "alpha")}, "quick_gelu_ax");
  ir::Value* y = b.named("Mul", {x, b.op("Sigmoid", {ax}, "quick_gelu_sig")}, {name_of(n, 0)})->output(0);
  take_over(n, 0, y);
}

// ORT's additive mask [b|1, 1, s|1, t] for a query `q` [b, s, hidden] over `t` keys (`past` of them
// from the cache): mask_index (1-D ends [b] or ends and starts [2b], 2-D [b, t] or 3-D [b, s, t]
// of 0/1) gives mask_filter_value where a key is masked; `causal` adds it again above the diagonal.
// nullptr when there is neither.
ir::Value* ort_mask(Builder& b, const ir::Node& n, size_t mask_input, ir::Value* q, ir::Value* k, ir::Value* past,
                    bool causal) {
  ir::Value* mask = n.inputs().size() > mask_input ? n.input(mask_input) : nullptr;
  // attention_bias [b|1, heads|1, s, t], added after the mask: a kept key's bias is added to 0 (exact),
  // a masked key's score stays masked.
  ir::Value* bias = n.inputs().size() > 5 ? n.input(5) : nullptr;
  if (!mask && !causal) return bias;
  ir::Value* filter = f32_like(b, n.attr_float("mask_filter_value", -10000.0f), q, "mask_filter");
  ir::Value* zero = f32_like(b, 0.0f, q, "mask_zero");
  ir::Value* axes0 = b.constant(i64_tensor({0}), "axes0");
  ir::Value* kv_len = b.dims(k, 1, 2, "kv_len");
  ir::Value* total = past ? b.op("Add", {past, kv_len}, "total_len") : kv_len;
  auto range = [&](ir::Value* len, const std::string& hint) {
    return b.op("Range", {b.constant(i64_scalar(0), "zero"), b.op("Squeeze", {len, axes0}, hint + "_n"),
                          b.constant(i64_scalar(1), "one")},
                hint);
  };
  ir::Value* keys = range(total, "key_index");  // [t]
  ir::Value* additive = nullptr;
  if (mask) {
    int64_t r = rank_of(n, mask_input, "mask_index");
    ir::Value* keep = nullptr;
    if (r == 1) {
      const ir::Shape* qs = shape_of(n.input(0));
      const ir::Shape* ms = shape_of(mask);
      user_check(qs && !qs->empty() && ms) << n.describe() << ": a 1-D mask_index needs known shapes";
      const ir::Dim& batch = (*qs)[0];
      const ir::Dim& len = (*ms)[0];
      bool with_start = len == ir::Dim(2) * batch;
      user_check(len == batch || with_start)
          << n.describe() << ": a 1-D mask_index must be [batch] (ends) or [2·batch] (ends, starts); its dim "
          << len.str() << " is neither of batch " << batch.str();
      ir::Node* cast = b.node("Cast", {mask}, 1, "mask_i64");
      cast->set_attr_int("to", static_cast<int64_t>(ir::DType::Int64));
      // [1|2, b, 1, 1, 1]: the ends, then the starts.
      ir::Value* bounds = b.op("Reshape", {cast->output(0), b.constant(i64_tensor({with_start ? 2 : 1, -1, 1, 1, 1}),
                                                                       "bounds_shape")},
                               "mask_bounds");
      ir::Value *end = nullptr, *start = nullptr;
      if (with_start) {
        ir::Node* split = b.node("Split", {bounds, b.constant(i64_tensor({1, 1}), "bounds_split")}, 2, "mask_bound");
        split->set_attr_int("axis", 0);
        end = b.op("Squeeze", {split->output(0), axes0}, "mask_end");
        start = b.op("Squeeze", {split->output(1), axes0}, "mask_start");
      } else {
        end = b.op("Squeeze", {bounds, axes0}, "mask_end");
      }
      keep = b.op("Less", {keys, end}, "mask_keep");
      if (start) {
        keep = b.op("And", {keep, b.op("GreaterOrEqual", {keys, start}, "mask_after_start")}, "mask_keep");
      }
    } else {
      user_check(r == 2 || r == 3) << n.describe() << ": mask_index must be 1-D, 2-D [batch, total] or 3-D "
                                   << "[batch, seq, total], not " << r << "-D (4-D is ORT's Megatron form)";
      ir::Value* positive = b.op("Greater", {mask, b.op("CastLike", {b.constant(i64_scalar(0), "zero"), mask},
                                                        "mask_zero_i")},
                                 "mask_keep");
      ir::Value* axes = b.constant(i64_tensor(r == 2 ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1}), "axes");
      keep = b.op("Unsqueeze", {positive, axes}, "mask_keep4");
    }
    additive = b.op("Where", {keep, zero, filter}, "ort_mask");
  }
  if (causal) {
    ir::Value* rows = range(b.dims(q, 1, 2, "q_len"), "query_index");  // [s]
    ir::Value* last = b.op("Unsqueeze", {rows, b.constant(i64_tensor({1}), "axes1")}, "query_col");
    if (past) last = b.op("Add", {last, past}, "last_key");
    ir::Value* future = b.op("Greater", {keys, last}, "future_key");  // [s, t]
    ir::Value* c = b.op("Where", {future, filter, zero}, "causal_mask");
    additive = additive ? b.op("Add", {additive, c}, "ort_mask") : c;
  }
  return bias ? b.op("Add", {additive, bias}, "ort_mask_bias") : additive;
}

void reject(const ir::Node& n, size_t i, const char* what) {
  user_check(n.inputs().size() <= i || !n.input(i)) << n.describe() << ": " << what << " is not supported";
}

ir::Node* attention(Builder& b, const ir::Node& n, std::vector<ir::Value*> in, int64_t heads,
                    const std::vector<std::string>& outs) {
  ir::Node* a = b.named("Attention", in, outs);
  a->set_attr_int("q_num_heads", heads);
  a->set_attr_int("kv_num_heads", heads);
  if (float s = n.attr_float("scale", 0.0f); s != 0.0f) a->set_attr_float("scale", s);
  return a;
}

// Attention inputs by position (ORT's contrib spec).
enum Att { kInput, kWeights, kBias, kMask, kPast, kAttnBias, kPastLen };

void expand_packed_attention(ir::Node& n) {
  int64_t heads = n.attr_int("num_heads", 0);
  user_check(heads > 0) << n.describe() << ": num_heads must be positive";
  user_check(n.attr_int("do_rotary", 0) == 0) << n.describe() << ": do_rotary is not supported";
  user_check(n.attr_int("past_present_share_buffer", 0) == 0)
      << n.describe() << ": past_present_share_buffer is not supported";
  reject(n, kPastLen, "past_sequence_length");
  user_check(rank_of(n, kInput, "input") == 3) << n.describe() << ": input must be 3-D [batch, seq, hidden]";
  Builder b{&n, *n.graph()};
  std::vector<int64_t> sizes = n.attr_ints("qkv_hidden_sizes");
  if (sizes.empty()) {
    std::optional<int64_t> w = static_dim(n.input(kWeights), 1);
    user_check(w && *w % 3 == 0) << n.describe() << ": the weights' last dim must be static and 3·hidden";
    sizes = {*w / 3, *w / 3, *w / 3};
  }
  user_check(sizes.size() == 3 && sizes[0] == sizes[1] && sizes[0] % heads == 0 && sizes[2] % heads == 0)
      << n.describe() << ": qkv_hidden_sizes must be 3 sizes, q's equal to k's, each a multiple of num_heads";
  ir::Value* qkv = add_bias(b, b.op("MatMul", {n.input(kInput), n.input(kWeights)}, "qkv"), n.input(kBias), "qkv_bias");
  ir::Node* split = b.node("Split", {qkv, b.constant(i64_tensor(sizes), "qkv_split")}, 3, "qkv");
  split->set_attr_int("axis", 2);
  ir::Value *q = split->output(0), *k = split->output(1), *v = split->output(2);
  ir::Value* past = n.input(kPast);
  ir::Value *past_k = nullptr, *past_v = nullptr, *past_len = nullptr;
  if (past) {
    user_check(rank_of(n, kPast, "past") == 5) << n.describe() << ": past must be 5-D [2, batch, heads, past, head_size]";
    ir::Node* kv = b.node("Split", {past, b.constant(i64_tensor({1, 1}), "past_split")}, 2, "past_kv");
    kv->set_attr_int("axis", 0);
    ir::Value* axes0 = b.constant(i64_tensor({0}), "axes0");
    past_k = b.op("Squeeze", {kv->output(0), axes0}, "past_key");
    past_v = b.op("Squeeze", {kv->output(1), axes0}, "past_value");
    past_len = b.dims(past, 3, 4, "past_len");
  }
  ir::Value* mask = ort_mask(b, n, kMask, q, k, past_len, n.attr_int("unidirectional", 0) != 0);
  std::vector<ir::Value*> in = {q, k, v};
  if (mask || past) in.push_back(mask);
  if (past) in.insert(in.end(), {past_k, past_v});
  bool present = n.outputs().size() > 1 && n.output(1);
  user_check(!present || past) << n.describe() << ": a present output needs the past input";
  std::vector<std::string> outs = {name_of(n, 0)};
  if (present) outs.insert(outs.end(), {b.g.unique_name("present_key"), b.g.unique_name("present_value")});
  ir::Node* a = attention(b, n, in, heads, outs);
  take_over(n, 0, a->output(0));
  if (present) {
    ir::Value* axes0 = b.constant(i64_tensor({0}), "axes0");
    ir::Node* cat = b.named("Concat", {b.op("Unsqueeze", {a->output(1), axes0}, "present_k5"),
                                      b.op("Unsqueeze", {a->output(2), axes0}, "present_v5")},
                            {name_of(n, 1)});
    cat->set_attr_int("axis", 0);
    take_over(n, 1, cat->output(0));
  }
}

// MultiHeadAttention inputs by position.
enum Mha { kQuery, kKey, kValue, kMhaBias, kPadMask, kMhaAttnBias, kPastKey, kPastValue, kMhaPastLen, kCacheIndir };

void expand_multi_head_attention(ir::Node& n) {
  int64_t heads = n.attr_int("num_heads", 0);
  user_check(heads > 0) << n.describe() << ": num_heads must be positive";
  reject(n, kMhaPastLen, "past_sequence_length");
  reject(n, kCacheIndir, "cache_indirection");
  user_check(rank_of(n, kQuery, "query") == 3) << n.describe() << ": query must be 3-D [batch, seq, hidden]";
  user_check(n.input(kKey) && n.input(kValue) && rank_of(n, kKey, "key") == 3 && rank_of(n, kValue, "value") == 3)
      << n.describe() << ": key and value must be given, 3-D [batch, kv_seq, hidden] (packed and BNSH forms "
      << "are not supported)";
  Builder b{&n, *n.graph()};
  ir::Value *q = n.input(kQuery), *k = n.input(kKey), *v = n.input(kValue);
  if (ir::Value* bias = n.input(kMhaBias)) {
    std::optional<int64_t> d = static_dim(q, 2), dv = static_dim(v, 2);
    user_check(d && dv) << n.describe() << ": a bias needs static hidden sizes";
    ir::Node* s = b.node("Split", {bias, b.constant(i64_tensor({*d, *d, *dv}), "bias_split")}, 3, "qkv_bias");
    s->set_attr_int("axis", 0);
    q = b.op("Add", {q, s->output(0)}, "q_bias");
    k = b.op("Add", {k, s->output(1)}, "k_bias");
    v = b.op("Add", {v, s->output(2)}, "v_bias");
  }
  bool past = n.input(kPastKey) != nullptr;
  user_check(past == (n.input(kPastValue) != nullptr)) << n.describe() << ": past_key and past_value go together";
  ir::Value* past_len = past ? b.dims(n.input(kPastKey), 2, 3, "past_len") : nullptr;
  ir::Value* mask = ort_mask(b, n, kPadMask, q, k, past_len, n.attr_int("unidirectional", 0) != 0);
  std::vector<ir::Value*> in = {q, k, v};
  if (mask || past) in.push_back(mask);
  if (past) in.insert(in.end(), {n.input(kPastKey), n.input(kPastValue)});
  std::vector<std::string> outs = {name_of(n, 0)};
  for (size_t i = 1; i < 3 && i < n.outputs().size(); ++i) outs.push_back(name_of(n, i));
  ir::Node* a = attention(b, n, in, heads, outs);
  for (size_t i = 0; i < outs.size(); ++i) take_over(n, i, a->output(i));
}

}  // namespace

bool is_encoder_op(const ir::Node& n) {
  if (!is_ms(n)) return false;
  const std::string& op = n.op_type();
  return op == "SkipLayerNormalization" || op == "BiasGelu" || op == "FastGelu" || op == "Gelu" ||
         op == "QuickGelu" || op == "Attention" || op == "MultiHeadAttention";
}

void expand_encoder_op(ir::Node& n) {
  const std::string& op = n.op_type();
  if (op == "SkipLayerNormalization") expand_skip_layer_norm(n);
  else if (op == "BiasGelu" || op == "Gelu") expand_gelu(n, false);
  else if (op == "FastGelu") expand_gelu(n, true);
  else if (op == "QuickGelu") expand_quick_gelu(n);
  else if (op == "Attention") expand_packed_attention(n);
  else expand_multi_head_attention(n);
}

}  // namespace onnxc::passes::contrib
