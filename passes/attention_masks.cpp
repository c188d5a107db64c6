// Mask facts for attention fusion (see attention_masks.h).
#include "passes/attention_masks.h"

#include "passes/pattern.h"
#include "passes/rewrite.h"

namespace onnxc::passes::attn {

using namespace pat;
using ir::Dim;

std::optional<double> scalar(const ir::Value* v) {
  if (!v || !v->is_constant() || v->constant().numel() != 1) return std::nullopt;
  return v->constant().get_f64(0);
}

namespace {

// A constant [..1.., n, n] mask that is exactly causal: keeps j <= i (float 0; bool true in the
// keep form, false in the drop form) and drops j > i (float -inf or a finfo.min-sized value).
bool constant_is_causal(const ir::Tensor& t, MaskForm form) {
  const auto& d = t.dims();
  if (d.size() < 2 || d[d.size() - 1] != d[d.size() - 2]) return false;
  for (size_t i = 0; i + 2 < d.size(); ++i)
    if (d[i] != 1) return false;
  int64_t n = d.back();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double x = t.get_f64(i * n + j);
      bool keep = j <= i;
      bool ok = form == MaskForm::kAdditive ? (keep ? x == 0 : x <= kHugeNegative)
                                            : (x != 0) == (form == MaskForm::kKeep ? keep : !keep);
      if (!ok) return false;
    }
  return true;
}

// Trilu(fill -inf | finfo.min, k=1, upper) -- torch.triu(full(-inf), 1) -- optionally unsqueezed
// or times 1: an additive causal mask of whatever square shape the fill has.
bool trilu_is_causal(ir::Value* mask) {
  Pattern huge = any().constant().scalar().where([](const ir::Value& v) { return *scalar(&v) <= kHugeNegative; },
                                                 "fill is not -inf or finfo.min");
  Pattern full = alt({op("ConstantOfShape").where_node([](const ir::Node& n) {
                        const ir::Attribute* a = n.attr("value");
                        return a && a->t.numel() == 1 && a->t.get_f64(0) <= kHugeNegative ? "" : "fill is not -inf";
                      }),
                      op("Expand", {huge, any()}), huge});
  Pattern tri = op("Trilu", {full, const_value(1)}).attr("upper", 1, 1);
  Pattern p = alt({op("Unsqueeze", {tri, any()}), tri});
  p = alt({op("Mul", {p, const_value(1)}), p});
  return static_cast<bool>(match(p, mask));
}

}  // namespace

bool dims_equal(const Dim& a, const Dim& b) { return !a.is_unknown() && a == b; }

// Equal, or two symbolic extents the model's own ops require to be equal at run time that inference
// left as different expressions (max(min(64, seq), seq) for seq). Never a 1 against another extent
// (that is a broadcast) nor an extent holding an unknown. The kernel checks the extents at run time.
bool dims_match(const Dim& a, const Dim& b) {
  if (dims_equal(a, b)) return true;
  auto known = [](const Dim& d) { return !d.is_unknown() && d.str().find('?') == std::string::npos; };
  auto one = [](const Dim& d) { return d.is_const() && d.value() == 1; };
  // Two different input symbols are independent extents, not one extent written twice.
  if (a.is_symbol() && b.is_symbol()) return false;
  return known(a) && known(b) && !one(a) && !one(b) && !(a.is_const() && b.is_const());
}

// Whether `m` broadcasts to `scores` without growing it: rank <= and each dim 1 or equal.
bool broadcasts_to(const ir::Shape& m, const ir::Shape& s) {
  if (m.size() > s.size()) return false;
  for (size_t i = 0; i < m.size(); ++i) {
    const Dim& d = m[i];
    if (!(d.is_const() && d.value() == 1) && !dims_match(d, s[s.size() - m.size() + i])) return false;
  }
  return true;
}

std::string not_broadcastable(const ir::Shape* mask, const ir::Shape& scores) {
  return "mask is not broadcastable to the scores (mask " + (mask ? ir::shape_str(*mask) : std::string("unknown")) +
         ", scores " + ir::shape_str(scores) + ")";
}

