// ONNX Attention (opsets 23-25) as one streaming kernel: softmax(Q·Kᵀ·scale + mask)·V computed per
// query tile with an online softmax over blocks of key tiles, so the [sq, skv] score matrix is never
// stored. Supports 4-D [b, h, s, d] and 3-D [b, s, h*d] inputs, GQA/MQA, is_causal, bool or float
// masks (broadcast, read in place), scale, softcap, past/present key and value, nonpad_kv_seqlen
// (opset 24) and left/right_window_size (opset 25). A row with every key masked gives 0 (ONNX 1.23's
// rule, for Y and for qk_matmul_output mode 3). When the node returns qk_matmul_output (modes 0-3),
// the scores are materialized instead (the output stores them anyway).
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "codegen/lower/lower_util.h"
#include "codegen/schedule/attention.h"
#include "codegen/schedule/schedule.h"
#include "ir/onnxc_attrs.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// Inputs and outputs of the op, by ONNX position.
enum In { kQ = 0, kK = 1, kV = 2, kMask = 3, kPastK = 4, kPastV = 5, kNonpad = 6 };
enum Out { kY = 0, kPresentK = 1, kPresentV = 2, kQK = 3 };

// Q, K or V seen as 4-D (d, s, h, b) whatever its ONNX layout: 3-D inputs hold heads in the last dim.
struct HeadView {
  HTensor t;
  Expr heads, seq, head_dim;
  Expr at(const Expr& d, const Expr& s, const Expr& h, const Expr& b) const {
    if (t.rank() == 4) return t.at({b, h, s, d});
    return t.at({b, s, h * head_dim + d});
  }
};

HeadView head_view(const LowerContext& ctx, int i, const char* heads_attr) {
  const HTensor& t = ctx.in[i];
  HeadView v{t, {}, {}, {}};
  if (t.rank() == 4) {
    v.heads = t.shape[1];
    v.seq = t.shape[2];
    v.head_dim = t.shape[3];
  } else {
    int64_t n = ctx.node.attr_int(heads_attr, 0);
    user_check(n > 0) << ctx.node.describe() << ": 3-D inputs need the " << heads_attr << " attribute";
    v.heads = Expr(static_cast<int32_t>(n));
    v.seq = t.shape[1];
    v.head_dim = t.shape[2] / v.heads;
  }
  return v;
}

// Whether the node reads a past that may hold rows: given, and not empty when compiling.
bool reads_past(const LowerContext& ctx, int past_in) {
  if (!has_input(ctx, past_in)) return false;
  const int64_t* len = Halide::Internal::as_const_int(ctx.in[past_in].shape[2]);
  return !len || *len != 0;
}

// Keys (or values) with the past prepended: index k < past reads past, the rest the new tensor.
// Indices are clamped on both sides because Halide evaluates both arms of a select. An empty past
// (the first step of a generation) has no row to clamp to: its bounds check fails even where the
// select skips it. So the condition starts with past_len > 0, which folds the read away where the
// stages reading it are specialized on an empty past (AttentionStages::empty_past); a past known
// empty when compiling is not read at all.
Expr with_past(const LowerContext& ctx, int past_in, const HeadView& cur, const Expr& past_len, const Expr& d,
               const Expr& k, const Expr& h, const Expr& b) {
  if (!reads_past(ctx, past_in)) return cur.at(d, k, h, b);
  Expr from_past = ctx.in[past_in].at({b, h, Halide::clamp(k, 0, past_len - 1), d});
  return Halide::select(past_len > 0 && k < past_len, from_past, cur.at(d, Halide::max(k - past_len, 0), h, b));
}

// The condition the stages reading the past are specialized on (undefined without a past to read).
// Halide substitutes a specialization's `variable == constant` into the stages, which is what folds
// with_past's select; a symbolic length is an int64 parameter cast to int32, so the test is on the
// parameter itself.
Expr empty_past(const LowerContext& ctx) {
  if (!reads_past(ctx, kPastK)) return Expr();
  return is_zero_extent(ctx.in[kPastK].shape[2]);
}

// The mask element for (b, h, q, key), broadcast from its own rank and shape (never expanded). A
// mask shorter than the keys counts as masked beyond its end, as the ONNX reference pads it.
struct MaskRead {
  Expr allowed;  // bool masks: true where the key takes part; undefined otherwise
  Expr bias;     // float masks: added to the score; undefined otherwise
};

