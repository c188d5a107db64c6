// fuse_attention: scaled dot-product attention written in plain ops -> Attention (opset 23).
//
//   q ─[·s | /s]─────────────────────────┐
//   k ─[repeat_kv]─[·s]─Transpose(…,d↔s)─┴─ MatMul ─[·s | /s]─[+ mask]…─[Where(c, ·, -inf|min)]─┐
//       (or Kᵀ given pre-transposed)                                                            │
//       Softmax(axis=-1) | Exp(x - ReduceMax(x)) / ReduceSum(·)   [Casts around it] ◀────────────┘
//   v ─[repeat_kv]──────────────────────────────────────────────────── MatMul(·, v) ─▶ y
//
// Canonicalize has already turned Einsum into MatMul, Softmax into its opset-13 form and x/2^k into
// x·2^-k, so one core pattern covers the exporters. Scales anywhere (Q, K, scores; Div or Mul; T5's
// none) multiply into `scale`. Masks: an additive float mask (HF (1-m)·finfo.min, ·-10000, T5's
// position bias), Where(cond, scores, -inf) -> bool attn_mask, Where with a finfo.min-sized fill ->
// the same values as a float mask, several masks -> their sum (GPT-2: Where, then padding); a causal
// mask (constant, or Trilu of a -inf fill) over square self-attention becomes is_causal=1 and is
// never materialized. Softmax weights also read outside the block (Luong's `align`) become the
// node's qk_matmul_output (mode 3). 3-D [b·h, s, d] bmm becomes 4-D
// Attention on [b·h, 1, s, d] (Unsqueeze/Squeeze around it); 5-D and higher (MaxViT's [b, partitions,
// h, s, d]) becomes 4-D Attention on the leading dims merged into one (Reshape views around it);
// HF repeat_kv (GQA/MQA) is dropped, as Attention repeats the key/value heads itself.
#include "passes/fuse_attention.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "passes/attention_masks.h"
#include "ir/onnxc_attrs.h"
#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

using namespace pat;
using namespace attn;
using ir::Dim;

Pattern scaled(const Pattern& x, const std::string& name) {
  Pattern c = any().constant().scalar();
  return alt({op("Mul", {x, c.capture(name + "_mul")}), op("Div", {x, c.capture(name + "_div")}), x});
}

// HF repeat_kv: x[:, :, None].expand(b, kvh, rep, s, d).reshape(b, kvh*rep, s, d). Matched in the
// check rather than in the pattern, so a near miss reports the real reason, not this detour.
Pattern repeat_kv() {
  return op("Reshape", {op("Expand", {op("Unsqueeze", {any().capture("kv"), any().capture("axes")}), any()}).capture("expand"),
                        any()});
}

Pattern attention_pattern() {
  Pattern q = scaled(any().capture("q"), "sq");
  // Kᵀ: a Transpose of K (scaled before or after it), or a value already laid out [..., d, s].
  Pattern k_src = any().capture("k");
  Pattern kt = alt({op("Transpose", {scaled(k_src, "sk")}).capture("kt_transpose"),
                    scaled(op("Transpose", {k_src}).capture("kt_transpose"), "sk"), scaled(any().capture("kt"), "sk")});
  Pattern qk = op("MatMul", {q, kt}).capture("qk");
  // A scale computed at run time (NTM's key strength, a learned temperature) that is one value per
  // query row folds into Q; constant scales are the `scale` attribute.
  Pattern row_scaled = alt({op("Mul", {qk, any().capture("ss_row_mul")}), op("Div", {qk, any().capture("ss_row_div")})});
  Pattern scores_scaled = alt({scaled(qk, "ss"), row_scaled});
  // Logit softcap (Gemma 2): c·tanh(s / c), the division by c or by a power of two as its exact
  // product with 1/c; Attention's `softcap` computes the same after the scale, before the masks.
  Pattern cap = any().constant().scalar();
  Pattern divided = alt({op("Div", {scores_scaled, cap.capture("cap_div")}), op("Mul", {scores_scaled, cap.capture("cap_inv")})});
  Pattern scores = alt({op("Mul", {op("Tanh", {divided}), cap.capture("cap")}), scores_scaled});
  // Masks: Where (keep or drop form) at most once before and once after up to two additive masks.
  auto where = [](const Pattern& x, const std::string& tag) {
    Pattern fill = any().constant().scalar().capture("fill" + tag);
    return alt({op("Where", {any().capture("keep" + tag), x, fill}), op("Where", {any().capture("drop" + tag), fill, x}), x});
  };
  Pattern masked0 = where(scores, "_in");
  Pattern masked1 = alt({op("Add", {masked0, any().capture("mask1")}), masked0});
  Pattern masked2 = alt({op("Add", {masked1, any().capture("mask2")}), masked1});
  Pattern masked = where(masked2, "");
  Pattern x = optional_op("Cast", optional_op("Cast", masked));
  Pattern softmax_op = op("Softmax", {x}).capture("softmax");
  Pattern e = op("Exp", {op("Sub", {x, op("ReduceMax", {x, any().capture("max_axes")}).capture("max")})});
  Pattern softmax_decomposed = op("Div", {e, op("ReduceSum", {e, any().capture("sum_axes")}).capture("sum")});
  Pattern probs = optional_op("Cast", optional_op("Cast", alt({softmax_op, softmax_decomposed}))).capture("probs");
  // torch's scaled_dot_product_attention as both torch exporters write it: the weights of a row
  // whose softmax is NaN (every key masked with -inf) are zeroed, Where(IsNaN(w), 0, w).
  Pattern guarded =
      op("Where", {op("IsNaN", {probs}), any().constant().scalar().capture("guard_fill"), probs}).commutative(false);
  return op("MatMul", {alt({guarded.capture("guarded"), probs}), any().capture("v")});
}

