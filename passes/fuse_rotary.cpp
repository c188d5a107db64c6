// fuse_rotary: rotary position embedding as Hugging Face's apply_rotary_pos_emb writes it, with
// rotate_half, -> RotaryEmbedding (opset 23).
//
//   x[b, h, s, d] ─┬────────────────────────────────────────── Mul(·, cos4) ─┐
//                  └─ Concat(Neg(x[..., d/2:]), x[..., :d/2], -1) ─ Mul(·, sin4) ─┴─ Add ─▶ y
//   cos4 = Unsqueeze(cos[B, s, d], 1), sin4 likewise; cos = f(Concat(freqs, freqs, -1)) for an
//   elementwise f (Cos, a constant scale, Casts), so its two halves are equal.
//
// Partial rotary (GPT-NeoX's rotary_pct, Phi's partial_rotary_factor) rotates x[..., :r] and
// concatenates x[..., r:] unchanged: Concat(rotary(x[..., :r]), x[..., r:]) -> RotaryEmbedding with
// rotary_embedding_dim = r.
//
// Exact: the first half computes x1·c + (-x2)·s = x1·c - x2·s, the second x2·c + x1·s, the same
// products and sums the kernel forms, with c and s read from the caches' first half (equal to the
// second). The caches become [b, s, d/2] (Slice, and Expand when cos has batch 1) for the form
// without position_ids.
#include "passes/fuse_rotary.h"

#include "passes/attention_masks.h"
#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

using namespace pat;
using attn::dims_match;

Pattern last_axis_slice(const Pattern& x, const std::string& name) {
  Pattern c = any();  // constants, or shape values inference knows (x.shape[-1] // 2)
  return op("Slice", {x, c.capture(name + "_start"), c.capture(name + "_end"), optional(c.capture(name + "_axes")),
                      optional(c.capture(name + "_steps"))})
      .capture(name);
}

Pattern rotary_core(const Pattern& x) {
  Pattern rot = op("Concat", {op("Neg", {last_axis_slice(x, "hi")}), last_axis_slice(x, "lo")}).capture("rot");
  // The unsqueezed caches are leaves: one Unsqueeze serves Q and K.
  return op("Add", {op("Mul", {x, any().capture("cos4")}), op("Mul", {rot, any().capture("sin4")})});
}

Pattern rotary_pattern() {
  Pattern full = any().capture("x");
  Pattern part = last_axis_slice(any().capture("x"), "part");
  return alt({op("Concat", {rotary_core(part), last_axis_slice(any().capture("x"), "pass")}).capture("partial"),
              rotary_core(full)});
}

// Whether every element of `v` along its last axis repeats with period half the axis: v is an
// elementwise function (Cos, Sin, Cast, a product with a constant scalar) of Concat(f, f, -1).
bool halves_equal(const ir::Value* v) {
  for (int depth = 0; v && depth < 8; ++depth) {
    const ir::Node* n = v->producer();
    if (!n || !n->domain().empty()) return false;
    const std::string& t = n->op_type();
    if (t == "Concat") {
      const ir::Shape* s = shape_of(v);
      int64_t axis = n->attr_int("axis", 0);
      return n->num_inputs() == 2 && n->input(0) == n->input(1) && s &&
             (axis == -1 || axis == static_cast<int64_t>(s->size()) - 1);
    }
    if (t == "Cos" || t == "Sin" || t == "Cast" || t == "Identity") {
      v = n->input(0);
    } else if ((t == "Mul" || t == "Div") && n->num_inputs() == 2 && n->input(1)->is_constant() &&
               n->input(1)->constant().numel() == 1) {
      v = n->input(0);
    } else if (t == "Mul" && n->num_inputs() == 2 && n->input(0)->is_constant() && n->input(0)->constant().numel() == 1) {
      v = n->input(1);
    } else {
      return false;
    }
  }
  return false;
}

// One Slice on the last axis with step 1: [start, end) with end clamped to `dim`; nullopt otherwise.
std::optional<std::pair<int64_t, int64_t>> slice_range(const Match& m, const FusionContext& c, const std::string& name,
                                                       int64_t rank, int64_t dim) {
  auto st = c.ints(m[name + "_start"]), en = c.ints(m[name + "_end"]);
  if (!st || !en || st->size() != 1 || en->size() != 1) return std::nullopt;
  if (m.has(name + "_axes")) {
    auto ax = c.ints(m[name + "_axes"]);
    if (!ax || ax->size() != 1 || ((*ax)[0] != -1 && (*ax)[0] != rank - 1)) return std::nullopt;
  } else if (rank != 1) {
    return std::nullopt;
  }
  if (m.has(name + "_steps")) {
    auto sp = c.ints(m[name + "_steps"]);
    if (!sp || sp->size() != 1 || (*sp)[0] != 1) return std::nullopt;
  }
  auto clamp = [&](int64_t i) { return i < 0 ? std::max<int64_t>(i + dim, 0) : std::min(i, dim); };
  return std::pair{clamp((*st)[0]), clamp((*en)[0])};
}