// Whether the mask's extents broadcast to [b, h, sq, total] (its last dim may be shorter: padded).
// Checked at run time: fusion accepts extents that shape inference could not prove equal.
Expr mask_fits(const LowerContext& ctx, const std::vector<Expr>& full) {
  const HTensor& m = ctx.in[kMask];
  int r = m.rank();
  Expr ok = Halide::Internal::const_true();
  for (int i = 0; i < r; ++i) {
    const Expr& e = m.shape[i];
    const Expr& want = full[4 - r + i];
    ok = ok && (e == 1 || (i == r - 1 ? e <= want : e == want));
  }
  return ok;
}

MaskRead read_mask(const LowerContext& ctx, const Expr& b, const Expr& h, const Expr& q, const Expr& key,
                   Halide::Type at) {
  if (!has_input(ctx, kMask)) return {};
  const HTensor& m = ctx.in[kMask];
  Index out = {b, h, q, key};
  int r = m.rank();
  user_check(r >= 0 && r <= 4) << ctx.node.describe() << ": attn_mask must have rank 0 to 4, not " << r;
  Index idx(r);
  for (int i = 0; i < r; ++i) {
    const Expr& e = m.shape[i];
    idx[i] = Halide::Internal::is_const_one(e) ? Expr(0) : Halide::clamp(out[4 - r + i], 0, e - 1);
  }
  Expr inside = r == 0 ? Halide::Internal::const_true() : key < m.shape[r - 1];  // a scalar applies to every key
  Expr v = m.at(idx);
  if (m.dtype == ir::DType::Bool) return {inside && v, Expr()};
  return {Expr(), Halide::select(inside, Halide::cast(at, v), literal(at, -INFINITY))};
}

// Whether a fully masked row gives 0 (ONNX 1.23) rather than the NaN of the Softmax onnxc fused.
Expr zeroed_rows(const LowerContext& ctx) {
  return Halide::Internal::make_bool(ctx.node.attr_int(ir::kMaskedRowsNan, 0) == 0);
}