// How the rewrite builds the Attention node; filled by analyse() or a reason given why not.
struct Plan {
  ir::Value *q = nullptr, *k = nullptr, *v = nullptr;
  // Past keys/values the graph concatenates in front of K and V, taken in as Attention's past_key
  // and past_value when a causal mask is offset by their length (GPT-2 with a cache).
  // Their Concats' outputs (present key/value) then become Attention's outputs 1 and 2.
  ir::Value *past_k = nullptr, *past_v = nullptr;
  ir::Value *present_k = nullptr, *present_v = nullptr;
  std::vector<int64_t> k_perm;  // Transpose K's source by this to get [..., s, d]; empty: use as is
  double scale = 1;
  // A run-time scale of the scores, one value per query row: Q is multiplied (or divided) by it.
  ir::Value* q_factor = nullptr;
  bool q_factor_divides = false;
  bool causal = false, three_d = false;
  double softcap = 0;  // > 0: the scores are soft-capped, softcap·tanh(scores / softcap)
  // The weights are NaN-guarded (Where(IsNaN(w), 0, w)): a fully masked row gives 0, which is
  // the Attention op's own (ONNX 1.23) behaviour, so the node does not keep the Softmax's NaN.
  bool nan_guarded = false;
  // Scores of rank 5 or more (MaxViT's [batch, partitions, heads, n, n]): the leading `lead` + 1 dims
  // are merged into Attention's batch dim (Reshape views around the node).
  size_t lead = 0;
  // The softmax weights are read outside the block too (Luong's `align`, output_attentions): the
  // Attention node returns them as qk_matmul_output (mode 3) and they replace the value.
  bool weights_out = false;
  // The masks left after causal ones became is_causal, in the order the graph applies them:
  // additive float masks, or Where(cond, ·, fill) terms (cond negated for the masked_fill form).
  struct Term {
    ir::Value* value;
    bool where = false, negate = false;
    double fill = 0;
    // With lead > 0, how the mask reaches 4-D: 0 as it is (rank <= 3), 1 its leading dims (all 1)
    // dropped, 2 its leading dims (the scores' own) merged like the scores'.
    int to_4d = 0;
  };
  std::vector<Term> masks;
  // A mask that is causal but stays materialized, and why it did not become is_causal (a note
  // in the fusion report, so a user sees the cost).
  ir::Value* causal_kept = nullptr;
  std::string causal_kept_why;
};

// K or V concatenated from a past and a new part on the sequence axis: the Concat, else null.
const ir::Node* past_concat(const ir::Value* x) {
  const ir::Node* n = x->producer();
  const ir::Shape* s = shape_of(x);
  if (!n || n->op_type() != "Concat" || !n->domain().empty() || n->num_inputs() != 2 || !s || s->size() != 4)
    return nullptr;
  int64_t axis = n->attr_int("axis", 0);
  return axis == 2 || axis == -2 ? n : nullptr;
}

