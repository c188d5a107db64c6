// RotaryEmbedding (opset 23): rotates the first rotary_embedding_dim features of each head by the
// cos/sin caches, indexed by position_ids [b, s] (or [1, s] for every batch entry: the form
// passes/expand_contrib_ops builds from com.microsoft's offset) when given, else read as
// [b, s, dim/2] directly.
// Input 4-D [b, h, s, d] or 3-D [b, s, h·d] (num_heads); halves split (x1 | x2) or interleaved.
#include "codegen/lower/lower_util.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;

// The default schedule vectorizes the head dim, where each vector's features pick their partner
// (d ± half) and cos/sin column by a select on d: gathers, ~10x the time of dense loads (the 0.43 B
// decoder's query rotary: 4.3 ms of a 450 ms prefill). With a static head of whole vectors, each in a
// half, the vectors are unrolled: in each, d < half is a constant and every read is a dense vector.
void schedule_head_vectors(LowerContext& ctx, const HTensor& y, const int64_t* head_dim, const int64_t* half) {
  if (!head_dim || !half || ctx.target.has_gpu_feature()) return;
  const int w = ctx.target.natural_vector_size(halide_type(y.dtype));
  if (w <= 1 || *half % w != 0 || *head_dim % w != 0 || *head_dim > 16 * w) return;
  const std::string name = y.func.name();
  const int32_t dim = static_cast<int32_t>(*head_dim);
  ctx.schedule = [name, dim, w](Halide::Func out, const Halide::Target& t) {
    if (out.name() == name && out.dimensions() == 4) {
      // Split before the default schedule, which then vectorizes the inner part (still named d) and
      // copies the split into each of its specializations.
      Halide::Var d = out.args()[0], dv(d.name() + "_vec");
      out.bound(d, 0, dim).split(d, dv, d, w).unroll(dv);
    }
    schedule_output(out, KernelClass::Elementwise, t);
  };
}

std::vector<HTensor> rotary_embedding(LowerContext& ctx) {
  const ir::Node& n = ctx.node;
  const HTensor& x = ctx.in[0];
  const HTensor &cos_cache = ctx.in[1], &sin_cache = ctx.in[2];
  int r = x.rank();
  user_check(r == 3 || r == 4) << n.describe() << ": the input must be 3-D or 4-D, not " << r << "-D";
  int64_t heads = n.attr_int("num_heads", 0);
  user_check(r == 4 || heads > 0) << n.describe() << ": a 3-D input needs the num_heads attribute";
  Expr head_dim = r == 4 ? x.shape[3] : x.shape[2] / Expr(static_cast<int32_t>(heads));
  int64_t rd_attr = n.attr_int("rotary_embedding_dim", 0);
  Expr rd = rd_attr > 0 ? Expr(static_cast<int32_t>(rd_attr)) : head_dim;
  Expr half = Halide::Internal::simplify(rd / 2);
  bool interleaved = n.attr_int("interleaved", 0) != 0;
  bool positions = has_input(ctx, 3);
  user_check(cos_cache.rank() == (positions ? 2 : 3) && sin_cache.rank() == cos_cache.rank())
      << n.describe() << ": cos_cache and sin_cache must be " << (positions ? "2-D [max_position, dim/2] with position_ids"
                                                                            : "3-D [batch, seq, dim/2] without position_ids");
  HTensor y = define("RotaryEmbedding", x.shape, x.dtype, [&](const Index& o) {
    // (b, s, d) of this element, and the index of feature d' of the same head and token.
    Expr b = o[0], s = r == 4 ? o[2] : o[1], c = o[r - 1];
    Expr d = r == 4 ? c : c % head_dim, base = r == 4 ? Expr(0) : c - d;
    auto feature = [&](const Expr& dd) {
      Index i = o;
      i[r - 1] = base + Halide::clamp(dd, 0, head_dim - 1);
      return x.at(i);
    };
    Expr first = interleaved ? d % 2 == 0 : d < half;  // real part (x1) or imaginary (x2)
    Expr k = interleaved ? d / 2 : Halide::select(first, d, d - half);
    Expr x1 = interleaved ? feature(2 * k) : feature(k), x2 = interleaved ? feature(2 * k + 1) : feature(k + half);
    Expr kc = Halide::clamp(k, 0, Halide::max(half - 1, 0));
    Expr cs, sn;
    if (positions) {
      const HTensor& pos = ctx.in[3];  // [batch, seq], or [1, seq] for every batch entry
      Expr pb = Halide::Internal::is_const_one(pos.shape[0]) ? Expr(0) : b;
      Expr p = Halide::cast<int32_t>(pos.at({pb, s}));
      p = Halide::clamp(p, 0, cos_cache.shape[0] - 1);
      cs = cos_cache.at({p, kc});
      sn = sin_cache.at({p, kc});
    } else {
      cs = cos_cache.at({b, s, kc});
      sn = sin_cache.at({b, s, kc});
    }
    Expr rotated = Halide::select(first, cs * x1 - sn * x2, sn * x1 + cs * x2);
    return Halide::select(d < rd, rotated, x.at(o));
  });
  schedule_head_vectors(ctx, y, r == 4 && !interleaved ? Halide::Internal::as_const_int(head_dim) : nullptr,
                        Halide::Internal::as_const_int(half));
  return {y};
}

Registrar reg_RotaryEmbedding("", "RotaryEmbedding", KernelClass::Elementwise, rotary_embedding);

}  // namespace

}  // namespace onnxc::codegen