// The scores materialized ([b, h, sq, total], as the unfused graph stores them), each stage a
// reduction computed whole: on GPU targets where the streaming schedule does not apply (head sizes
// known only at run time), and wherever the node returns qk_matmul_output, which stores that matrix
// anyway. Returns that output
// ([b, h, sq, total], argument order k, q, h, b) for `qk_mode` 0 (scaled Q·Kᵀ) or 3 (softmax
// weights), 1 (after softcap) or 2 (after softcap and mask); undefined for qk_mode < 0 (not requested).
Func materialized_attention(LowerContext& ctx, AttentionStages& s, const Expr& scale,
                            const std::function<Expr(Expr)>& capped_score,
                            const std::function<Expr(Expr, const Expr&, const Expr&)>& masked_score,
                            int64_t qk_mode) {
  HeadView Q = head_view(ctx, kQ, "q_num_heads"), K = head_view(ctx, kK, "kv_num_heads"),
           V = head_view(ctx, kV, "kv_num_heads");
  Halide::Type ot = halide_type(ctx.in[kQ].dtype), at = accumulator_type(ot);
  Expr past_len = has_input(ctx, kPastK) ? ctx.in[kPastK].shape[2] : Expr(0), total = past_len + K.seq;
  Var d("d"), q("q"), h("h"), b("b"), k("k");
  Expr kvh = h / (Q.heads / K.heads), ninf = literal(at, -INFINITY), zero = literal(at, 0);
  Halide::RDom rd(0, Q.head_dim, "rd"), rt(0, total, "rt");
  Func dot("attn_dot"), mx("attn_max"), ex("attn_exp"), sum("attn_sum"), acc("attn_acc");
  dot(k, q, h, b) = zero;
  dot(k, q, h, b) += Halide::cast(at, Q.at(rd, q, h, b)) * Halide::cast(at, with_past(ctx, kPastK, K, past_len, rd, k, kvh, b));
  Expr sc = masked_score(dot(k, q, h, b), q, k);
  Func scf("attn_scores");
  scf(k, q, h, b) = sc;
  Func weights("attn_qk_output");
  if (qk_mode == 0) weights(k, q, h, b) = Halide::cast(ot, dot(k, q, h, b) * scale);
  if (qk_mode == 1) weights(k, q, h, b) = Halide::cast(ot, capped_score(dot(k, q, h, b)));
  if (qk_mode == 2) weights(k, q, h, b) = Halide::cast(ot, scf(k, q, h, b));
  mx(q, h, b) = ninf;
  mx(q, h, b) = Halide::max(mx(q, h, b), scf(rt, q, h, b));
  ex(k, q, h, b) = exp_ieee(scf(k, q, h, b) - Halide::select(mx(q, h, b) == ninf, zero, mx(q, h, b)));
  sum(q, h, b) = zero;
  sum(q, h, b) += ex(rt, q, h, b);
  acc(d, q, h, b) = zero;
  acc(d, q, h, b) += ex(rt, q, h, b) * Halide::cast(at, with_past(ctx, kPastV, V, past_len, d, rt, kvh, b));
  // A fully masked row sums to 0: its weights and output are 0 (ONNX 1.23), not 0/0, unless
  // the node came from onnxc's fusion of a Softmax, which gives NaN there (ir::kMaskedRowsNan).
  Expr empty = zeroed_rows(ctx) && sum(q, h, b) == zero;
  s.y4(d, q, h, b) = Halide::cast(ot, Halide::select(empty, zero, acc(d, q, h, b) / sum(q, h, b)));
  if (qk_mode == 3) weights(k, q, h, b) = Halide::cast(ot, Halide::select(empty, zero, ex(k, q, h, b) / sum(q, h, b)));
  // The dot products and the sums are contractions: their order is ours to pick (FMAs allowed).
  ctx.reassociable.insert(ctx.reassociable.end(), {dot, sum, acc});
  std::vector<Func> stages = {dot, mx, ex, sum, acc};
  // Emission hands this the first kernel output of the node; any other output (Y and the weights
  // both requested) gets the default output schedule. A 4-D Y is always a kernel output; the 3-D
  // form reads the 4-D one, computed whole first.
  bool y4_is_output = ctx.in[kQ].rank() == 4;
  ctx.schedule = [y4 = s.y4, stages, y4_is_output, no_past = empty_past(ctx), dot, acc](Func output,
                                                                                       const Halide::Target& t) {
    schedule_materialized_attention(output, stages, {dot, acc}, no_past, y4, y4_is_output, t);
  };
  return weights;
}

// The Funcs of one copy of the streaming stages, their names ending in `tag`, for query tiles of `tq`
// rows and static head sizes dv, dk (0: known at run time), sized for target `t`.
AttentionStages named_stages(int tq, const std::string& tag, int64_t dv, int64_t dk, const Halide::Target& t) {
  AttentionStages s;
  auto named = [&](const char* name) { return Func(name + tag); };
  s.q_tile = named("attn_q_tile");
  s.keys = named("attn_keys");
  s.values = named("attn_values");
  s.scores_acc = named("attn_scores_acc");
  s.scores = named("attn_scores");
  s.tile_max = named("attn_tile_max");
  s.probs = named("attn_probs");
  s.tile_sum = named("attn_tile_sum");
  s.tile_acc = named("attn_tile_acc");
  s.tiles = named("attn_tiles");
  s.block_max = named("attn_block_max");
  s.weight = named("attn_tile_weight");
  s.block_sum = named("attn_block_sum");
  s.block_acc = named("attn_block_acc");
  s.state = named("attn_state");
  s.y4 = named("attention");
  s.tq = tq;
  s.head_dim_v = static_cast<int>(dv);
  s.head_dim_k = static_cast<int>(dk);
  // A block's tiles take 12 · tq · dv · block bytes: about 96 KiB, under glibc's mmap threshold
  // (128 KiB), so each block's scratch comes from the heap without page faults (larger blocks were
  // 2x slower from mmap/munmap per block; smaller ones rescale more often).
  s.block = std::max(1, 256 / std::max(64, s.head_dim_v));
  size_attention_stages(s, t);
  return s;
}