// Whether any of `roots` is computed from `n`'s outputs (walking producers, each node once).
bool computed_from(const std::vector<ir::Value*>& roots, const ir::Node* n) {
  std::vector<const ir::Value*> work(roots.begin(), roots.end());
  std::set<const ir::Node*> seen;
  while (!work.empty()) {
    const ir::Value* v = work.back();
    work.pop_back();
    const ir::Node* p = v ? v->producer() : nullptr;
    if (!p || !seen.insert(p).second) continue;
    if (p == n) return true;
    work.insert(work.end(), p->inputs().begin(), p->inputs().end());
  }
  return false;
}

// A causal mask found among the masks: is_causal=1 when ONNX's alignment of it matches. Attention
// offsets causal rows by past_key's length (0 without one), so a mask offset by r0 needs r0 == 0,
// or K and V concatenated from a past of length r0, which then becomes past_key and past_value.
bool take_causal(ir::Value* mask, const ir::Shape& scores, MaskForm form, const FusionContext& c,
                 const std::vector<ir::Value*>& other_masks, Plan& p) {
  auto kept = [&](std::string why) {
    if (!p.causal_kept) p.causal_kept = mask, p.causal_kept_why = std::move(why);
    return false;
  };
  bool square = is_causal_mask(mask, scores, form);
  std::optional<Dim> offset = square ? std::optional<Dim>(Dim(0)) : sliced_causal_offset(mask, scores, form, c);
  if (!offset) {
    if (!looks_causal(mask, form)) return false;
    return kept("the causal mask " + ir::shape_str(*shape_of(mask)) + " does not line up with the scores " +
                ir::shape_str(scores) + " (is_causal needs query row i to see keys 0..i)");
  }
  if (p.causal) return kept("a second causal mask (is_causal already stands for the first)");
  if (offset->is_const() && offset->value() == 0) return p.causal = true;
  std::string offset_why = "the causal mask is shifted by " + offset->str() + " row(s) and K/V ";
  const ir::Node* ck = p.k_perm.empty() ? past_concat(p.k) : nullptr;
  const ir::Node* cv = past_concat(p.v);
  if (!ck || !cv) return kept(offset_why + "are not a past concatenated with new keys (is_causal shifts by the past only)");
  const ir::Shape *sk = shape_of(ck->input(0)), *sv = shape_of(cv->input(0));
  if (!sk || !sv || sk->size() != 4 || sv->size() != 4 || !dims_equal((*sk)[2], *offset) || !dims_equal((*sv)[2], *offset))
    return kept(offset_why + "are concatenated from a past whose length is not that shift");
  // The present key/value outputs replace the Concats' outputs, so nothing the node reads may be
  // computed from them (a mask shaped after the concatenated keys, say).
  std::vector<ir::Value*> reads = {p.q, ck->input(0), ck->input(1), cv->input(0), cv->input(1)};
  reads.insert(reads.end(), other_masks.begin(), other_masks.end());
  if (computed_from(reads, ck) || computed_from(reads, cv))
    return kept(offset_why + "are concatenated from a past, but the block reads the concatenated keys elsewhere");
  p.past_k = ck->input(0);
  p.past_v = cv->input(0);
  p.present_k = ck->output();
  p.present_v = cv->output();
  p.k = ck->input(1);
  p.v = cv->input(1);
  return p.causal = true;
}

std::string scale_of(const Match& m, const std::string& name, double& scale) {
  if (m.has(name + "_mul")) scale *= *scalar(m[name + "_mul"]);
  if (m.has(name + "_div")) {
    double d = *scalar(m[name + "_div"]);
    if (d == 0) return "the scale divides by zero";
    scale /= d;
  }
  return "";
}

std::string axes_are_last(const FusionContext& c, const ir::Value* axes, const ir::Node* reduce, size_t rank) {
  auto a = c.ints(axes);
  if (reduce->attr_int("keepdims", 1) != 1) return "the decomposed softmax reduces without keepdims";
  if (!a || a->size() != 1 || ((*a)[0] != -1 && (*a)[0] != static_cast<int64_t>(rank) - 1))
    return "the decomposed softmax does not reduce over the key axis";
  return "";
}