// Is this mask value the causal mask of these square scores?
bool is_causal_mask(ir::Value* mask, const ir::Shape& scores, MaskForm form) {
  const ir::Shape* ms = shape_of(mask);
  size_t r = scores.size();
  if (!ms || ms->size() < 2 || !dims_equal(scores[r - 1], scores[r - 2])) return false;
  if (!dims_equal((*ms)[ms->size() - 1], scores[r - 1]) || !dims_equal((*ms)[ms->size() - 2], scores[r - 2]))
    return false;
  if (mask->is_constant()) return constant_is_causal(mask->constant(), form);
  return form == MaskForm::kAdditive && trilu_is_causal(mask);
}

// GPT-2's causal mask: a constant lower-triangular buffer [1, .., N, N] sliced (step 1) to rows
// [r0, kv) or [r0, r0 + q) and columns [0, kv) of scores [.., q, kv], bounds computed from shapes. Element (i, j)
// is buf[r0 + i, j]: kept iff j <= i + r0, the causal mask offset by r0 (kv - q: the past length).
// Returns r0, symbolic as inference tracks it. Only lengths beyond the buffer (kv > N) behave
// differently: there the export's slice comes out short and its Where fails to broadcast.
std::optional<Dim> sliced_causal_offset(ir::Value* mask, const ir::Shape& scores, MaskForm form,
                                        const FusionContext& c) {
  size_t r = scores.size();
  const Dim &q = scores[r - 2], &kv = scores[r - 1];
  std::optional<Dim> row_start, col_start;
  ir::Value* x = mask;
  for (; x->producer() && x->producer()->op_type() == "Slice" && x->producer()->domain().empty();
       x = x->producer()->input(0)) {
    const ir::Node* sl = x->producer();
    const ir::Shape* ds = shape_of(sl->input(0));
    auto starts = c.dims(sl->input(1)), ends = c.dims(sl->input(2));
    if (!ds || ds->size() < 2 || !starts || !ends || starts->size() != ends->size()) return std::nullopt;
    int64_t rank = static_cast<int64_t>(ds->size());
    std::vector<int64_t> axes(starts->size());
    for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
    if (sl->num_inputs() > 3 && sl->input(3)) {
      auto a = c.ints(sl->input(3));
      if (!a || a->size() != axes.size()) return std::nullopt;
      axes = *a;
    }
    if (sl->num_inputs() > 4 && sl->input(4)) {
      auto st = c.ints(sl->input(4));
      if (!st || std::any_of(st->begin(), st->end(), [](int64_t v) { return v != 1; })) return std::nullopt;
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t ax = axes[i] < 0 ? axes[i] + rank : axes[i];
      const Dim &st = (*starts)[i], &en = (*ends)[i];
      if (st.is_const() && st.value() < 0) return std::nullopt;  // counted from the end
      if (ax < rank - 2) {
        if (!(st.is_const() && st.value() == 0)) return std::nullopt;
        continue;
      }
      std::optional<Dim>& start = ax == rank - 2 ? row_start : col_start;
      // One slice per axis; q rows ending at kv (or q of them), and the columns [0, kv) (or [0, end of buffer)).
      bool to_end = en == kv || (ax == rank - 2 ? en - st == q
                                                : en.is_const() && (*ds)[ax].is_const() && en.value() >= (*ds)[ax].value());
      if (start || !to_end) return std::nullopt;
      start = st;
    }
  }
  if (x == mask || !x->is_constant() || !constant_is_causal(x->constant(), form)) return std::nullopt;
  if (!row_start || (col_start && !(col_start->is_const() && col_start->value() == 0))) return std::nullopt;
  return *row_start;
}

// A mask the checks above would call causal were it square and unshifted: a constant causal pattern
// or a slice of one. Used only to say why such a mask was kept.
bool looks_causal(ir::Value* mask, MaskForm form) {
  ir::Value* x = mask;
  while (x->producer() && x->producer()->op_type() == "Slice") x = x->producer()->input(0);
  return x->is_constant() && constant_is_causal(x->constant(), form);
}

}  // namespace onnxc::passes::attn