// The [B, s, d] cache behind an unsqueezed [B, 1, s, d] one, or null.
ir::Value* cache_of(ir::Value* v4, const FusionContext& c) {
  if (!produced_by_op(v4, "Unsqueeze")) return nullptr;
  auto axes = c.ints(v4->producer()->input(1));
  return axes && axes->size() == 1 && (*axes)[0] == 1 ? v4->producer()->input(0) : nullptr;
}

struct Plan {
  ir::Value *x = nullptr, *cos = nullptr, *sin = nullptr;
  int64_t half = 0, rotary_dim = 0;  // rotary_dim: the rotated features (0: all of them)
};

std::string analyse(const Match& m, const FusionContext& c, Plan& p) {
  p.x = m["x"];
  const ir::Shape* xs = shape_of(p.x);
  if (!ir::dtype_is_float(p.x->dtype())) return "the input is not floating point";
  if (!xs || xs->size() != 4 || !xs->back().is_const()) return "the input is not [batch, heads, seq, head_dim] with a known head_dim";
  const int64_t d = xs->back().value();
  int64_t r = d;
  if (m.has("partial")) {
    auto part = slice_range(m, c, "part", 4, d), pass = slice_range(m, c, "pass", 4, d);
    if (!part || !pass || part->first != 0 || pass->first != part->second || pass->second != d)
      return "the rotated and passed-through parts are not x[..., :r] and x[..., r:]";
    r = part->second;
    int64_t axis = m.node("partial")->attr_int("axis", 0);
    if (axis != -1 && axis != 3) return "the parts are not concatenated on the last axis";
    p.rotary_dim = r;
  }
  if (r <= 0 || r % 2 != 0) return "the rotated features are not an even count";
  auto hi = slice_range(m, c, "hi", 4, r), lo = slice_range(m, c, "lo", 4, r);
  if (!hi || !lo || lo->first != 0 || lo->second != r / 2 || hi->first != r / 2 || hi->second != r)
    return "rotate_half does not split the features at the middle";
  int64_t axis = m.node("rot")->attr_int("axis", 0);
  if (axis != -1 && axis != 3) return "rotate_half does not concatenate on the last axis";
  p.half = r / 2;
  p.cos = cache_of(m["cos4"], c);
  p.sin = cache_of(m["sin4"], c);
  if (!p.cos || !p.sin) return "cos and sin are not [batch, seq, dim] caches unsqueezed at axis 1";
  for (const ir::Value* t : {p.cos, p.sin}) {
    const ir::Shape* ts = shape_of(t);
    if (t->dtype() != p.x->dtype()) return "the caches are not of the input's type";
    if (!ts || ts->size() != 3 || !(ts->back() == ir::Dim(r)) || !dims_match((*ts)[1], (*xs)[2]) ||
        !(dims_match((*ts)[0], (*xs)[0]) || (*ts)[0] == ir::Dim(1)))
      return "the caches are not [batch or 1, seq, " + std::to_string(r) + "] for x " + ir::shape_str(*xs);
    if (!halves_equal(t)) return "the caches' two halves are not shown equal (cos/sin of Concat(freqs, freqs))";
  }
  return "";
}

ir::Value* i64s(RewriteBuilder& b, std::vector<int64_t> v, const std::string& hint) {
  return b.constant(i64_tensor(v), hint);
}

// cache[B, s, r] -> [b, s, r/2]: its first half, expanded to x's batch.
ir::Value* half_cache(RewriteBuilder& b, ir::Value* cache, ir::Value* x, int64_t half) {
  ir::Value* h = b.add("Slice", {cache, i64s(b, {0}, "rotary_from"), i64s(b, {half}, "rotary_half"),
                                 i64s(b, {-1}, "rotary_axis")})->output();
  const ir::Shape *cs = shape_of(cache), *xs = shape_of(x);
  if (dims_match((*cs)[0], (*xs)[0])) return h;
  ir::Value* batch = b.add("Shape", {x}, {RewriteBuilder::attr("start", int64_t{0}), RewriteBuilder::attr("end", int64_t{1})})->output();
  ir::Value* rest = b.add("Shape", {h}, {RewriteBuilder::attr("start", int64_t{1})})->output();
  ir::Value* shape = b.add("Concat", {batch, rest}, {RewriteBuilder::attr("axis", int64_t{0})})->output();
  return b.add("Expand", {h, shape})->output();
}

void rewrite(const Match& m, const Plan& p, RewriteBuilder& b) {
  std::vector<ir::Attribute> attrs;
  if (p.rotary_dim > 0) attrs.push_back(RewriteBuilder::attr("rotary_embedding_dim", p.rotary_dim));
  b.replace({m.root()}, "RotaryEmbedding",
            {p.x, half_cache(b, p.cos, p.x, p.half), half_cache(b, p.sin, p.x, p.half)}, attrs);
}

}  // namespace

std::vector<FusionRule> rotary_rules() {
  return {planned_rule<Plan>("rotary_half", "rotary", rotary_pattern(), analyse, rewrite, 23)};
}

}  // namespace onnxc::passes