// GQA's repeat_kv, checked on shapes: [b, kvh, s, d] -> unsqueeze 2 -> expand -> [b, kvh*rep, s, d].
// Returns the value with the repeat removed (Attention repeats key/value heads itself).
ir::Value* through_repeat_kv(ir::Value* x, const FusionContext& c) {
  MatchResult r = match(repeat_kv(), x);
  if (!r) return x;
  ir::Value* kv = r->value("kv");
  auto axes = c.ints(r->value("axes"));
  const ir::Shape *src = shape_of(kv), *ex = shape_of(r->value("expand"));
  bool ok = axes && axes->size() == 1 && (*axes)[0] == 2 && src && ex && src->size() == 4 && ex->size() == 5 &&
            dims_equal((*src)[0], (*ex)[0]) && dims_equal((*src)[1], (*ex)[1]) && dims_equal((*src)[2], (*ex)[3]) &&
            dims_equal((*src)[3], (*ex)[4]);
  return ok ? kv : x;
}

// How a mask broadcast to scores of rank 4 + lead reaches the merged 4-D scores (Plan::Term::to_4d):
// the dims it lines up with the merged ones must be all 1, or all of them the scores' own.
std::string mask_to_4d(const ir::Shape& mask, const ir::Shape& scores, size_t lead, int& to_4d) {
  to_4d = 0;
  if (lead == 0 || mask.size() <= 3) return "";
  size_t merged = mask.size() - 3, off = scores.size() - mask.size();
  bool ones = true, own = mask.size() == scores.size();
  for (size_t i = 0; i < merged; ++i) {
    ones = ones && mask[i].is_const() && mask[i].value() == 1;
    own = own && dims_match(mask[i], scores[off + i]);
  }
  if (!ones && !own)
    return "the mask varies over some of the batch dims the scores merge into one (mask " + ir::shape_str(mask) +
           ", scores " + ir::shape_str(scores) + ")";
  to_4d = ones ? 1 : 2;
  return "";
}