std::vector<HTensor> attention(LowerContext& ctx) {
  const ir::Node& n = ctx.node;
  // qk_matmul_output, when something reads it: the materialized kernel computes it on the way.
  bool want_qk = n.num_outputs() > kQK && n.output(kQK) &&
                 (!n.output(kQK)->uses().empty() || n.output(kQK)->is_graph_output());
  int64_t qk_mode = want_qk ? n.attr_int("qk_matmul_output_mode", 0) : -1;
  // Modes as the opset 24 text defines them: 0 the scaled Q·Kᵀ, 1 after softcap, 2 after softcap
  // and the mask (causal, window and padding included), 3 the softmax weights.
  user_check(qk_mode >= -1 && qk_mode <= 3)
      << n.describe() << ": qk_matmul_output_mode " << qk_mode << " is not one of 0, 1, 2, 3";
  // K and V may be 4-D under a 3-D Q: the KV-cache form (passes/use_kv_cache) reads the cache.
  user_check((ctx.in[kK].rank() == ctx.in[kQ].rank() || ctx.in[kK].rank() == 4) &&
             ctx.in[kK].rank() == ctx.in[kV].rank() && (ctx.in[kQ].rank() == 3 || ctx.in[kQ].rank() == 4))
      << n.describe() << ": Q, K and V must all be 3-D or all 4-D";
  user_check(has_input(ctx, kPastK) == has_input(ctx, kPastV))
      << n.describe() << ": past_key and past_value must be given together";
  bool nonpad = has_input(ctx, kNonpad);
  user_check(!nonpad || !has_input(ctx, kPastK))
      << n.describe() << ": nonpad_kv_seqlen cannot be combined with past_key/past_value (opset 24)";
  int64_t left_window = n.attr_int("left_window_size", -1), right_window = n.attr_int("right_window_size", -1);
  user_check(left_window >= -1 && right_window >= -1)
      << n.describe() << ": left_window_size and right_window_size must be -1 or >= 0";

  HeadView Q = head_view(ctx, kQ, "q_num_heads"), K = head_view(ctx, kK, "kv_num_heads"),
           V = head_view(ctx, kV, "kv_num_heads");
  Halide::Type ot = halide_type(ctx.in[kQ].dtype), at = accumulator_type(ot);
  Expr past_len = has_input(ctx, kPastK) ? ctx.in[kPastK].shape[2] : Expr(0);
  Expr total = past_len + K.seq;
  Expr n_rep = Q.heads / K.heads;  // GQA: query head h reads key/value head h / n_rep

  const int64_t* sq_static = Halide::Internal::as_const_int(Q.seq);
  const int64_t* dv_static = Halide::Internal::as_const_int(V.head_dim);
  const int64_t* dk_static = Halide::Internal::as_const_int(Q.head_dim);
  // A decoding step (one query row, known when compiling) gets tiles of one row: a 32-row tile would
  // compute 31 clamped copies of it.
  AttentionStages s = named_stages(sq_static && *sq_static == 1 ? 1 : 32, "", dv_static ? *dv_static : 0,
                                   dk_static ? *dk_static : 0, ctx.target);

  Var d("d"), q("q"), h("h"), b("b"), qi("qi"), qo("qo"), j("j"), kt("kt");
  Expr kvh = h / n_rep;
  Expr ninf = literal(at, -INFINITY), zero = literal(at, 0);

  float scale_attr = n.attr_float("scale", 0.0f);
  Expr scale = n.has_attr("scale") ? literal(at, scale_attr)
                                   : literal(at, 1.0) / Halide::sqrt(Halide::cast(at, Q.head_dim));
  // Inputs that disagree at run time (fusion may accept extents inference could not prove equal)
  // stop the kernel with an error instead of reading out of place.
  Expr fits = K.heads > 0 && Q.heads % K.heads == 0 && V.heads == K.heads && V.seq == K.seq &&
              ctx.in[kK].shape[0] == ctx.in[kQ].shape[0] && ctx.in[kV].shape[0] == ctx.in[kQ].shape[0];
  if (has_input(ctx, kMask) && ctx.in[kMask].rank() <= 4)
    fits = fits && mask_fits(ctx, {ctx.in[kQ].shape[0], Q.heads, Q.seq, total});
  ctx.requirements.emplace_back(fits, "Attention: Q, K, V or attn_mask extents do not fit together");

  // The score as the ONNX function computes it from a dot product: scaled, soft-capped, masked.
  bool causal = n.attr_int("is_causal", 0) != 0;
  float softcap = n.attr_float("softcap", 0.0f);
  auto capped_score = [&](Expr dot) {
    Expr score = dot * scale;
    if (softcap > 0) score = literal(at, softcap) * tanh_ieee(score / literal(at, softcap));
    return score;
  };
  // Where query row i sits among the keys: after the past (internal cache), or, with
  // nonpad_kv_seqlen and no past (external cache), at nonpad_kv_seqlen[b] - sq; causal and window
  // masks are aligned to it (bottom-right), as the ONNX reference aligns them.
  // With the past moved into K and V (ir::kCausalFromEnd), the queries are the last rows of the keys.
  Expr shift = n.attr_int(ir::kCausalFromEnd, 0) != 0 ? total - Q.seq : past_len;
  Expr offset = nonpad ? Halide::cast<int32_t>(ctx.in[kNonpad].at({b})) - Q.seq : shift;
  auto masked_score = [&](Expr dot, const Expr& qrow, const Expr& k) {
    Expr score = capped_score(dot);
    MaskRead mask = read_mask(ctx, b, h, Halide::min(qrow, Q.seq - 1), Halide::min(k, total - 1), at);
    if (mask.bias.defined()) score = score + mask.bias;
    Expr allowed = k < total;
    if (mask.allowed.defined()) allowed = allowed && mask.allowed;
    if (causal) allowed = allowed && k <= qrow + offset;
    if (left_window >= 0) allowed = allowed && qrow + offset - k <= Expr(static_cast<int32_t>(left_window));
    if (right_window >= 0) allowed = allowed && k - (qrow + offset) <= Expr(static_cast<int32_t>(right_window));
    // nonpad_kv_seqlen: keys at or past the batch entry's valid length are padding.
    if (nonpad) allowed = allowed && k < Halide::cast<int32_t>(ctx.in[kNonpad].at({b}));
    return Halide::select(allowed, score, ninf);
  };

  // The streaming stages of `s` for its query tile of s.tq rows.
  auto stream = [&](AttentionStages& s) {
    const int tq = s.tq, tk = s.tk;
    s.empty_past = empty_past(ctx);
    Expr row = qo * tq + qi, key = kt * tk + j;
    s.q_tile(qi, d, qo, h, b) = Halide::cast(at, Q.at(d, Halide::min(row, Q.seq - 1), h, b));
    s.rd = Halide::RDom(0, Q.head_dim, "rd");
    Halide::RDom rd = s.rd;
    Expr kc = Halide::min(key, total - 1);
    s.keys(d, j, kt, h, b) = Halide::cast(at, with_past(ctx, kPastK, K, past_len, d, kc, kvh, b));
    s.values(d, j, kt, h, b) = Halide::cast(at, with_past(ctx, kPastV, V, past_len, d, kc, kvh, b));
    s.scores_acc(qi, j, kt, qo, h, b) = zero;
    s.scores_acc(qi, j, kt, qo, h, b) += s.q_tile(qi, rd, qo, h, b) * s.keys(rd, j, kt, h, b);
    s.scores(qi, j, kt, qo, h, b) = masked_score(s.scores_acc(qi, j, kt, qo, h, b), row, key);

    // Per key tile: max, exp(score - max) (0 for a fully masked tile rather than NaN) and the sums.
    s.rj = Halide::RDom(0, tk, "rj");
    Halide::RDom rj = s.rj;
    s.tile_max(qi, kt, qo, h, b) = ninf;
    s.tile_max(qi, kt, qo, h, b) = Halide::max(s.tile_max(qi, kt, qo, h, b), s.scores(qi, rj, kt, qo, h, b));
    Expr tmax = s.tile_max(qi, kt, qo, h, b);
    Expr safe_max = Halide::select(tmax == ninf, zero, tmax);
    s.probs(qi, j, kt, qo, h, b) = exp_ieee(s.scores(qi, j, kt, qo, h, b) - safe_max);
    s.tile_sum(qi, kt, qo, h, b) = zero;
    s.tile_sum(qi, kt, qo, h, b) += s.probs(qi, rj, kt, qo, h, b);
    Expr vkey = kt * tk + rj;
    Expr vval = s.values(d, rj, kt, h, b);
    s.tile_acc(d, qi, kt, qo, h, b) = zero;
    // Keys past the end read a clamped row: leave them out rather than add 0 * V (NaN if V is inf).
    s.tile_acc(d, qi, kt, qo, h, b) += Halide::select(vkey < total, s.probs(qi, rj, kt, qo, h, b) * vval, zero);

    // Online softmax by blocks of keys (s.block key tiles each). Within a block each tile leaves
    // its (acc, max, sum), and the block weighs each tile once per row, w = exp(tile max - block
    // max); the running state then merges one block at a time, rescaling by exp(old max - new
    // max). So the per-head-dim-element rescale happens once per block, not once per tile, and the
    // scratch stays O(tq · dv · block) per task. Blocks and tiles entirely above the causal
    // diagonal are skipped; a block's tiles past the keys are left out.
    const int nb = s.block;
    Expr n_tiles = (total + tk - 1) / tk;
    s.tiles(d, qi, kt, qo, h, b) = Halide::Tuple(s.tile_acc(d, qi, kt, qo, h, b), s.tile_max(qi, kt, qo, h, b),
                                                 s.tile_sum(qi, kt, qo, h, b));
    Var kb("kb");
    s.rt = Halide::RDom(0, nb, "rt");
    s.rt.where(kb * nb + s.rt < n_tiles);
    // Tiles above the causal diagonal are skipped only where the diagonal is the same for every
    // batch entry (no nonpad_kv_seqlen).
    bool skip = causal && !nonpad;
    if (skip) s.rt.where((kb * nb + s.rt) * tk <= qo * tq + (tq - 1) + shift);
    Halide::RDom rt = s.rt;
    Expr tile = kb * nb + rt;
    s.block_max(qi, kb, qo, h, b) = ninf;
    s.block_max(qi, kb, qo, h, b) = Halide::max(s.block_max(qi, kb, qo, h, b), s.tiles(0, qi, tile, qo, h, b)[1]);
    Expr bmax = s.block_max(qi, kt / nb, qo, h, b);
    s.weight(qi, kt, qo, h, b) = exp_ieee(s.tiles(0, qi, kt, qo, h, b)[1] - Halide::select(bmax == ninf, zero, bmax));
    s.block_sum(qi, kb, qo, h, b) = zero;
    s.block_sum(qi, kb, qo, h, b) += s.tiles(0, qi, tile, qo, h, b)[2] * s.weight(qi, tile, qo, h, b);
    s.block_acc(d, qi, kb, qo, h, b) = zero;
    s.block_acc(d, qi, kb, qo, h, b) += s.tiles(d, qi, tile, qo, h, b)[0] * s.weight(qi, tile, qo, h, b);

    s.rk = Halide::RDom(0, (n_tiles + nb - 1) / nb, "rk");
    if (skip) s.rk.where(s.rk * (nb * tk) <= qo * tq + (tq - 1) + shift);
    Halide::RDom rk = s.rk;
    s.state(d, qi, qo, h, b) = Halide::Tuple(ninf, zero, zero);
    Expr m = s.state(d, qi, qo, h, b)[0], l = s.state(d, qi, qo, h, b)[1], acc = s.state(d, qi, qo, h, b)[2];
    Expr mt = s.block_max(qi, rk, qo, h, b);
    Expr mn = Halide::max(m, mt);
    // The state is a Tuple, so its arithmetic runs with LLVM's fast-math flags (no infs assumed):
    // -inf is tested as bits, and a factor whose max is -inf (nothing seen yet, a block with every
    // key masked) is 0 by a select rather than exp(-inf - mn), which under those flags may be NaN.
    // Where a factor is kept its max is finite, and so is mn (at least that max).
    Expr a = Halide::select(is_minus_infinity(m), zero, exp_ieee(m - mn));
    Expr c = Halide::select(is_minus_infinity(mt), zero, exp_ieee(mt - mn));
    s.state(d, qi, qo, h, b) = Halide::Tuple(mn, l * a + s.block_sum(qi, rk, qo, h, b) * c,
                                             acc * a + s.block_acc(d, qi, rk, qo, h, b) * c);
    // A row with every key masked has sum 0: ONNX 1.23 defines its output as 0 (not 0/0); a
    // fused Softmax keeps its NaN (ir::kMaskedRowsNan).
    Expr l_row = s.state(d, q % tq, q / tq, h, b)[1];
    Expr empty = zeroed_rows(ctx) && l_row == zero;
    s.y4(d, q, h, b) = Halide::cast(ot, Halide::select(empty, zero, s.state(d, q % tq, q / tq, h, b)[2] / l_row));
    // Q·K, the tile sums, probs·V and the weighted sums within a block are contractions (FMAs
    // allowed); the score, mask and softmax arithmetic keep IEEE semantics (strict_float, see
    // codegen/emit/strict_float.h).
    // The K and V rows do no arithmetic (a choice of rows and a conversion).
    ctx.reassociable.insert(ctx.reassociable.end(),
                            {s.scores_acc, s.tile_sum, s.tile_acc, s.block_sum, s.block_acc, s.keys, s.values});
  };

  Func qk_out;
  if (!streams_attention(ctx.target, s) || want_qk) {
    qk_out = materialized_attention(ctx, s, scale, capped_score, masked_score, qk_mode);
  } else {
    AttentionKernel k;
    k.tiles = s;
    if (!sq_static) {
      // The query length is known only at run time (exporters keep it symbolic for prefill and
      // decoding alike): a second copy of the stages with one-row tiles, which the kernel runs when
      // a call has at most one query row. Both copies compute the same values; a decoding step then
      // does one row's work instead of a 32-row tile's.
      k.tiles.y4 = Func("attention_tiles");
      k.row = named_stages(1, "_row", s.head_dim_v, s.head_dim_k, ctx.target);
      stream(*k.row);
      // The kernel is specialized on one_row, and Halide folds y4's select in each branch only where
      // it can tell that branch's condition from the select's (SimplifySpecializations): so the
      // condition is simplified once and used as is, and y4's value keeps no let (Halide's CSE binds
      // a repeated part of a length expression to a let it cannot see through: bert_op13's query
      // length is max(max(min(64, s), s), min(64, s))). Unfolded, each branch computed both copies:
      // twice the work on CPUs, and on CUDA the one-row copy's one-row shared tiles inside a 16-row
      // block, a failed bounds check (an in-kernel `trap;`).
      k.one_row = Halide::Internal::simplify(Q.seq <= 1);
    }
    stream(k.tiles);
    k.y4 = s.y4;
    if (k.row) {
      k.y4(d, q, h, b) = Halide::select(k.one_row, k.row->y4(d, q, h, b), k.tiles.y4(d, q, h, b));
      for (Expr& v : k.y4.function().definition().values()) v = Halide::Internal::substitute_in_all_lets(v);
    }
    ctx.schedule = [k](Func output, const Halide::Target& t) { schedule_attention(output, k, t); };
  }

  std::vector<HTensor> outs;
  HTensor y;
  y.dtype = ctx.in[kQ].dtype;
  y.shape = out_shape(ctx, kY);
  if (ctx.in[kQ].rank() == 4) {
    y.func = s.y4;
  } else {
    Var c3("c"), q3("q"), b3("b");
    y.func = Func("attention_3d");
    y.func(c3, q3, b3) = s.y4(c3 % V.head_dim, q3, c3 / V.head_dim, b3);
  }
  outs.push_back(y);

  // present_key / present_value: past and new keys (values) concatenated, [b, kv_heads, total, d].
  for (int o : {kPresentK, kPresentV}) {
    if (!n.output(o)) break;
    const HeadView& src = o == kPresentK ? K : V;
    int past_in = o == kPresentK ? kPastK : kPastV;
    outs.push_back(define(o == kPresentK ? "present_key" : "present_value", out_shape(ctx, o), out_dtype(ctx, o),
                          [&](const Index& i) { return with_past(ctx, past_in, src, past_len, i[3], i[2], i[1], i[0]); }));
  }
  if (qk_out.defined()) {
    outs.resize(kQK);  // present key/value not requested: left undefined
    HTensor w;
    w.dtype = ctx.in[kQ].dtype;
    w.shape = out_shape(ctx, kQK);
    w.func = qk_out;
    outs.push_back(w);
  }
  return outs;
}

Registrar reg_Attention("", "Attention", KernelClass::Attention, attention);

}  // namespace

}  // namespace onnxc::codegen