std::string analyse(const Match& m, const FusionContext& c, Plan& p) {
  const ir::Shape *qs = shape_of(m["q"]), *ss = shape_of(m["qk"]);
  if (!qs || !ss) return "shapes of Q or the scores are unknown";
  size_t r = ss->size();
  if (r < 3) return "scores have fewer than 3 dims";
  p.three_d = r == 3;
  p.lead = r > 4 ? r - 4 : 0;
  if (!ir::dtype_is_float(m["q"]->dtype()) || m.root()->dtype() != m["q"]->dtype())
    return "Q and the output are not the same floating-point type";
  // The softmax runs over the key axis.
  if (m.has("softmax")) {
    int64_t axis = m.node("softmax")->attr_int("axis", -1);
    if (axis != -1 && axis != static_cast<int64_t>(r) - 1) return "Softmax axis is not the key axis";
  } else {
    std::string why = axes_are_last(c, m["max_axes"], m.node("max"), r);
    if (why.empty()) why = axes_are_last(c, m["sum_axes"], m.node("sum"), r);
    if (!why.empty()) return why;
  }
  std::string why;
  p.q = m["q"];
  ir::Value* probs = m["probs"];
  p.nan_guarded = m.has("guarded");
  if (p.nan_guarded) {
    std::optional<double> fill = scalar(m["guard_fill"]);
    if (!fill || *fill != 0 || std::signbit(*fill)) return "the NaN guard fills the weights with something else than +0";
    const ir::Node* guard = m.node("guarded");
    if (probs->is_graph_output()) return "the NaN-guarded softmax weights are a graph output";
    for (const ir::Use& u : probs->uses())
      if (u.node != guard && u.node != guard->input(0)->producer())
        return "the NaN-guarded softmax weights are read outside the block";
  }
  p.weights_out = !p.nan_guarded && !only_use_is(*probs, *m.root()->producer());
  if (p.weights_out && probs->dtype() != m["q"]->dtype())
    return "the softmax weights are used outside the block in another type than Q's";
  if (p.weights_out && p.lead > 0) return "the softmax weights of scores with more than 4 dims are used outside the block";
  p.v = through_repeat_kv(m["v"], c);
  if (m.has("kt")) {
    p.k = m["kt"];
    p.k_perm.resize(r);
    for (size_t i = 0; i < r; ++i) p.k_perm[i] = static_cast<int64_t>(i);
    std::swap(p.k_perm[r - 1], p.k_perm[r - 2]);
  } else {
    p.k = through_repeat_kv(m["k"], c);
    std::vector<int64_t> perm = m.node("kt_transpose")->attr_ints("perm");
    if (perm.size() != r) return "the key transpose has no explicit permutation of the scores' rank";
    std::swap(perm[r - 1], perm[r - 2]);  // what Kᵀ's transpose makes of K laid out [..., s, d]
    bool identity = true;
    for (size_t i = 0; i < r; ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
    if (!identity) p.k_perm = perm;
  }
  if (!why.empty()) return why;
  const ir::Shape *k_raw = shape_of(p.k), *vs = shape_of(p.v);
  if (!k_raw || !vs || qs->size() != r || k_raw->size() != r || vs->size() != r)
    return "Q, K and V do not all have the scores' rank";
  ir::Shape ks = *k_raw;  // K as the Attention node will read it: [..., s, d]
  for (size_t i = 0; i < p.k_perm.size(); ++i) ks[i] = (*k_raw)[p.k_perm[i]];
  for (size_t i = 0; i <= p.lead; ++i) {
    if (!dims_match((*qs)[i], (*ss)[i]) || !dims_match(ks[i], (*ss)[i])) return "Q or K is broadcast over the batch";
    if (!dims_match((*vs)[i], (*ss)[i]))
      return "V's batch differs from the scores' (V " + ir::shape_str(*vs) + ", scores " + ir::shape_str(*ss) + ")";
  }
  if (!dims_match(ks[r - 2], (*ss)[r - 1])) return "K's length is not the key length";
  if (r >= 4) {
    // Fewer key/value heads than query heads (GQA, MQA) must divide them, the same for K and V.
    const Dim &hq = (*ss)[r - 3], &hk = ks[r - 3], &hv = (*vs)[r - 3];
    bool divides = dims_match(hq, hk) || (hq.is_const() && hk.is_const() && hk.value() > 0 && hq.value() % hk.value() == 0);
    if (!divides || !dims_match(hk, hv)) return "key/value heads do not divide the query heads";
  }
  if (!dims_match((*vs)[r - 2], (*ss)[r - 1])) return "V's length is not the key length";
  // Scale: the product of every constant factor; none at all is scale 1 (T5).
  for (const char* s : {"sq", "sk", "ss"}) {
    why = scale_of(m, s, p.scale);
    if (!why.empty()) return why;
  }
  if (m.has("cap")) {
    p.softcap = *scalar(m["cap"]);
    double by = m.has("cap_div") ? *scalar(m["cap_div"]) : 1 / *scalar(m["cap_inv"]);
    int e = 0;
    bool exact_inverse = m.has("cap_div") || std::fabs(std::frexp(*scalar(m["cap_inv"]), &e)) == 0.5;
    if (!(p.softcap > 0) || !std::isfinite(p.softcap) || by != p.softcap || !exact_inverse)
      return "the scores are capped as c·tanh(s / d) with c and d not one positive softcap";
    if (static_cast<double>(static_cast<float>(p.softcap)) != p.softcap)
      return "the softcap is not a float32 value (Attention's softcap attribute is a float)";
    if (m.has("ss_row_mul") || m.has("ss_row_div")) return "the soft-capped scores have a run-time scale";
  }
  if (m.has("ss_row_mul") || m.has("ss_row_div")) {
    p.q_factor_divides = m.has("ss_row_div");
    p.q_factor = m[p.q_factor_divides ? "ss_row_div" : "ss_row_mul"];
    const ir::Shape* fs = shape_of(p.q_factor);
    if (p.q_factor->dtype() != m["q"]->dtype()) return "the run-time scale of the scores is not of Q's type";
    if (!fs || fs->size() > r || !broadcasts_to(*fs, *ss))
      return "the run-time scale does not broadcast to the scores (scale " + (fs ? ir::shape_str(*fs) : "?") +
             ", scores " + ir::shape_str(*ss) + ")";
    if (!fs->empty() && !(fs->back() == Dim(1)))
      return "the run-time scale of the scores varies over the keys (it is not one value per query row)";
  }
  // Masks, innermost first; a causal one (the first found) becomes is_causal.
  std::vector<Plan::Term> terms;
  auto where_term = [&](const std::string& tag) -> std::string {
    if (!m.has("keep" + tag) && !m.has("drop" + tag)) return "";
    bool drop = m.has("drop" + tag);
    ir::Value* cond = m[(drop ? "drop" : "keep") + tag];
    const ir::Shape* cs = shape_of(cond);
    if (cond->dtype() != ir::DType::Bool) return "Where condition is not bool";
    if (!cs || !broadcasts_to(*cs, *ss)) return not_broadcastable(cs, *ss);
    double f = *scalar(m["fill" + tag]);
    if (!(f <= kHugeNegative))  // -inf compares <= too
      return "Where fills masked scores with a finite value that a fused mask would not reproduce";
    terms.push_back({cond, true, drop, f});
    return mask_to_4d(*cs, *ss, p.lead, terms.back().to_4d);
  };
  why = where_term("_in");
  if (!why.empty()) return why;
  for (const char* name : {"mask1", "mask2"}) {
    if (!m.has(name)) continue;
    ir::Value* mk = m[name];
    const ir::Shape* ms = shape_of(mk);
    if (!ms || !broadcasts_to(*ms, *ss)) return not_broadcastable(ms, *ss);
    if (mk->dtype() != m["q"]->dtype()) return "mask is not of the scores' type";
    terms.push_back({mk});
    why = mask_to_4d(*ms, *ss, p.lead, terms.back().to_4d);
    if (!why.empty()) return why;
  }
  why = where_term("");
  if (!why.empty()) return why;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Plan::Term& t = terms[i];
    std::vector<ir::Value*> others;
    for (size_t j = 0; j < terms.size(); ++j)
      if (j != i) others.push_back(terms[j].value);
    MaskForm form = !t.where ? MaskForm::kAdditive : t.negate ? MaskForm::kDrop : MaskForm::kKeep;
    if (!take_causal(t.value, *ss, form, c, others, p)) p.masks.push_back(t);
  }
  return "";
}

ir::Value* i64s(RewriteBuilder& b, const std::vector<int64_t>& v, const std::string& hint) {
  return b.constant(i64_tensor(v), hint);
}

// The dims of x from `start` to `end` (Python-style, negative from the back) as a 1-D int64 value.
ir::Value* dims_of(RewriteBuilder& b, ir::Value* x, int64_t start, std::optional<int64_t> end = std::nullopt) {
  std::vector<ir::Attribute> a = {RewriteBuilder::attr("start", start)};
  if (end) a.push_back(RewriteBuilder::attr("end", *end));
  return b.add("Shape", {x}, a)->output();
}

// [a, b, .., h, s, d] -> [a·b·.., h, s, d]: the leading dims of a rank-5+ operand merged (a view).
ir::Value* merge_lead(RewriteBuilder& b, ir::Value* x) {
  ir::Value* shape = b.add("Concat", {i64s(b, {-1}, "attn_merged_batch"), dims_of(b, x, -3)},
                           {RewriteBuilder::attr("axis", int64_t{0})})->output();
  return b.add("Reshape", {x, shape})->output();
}

// Builds the Attention node the match's plan (analyse, run once in the check) describes.
void rewrite(const Match& m, const Plan& plan, RewriteBuilder& b) {
  Plan p = plan;  // a working copy: Q and the masks are replaced by the nodes built below
  // (q·k)·f = (q·f)·k for f one value per query row: the run-time scale joins Q.
  if (p.q_factor) p.q = b.add(p.q_factor_divides ? "Div" : "Mul", {p.q, p.q_factor})->output();
  ir::Value* k = p.k;
  if (!p.k_perm.empty()) k = b.add("Transpose", {k}, {RewriteBuilder::attr("perm", p.k_perm)})->output();
  ir::Value *q = p.q, *v = p.v;
  if (p.lead > 0) {
    q = merge_lead(b, q);
    k = merge_lead(b, k);
    v = merge_lead(b, v);
    for (Plan::Term& t : p.masks) {
      size_t r = shape_of(t.value)->size();
      std::vector<int64_t> axes(r > 3 ? r - 3 : 0);
      for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
      if (t.to_4d == 1) t.value = b.add("Squeeze", {t.value, i64s(b, axes, "attn_mask_axes")})->output();
      if (t.to_4d == 2) t.value = merge_lead(b, t.value);
    }
  }
  // One attn_mask: a lone float mask or -inf Where as it is (bool), else the terms summed as floats
  // (Where(cond, 0, fill) for a Where), which gives the scores the same values.
  ir::Value* mask = nullptr;
  ir::DType dt = m["q"]->dtype();
  for (const Plan::Term& t : p.masks) {
    ir::Value* term = t.value;
    bool lone_bool = p.masks.size() == 1 && t.where && std::isinf(t.fill);
    if (t.where && lone_bool) {
      term = t.negate ? b.add("Not", {t.value})->output() : t.value;
    } else if (t.where) {
      ir::Value* zero = b.filled(dt, {}, 0.0, "attn_mask_zero");
      ir::Value* fill = b.filled(dt, {}, t.fill, "attn_mask_fill");
      term = b.add("Where", {t.value, t.negate ? fill : zero, t.negate ? zero : fill})->output();
    }
    mask = mask ? b.add("Add", {mask, term})->output() : term;
  }
  std::vector<ir::Attribute> attrs = {RewriteBuilder::attr("scale", static_cast<float>(p.scale))};
  // Softmax over a row of -inf is NaN in the graph this replaces; ONNX 1.23's Attention gives 0
  // there. The internal attribute (ONNX checkers skip names starting "__") keeps the graph's NaN.
  if (!p.nan_guarded) attrs.push_back(RewriteBuilder::attr(ir::kMaskedRowsNan, int64_t{1}));
  if (p.causal) attrs.push_back(RewriteBuilder::attr("is_causal", int64_t{1}));
  if (p.softcap > 0) attrs.push_back(RewriteBuilder::attr("softcap", static_cast<float>(p.softcap)));
  ir::Value* weights = p.weights_out ? m["probs"] : nullptr;
  if (weights) attrs.push_back(RewriteBuilder::attr("qk_matmul_output_mode", int64_t{3}));
  if (p.lead > 0) {
    // [a·b·.., h, s, dv] back to the block's [a, b, .., h, s, dv].
    ir::Value* y = b.add_outputs("Attention", mask ? std::vector<ir::Value*>{q, k, v, mask} : std::vector<ir::Value*>{q, k, v},
                                 attrs, {true, false, false, false})->output(0);
    ir::Value* shape = b.add("Concat", {dims_of(b, p.q, 0, -1), dims_of(b, p.v, -1)},
                             {RewriteBuilder::attr("axis", int64_t{0})})->output();
    b.replace({m.root()}, "Reshape", {y, shape});
  } else if (!p.three_d) {
    std::vector<ir::Value*> ins = {p.q, k, p.v};
    if (mask || p.past_k) ins.push_back(mask);
    if (p.past_k) ins.insert(ins.end(), {p.past_k, p.past_v});
    // ONNX Runtime wants the present outputs whenever past inputs are given.
    std::vector<ir::Value*> outs = {m.root()};
    if (p.past_k || weights) outs.insert(outs.end(), {p.present_k, p.present_v});
    if (weights) outs.push_back(weights);
    b.replace(outs, "Attention", ins, attrs);
  } else {
    // [b·h, s, d] -> [b·h, 1, s, d]: one head per batch row; the mask gains the head axis too.
    ir::Value* axis1 = i64s(b, {1}, "attn_axis1");
    auto unsq = [&](ir::Value* x) { return b.add("Unsqueeze", {x, axis1})->output(); };
    std::vector<ir::Value*> ins = {unsq(p.q), unsq(k), unsq(p.v)};
    if (mask) ins.push_back(shape_of(mask)->size() == 3 ? unsq(mask) : mask);
    ir::Node* att = b.add_outputs("Attention", ins, attrs, {true, false, false, weights != nullptr});
    b.replace({m.root()}, "Squeeze", {att->output(0), axis1});
    if (weights) b.replace({weights}, "Squeeze", {att->output(3), axis1})->set_name(att->name() + "_weights");
  }
  // A causal mask kept materialized is a note in the report (rule is_causal), named by the mask
  // (once, when several blocks share it).
  if (FusionReport* report = b.context().pass.report; p.causal_kept && report) {
    NearMiss note{"is_causal", "attention", p.causal_kept->name(), p.causal_kept_why + ": kept as attn_mask",
                  static_cast<int>(m.nodes().size())};
    auto same = [&](const NearMiss& o) { return o.rule == note.rule && o.where == note.where; };
    if (std::none_of(report->near_misses.begin(), report->near_misses.end(), same)) report->near_misses.push_back(note);
  }
  // The new nodes sit before the block's last MatMul; readers of the weights or of the present
  // key/value may come earlier.
  if (weights || p.past_k) b.graph().topological_sort();
}

}  // namespace

namespace {

// The value `v` was computed, within a few steps back through views and elementwise ops, from a
// MatMul: softmax weights over such a value are attention scores, whatever else is in between.
bool computed_from_product(const ir::Value* v, int depth = 8) {
  const ir::Node* p = v ? v->producer() : nullptr;
  if (!p || depth == 0) return false;
  if (p->op_type() == "MatMul" || p->op_type() == "Einsum") return true;
  static const std::set<std::string> kThrough = {"Reshape", "Transpose", "Add", "Sub", "Mul", "Div", "Where",
                                                 "Cast", "Tanh", "Squeeze", "Unsqueeze", "Expand", "Abs", "Neg"};
  if (!p->domain().empty() || !kThrough.count(p->op_type())) return false;
  for (const ir::Value* in : p->inputs())
    if (computed_from_product(in, depth - 1)) return true;
  return false;
}

// A product of softmax weights (through Casts) whose scores are a product: attention, to be fused
// or explained.
bool weighs_by_softmax_of_a_product(const ir::Node& n) {
  if (n.op_type() != "MatMul" || !n.domain().empty() || n.num_inputs() < 1) return false;
  const ir::Value* w = n.input(0);
  // Through the NaN guard of torch's exported scaled_dot_product_attention (Where(IsNaN(w), 0, w)).
  if (produced_by_op(w, "Where") && produced_by_op(w->producer()->input(0), "IsNaN")) w = w->producer()->input(2);
  while (produced_by_op(w, "Cast")) w = w->producer()->input(0);
  return produced_by_op(w, "Softmax") && computed_from_product(w->producer()->input(0));
}

}  // namespace

std::vector<FusionRule> attention_rules() {
  FusionRule r = planned_rule<Plan>("sdpa", "attention", attention_pattern(), analyse, rewrite, 23);
  r.may_escape = {"probs"};
  r.must_explain = weighs_by_softmax_of_a_product;
  return {r};
}

bool expand_attention_masks_for_export(ir::Model& m) {
  bool changed = false;
  ir::Graph& g = *m.graph;
  for (ir::Node* n : g.nodes()) {
    if (n->op_type() != "Attention" || !n->domain().empty() || n->num_inputs() < 4 || !n->input(3)) continue;
    ir::Value *q = n->input(0), *mask = n->input(3);
    const ir::Shape *qs = shape_of(q), *ms = shape_of(mask);
    if (!qs || !ms || ms->size() < 2) continue;
    int64_t seq_axis = qs->size() == 4 ? 2 : 1;
    if (dims_equal((*ms)[ms->size() - 2], (*qs)[seq_axis])) continue;
    // shape = [1, ..., 1, q_len, 1]: Expand broadcasts every other axis as it is.
    auto ints = [&](const std::vector<int64_t>& v, const std::string& hint) {
      return g.add_initializer(g.unique_name(hint), i64_tensor(v));
    };
    ir::Node* len = g.insert_node_before(n, "Shape", {q}, {g.unique_name(mask->name() + "_qlen")});
    len->set_attr_int("start", seq_axis);
    len->set_attr_int("end", seq_axis + 1);
    ir::Value* lead = ints(std::vector<int64_t>(ms->size() - 2, 1), mask->name() + "_lead");
    ir::Value* tail = ints({1}, mask->name() + "_tail");
    ir::Node* shape = g.insert_node_before(n, "Concat", {lead, len->output(), tail}, {g.unique_name(mask->name() + "_shape")});
    shape->set_attr_int("axis", 0);
    ir::Node* ex = g.insert_node_before(n, "Expand", {mask, shape->output()}, {g.unique_name(mask->name() + "_rows")});
    ir::Shape rows = *ms;
    rows[rows.size() - 2] = (*qs)[seq_axis];
    ex->output()->set_type(ir::Type::tensor(mask->dtype(), rows));
    n->set_input(3, ex->output());
    changed = true;
  }
  return changed;
}

}  // namespace onnxc::passes
