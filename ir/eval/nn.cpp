// Evaluator: the dense ops a transformer block is made of (MatMul, Gemm, Softmax,
// LayerNormalization), in double precision. They let constant folding fold weight-only products and
// let tests run whole models as a reference. Each declines (nullopt) above ~128M multiply-adds.
#include <cmath>

#include "ir/eval/eval_internal.h"
#include "ir/onnxc_attrs.h"

namespace onnxc::ir::eval_detail {
namespace {

constexpr int64_t kMaxWork = int64_t{1} << 27;

std::vector<double> values(const Tensor& t) {
  require_numeric(t);
  if (!float_lane(t.dtype())) throw NotEvaluable{};  // integer matmuls are rare in constant folding
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.get_f64(i);
  return v;
}

Tensor from_values(Ctx& c, DType dt, const std::vector<int64_t>& dims, const std::vector<double>& v) {
  Tensor out = c.make(dt, dims);
  for (size_t i = 0; i < v.size(); ++i) set_f64(out, static_cast<int64_t>(i), v[i]);
  return out;
}

std::vector<Tensor> eval_matmul(Ctx& c) {
  const Tensor &a = c.in(0), &b = c.in(1);
  user_check(a.rank() >= 1 && b.rank() >= 1) << c.where() << "needs inputs of rank >= 1";
  // Numpy semantics: a 1-D operand gains a unit dim that the output then drops.
  std::vector<int64_t> ad = a.dims(), bd = b.dims();
  if (a.rank() == 1) ad.insert(ad.begin(), 1);
  if (b.rank() == 1) bd.push_back(1);
  int64_t m = ad[ad.size() - 2], k = ad.back(), n = bd.back();
  user_check(bd[bd.size() - 2] == k) << c.where() << "inner dims differ (" << k << " vs " << bd[bd.size() - 2] << ")";
  std::vector<int64_t> abatch(ad.begin(), ad.end() - 2), bbatch(bd.begin(), bd.end() - 2);
  std::vector<int64_t> batch = broadcast(c, {abatch, bbatch});
  int64_t nb = numel(batch);
  if (nb * m * n * std::max<int64_t>(k, 1) > kMaxWork) throw NotEvaluable{};
  std::vector<int64_t> out_dims = batch;
  if (a.rank() > 1) out_dims.push_back(m);
  if (b.rank() > 1) out_dims.push_back(n);
  c.check_size(out_dims);
  auto ia = broadcast_index(abatch, batch), ib = broadcast_index(bbatch, batch);
  std::vector<double> av = values(a), bv = values(b), out(static_cast<size_t>(nb * m * n), 0.0);
  for (int64_t q = 0; q < nb; ++q) {
    const double* pa = av.data() + ia[q] * m * k;
    const double* pb = bv.data() + ib[q] * k * n;
    double* po = out.data() + q * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) po[i * n + j] += pa[i * k + p] * pb[p * n + j];
  }
  return {from_values(c, a.dtype(), out_dims, out)};
}

std::vector<Tensor> eval_gemm(Ctx& c) {
  const Tensor &a = c.in(0), &b = c.in(1);
  user_check(a.rank() == 2 && b.rank() == 2) << c.where() << "needs 2-D inputs";
  bool ta = c.node.attr_int("transA", 0) != 0, tb = c.node.attr_int("transB", 0) != 0;
  double alpha = c.node.attr_float("alpha", 1.f), beta = c.node.attr_float("beta", 1.f);
  int64_t m = ta ? a.dims()[1] : a.dims()[0], k = ta ? a.dims()[0] : a.dims()[1];
  int64_t n = tb ? b.dims()[0] : b.dims()[1];
  user_check((tb ? b.dims()[1] : b.dims()[0]) == k) << c.where() << "inner dims differ";
  if (m * n * std::max<int64_t>(k, 1) > kMaxWork) throw NotEvaluable{};
  c.check_size({m, n});
  std::vector<double> av = values(a), bv = values(b), out(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += av[ta ? p * m + i : i * k + p] * bv[tb ? j * k + p : p * n + j];
      out[i * n + j] = alpha * s;
    }
  if (const Tensor* bias = c.opt_in(2)) {
    std::vector<int64_t> dims = {m, n};
    broadcast(c, {bias->dims(), dims});
    auto idx = broadcast_index(bias->dims(), dims);
    std::vector<double> cv = values(*bias);
    for (int64_t e = 0; e < m * n; ++e) out[e] += beta * cv[idx[e]];
  }
  return {from_values(c, a.dtype(), {m, n}, out)};
}

// Calls fn(offset, stride) for each 1-D line along `axis` of a tensor with `dims`.
template <class F>
void for_each_line(const std::vector<int64_t>& dims, int64_t axis, F&& fn) {
  int64_t inner = 1, outer = 1;
  for (size_t a = 0; a < dims.size(); ++a) {
    if (static_cast<int64_t>(a) < axis) outer *= dims[a];
    if (static_cast<int64_t>(a) > axis) inner *= dims[a];
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) fn(o * dims[axis] * inner + i, inner);
}

std::vector<Tensor> eval_softmax(Ctx& c) {
  const Tensor& x = c.in(0);
  if (x.rank() == 0) throw NotEvaluable{};
  int64_t axis = normalize_axis(c, c.node.attr_int("axis", -1), x.rank()), len = x.dims()[axis];
  if (c.num_inputs() > 1) throw NotEvaluable{};
  std::vector<double> v = values(x);
  bool log = c.node.op_type() == "LogSoftmax";
  for_each_line(x.dims(), axis, [&](int64_t off, int64_t stride) {
    double mx = -INFINITY, sum = 0;
    for (int64_t i = 0; i < len; ++i) mx = std::max(mx, v[off + i * stride]);
    for (int64_t i = 0; i < len; ++i) sum += std::exp(v[off + i * stride] - mx);
    for (int64_t i = 0; i < len; ++i) {
      double& e = v[off + i * stride];
      e = log ? e - mx - std::log(sum) : std::exp(e - mx) / sum;
    }
  });
  return {from_values(c, x.dtype(), x.dims(), v)};
}

// LayerNormalization (17) and RMSNormalization (23, no mean, no bias): the fused ops' reference.
std::vector<Tensor> eval_layer_norm(Ctx& c) {
  const bool rms = c.node.op_type() == "RMSNormalization";
  const Tensor& x = c.in(0);
  for (size_t i = 1; i < c.node.num_outputs(); ++i)
    if (c.node.output(i)) throw NotEvaluable{};  // Mean / InvStdDev outputs: not needed so far
  int64_t axis = normalize_axis(c, c.node.attr_int("axis", -1), x.rank());
  double eps = c.node.attr_float("epsilon", 1e-5f);
  std::vector<int64_t> norm_dims(x.dims().begin() + axis, x.dims().end());
  int64_t n = numel(norm_dims), rows = n ? x.numel() / n : 0;
  std::vector<double> v = values(x), scale = values(c.in(1)), bias;
  if (const Tensor* b = rms ? nullptr : c.opt_in(2)) bias = values(*b);
  auto is = broadcast_index(c.in(1).dims(), norm_dims);
  auto ib = bias.empty() ? std::vector<int64_t>{} : broadcast_index(c.in(2).dims(), norm_dims);
  for (int64_t r = 0; r < rows; ++r) {
    double* p = v.data() + r * n;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n && !rms; ++i) mean += p[i];
    mean /= static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) var += (p[i] - mean) * (p[i] - mean);
    double inv = 1.0 / std::sqrt(var / static_cast<double>(n) + eps);
    for (int64_t i = 0; i < n; ++i) p[i] = (p[i] - mean) * inv * scale[is[i]] + (bias.empty() ? 0.0 : bias[ib[i]]);
  }
  std::vector<Tensor> out = {from_values(c, x.dtype(), x.dims(), v)};
  while (out.size() < c.node.num_outputs()) out.emplace_back();  // omitted optional outputs
  return out;
}

// Gelu (20): exact (erf) or tanh-approximated.
std::vector<Tensor> eval_gelu(Ctx& c) {
  const Tensor& x = c.in(0);
  bool tanh_form = c.node.attr_string("approximate", "none") == "tanh";
  std::vector<double> v = values(x);
  for (double& e : v)
    e = tanh_form ? 0.5 * e * (1 + std::tanh(std::sqrt(2 / M_PI) * (e + 0.044715 * e * e * e)))
                  : 0.5 * e * (1 + std::erf(e / std::sqrt(2.0)));
  return {from_values(c, x.dtype(), x.dims(), v)};
}

// [b, h, p, d] and [b, h, s, d] concatenated on axis 2, as doubles.
std::vector<double> concat_seq(const Tensor* past, const Tensor& cur) {
  std::vector<double> pv = past ? values(*past) : std::vector<double>{}, cv = values(cur), r;
  int64_t bh = cur.dims()[0] * cur.dims()[1], p = past ? past->dims()[2] : 0, s = cur.dims()[2], d = cur.dims()[3];
  for (int64_t i = 0; i < bh; ++i) {
    r.insert(r.end(), pv.begin() + i * p * d, pv.begin() + (i + 1) * p * d);
    r.insert(r.end(), cv.begin() + i * s * d, cv.begin() + (i + 1) * s * d);
  }
  return r;
}

// Attention (23), 4-D: the fused op's reference, as the ONNX function computes it (a bool mask and
// causal positions give -inf; a row with every key masked is 0, as ONNX 1.23 defines it). Past keys/values come first and
// offset the causal rows by their length; outputs 1 and 2 are the concatenations. Output 3
// (qk_matmul_output) for modes 0 (scaled Q·Kᵀ) and 3 (softmax weights).
// RotaryEmbedding (opset 23), 4-D input [b, h, s, d]: the first rotary_embedding_dim features of each
// head rotated by cos/sin [b, s, r/2] (or [positions, r/2] indexed by position_ids [b, s]).
std::vector<Tensor> eval_rotary(Ctx& c) {
  const Tensor &x = c.in(0), &cs = c.in(1), &sn = c.in(2);
  const Tensor* pos = c.opt_in(3);
  if (x.rank() != 4 || cs.rank() != (pos ? 2 : 3) || sn.dims() != cs.dims()) throw NotEvaluable{};
  int64_t B = x.dims()[0], H = x.dims()[1], S = x.dims()[2], D = x.dims()[3];
  int64_t R = c.node.attr_int("rotary_embedding_dim", 0), half = (R > 0 ? R : D) / 2;
  bool inter = c.node.attr_int("interleaved", 0) != 0;
  if (cs.dims().back() != half) throw NotEvaluable{};
  std::vector<double> v = values(x), out = v;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < S; ++s) {
        int64_t row = pos ? pos->get_i64(b * S + s) : b * S + s, base = ((b * H + h) * S + s) * D;
        for (int64_t k = 0; k < half; ++k) {
          double co = cs.get_f64(row * half + k), si = sn.get_f64(row * half + k);
          int64_t i1 = base + (inter ? 2 * k : k), i2 = base + (inter ? 2 * k + 1 : k + half);
          out[i1] = co * v[i1] - si * v[i2];
          out[i2] = si * v[i1] + co * v[i2];
        }
      }
  return {from_values(c, x.dtype(), x.dims(), out)};
}

std::vector<Tensor> eval_attention(Ctx& c) {
  const Tensor &q = c.in(0), &k = c.in(1), &v = c.in(2);
  const Tensor *mask = c.opt_in(3), *past_k = c.opt_in(4), *past_v = c.opt_in(5);
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4 || !past_k != !past_v || c.opt_in(6)) throw NotEvaluable{};
  int64_t P = past_k ? past_k->dims()[2] : 0;
  bool want_qk = c.node.num_outputs() > 3 && c.node.output(3);
  int64_t mode = c.node.attr_int("qk_matmul_output_mode", 0);
  if (want_qk && mode != 0 && mode != 3) throw NotEvaluable{};
  // The opset 25 windows are left to the kernel.
  if (c.node.attr_int("left_window_size", -1) >= 0 ||
      c.node.attr_int("right_window_size", -1) >= 0)
    throw NotEvaluable{};
  int64_t B = q.dims()[0], H = q.dims()[1], S = q.dims()[2], D = q.dims()[3];
  int64_t Hk = k.dims()[1], T = P + k.dims()[2], Dv = v.dims()[3];
  if (Hk == 0 || H % Hk != 0) throw NotEvaluable{};
  double scale = c.node.has_attr("scale") ? c.node.attr_float("scale", 1.0f) : 1.0 / std::sqrt(double(D));
  bool causal = c.node.attr_int("is_causal", 0) != 0;
  double softcap = c.node.attr_float("softcap", 0.0f);  // softcap·tanh(scores / softcap), before the mask
  std::vector<double> qv = values(q), kv = concat_seq(past_k, k), vv = concat_seq(past_v, v), mv;
  std::vector<int64_t> mi;
  if (mask) {
    if (mask->dims().empty() || mask->dims().back() != T) throw NotEvaluable{};  // padded masks: not needed
    mv.resize(static_cast<size_t>(mask->numel()));
    for (int64_t i = 0; i < mask->numel(); ++i) mv[i] = mask->get_f64(i);  // bool masks too
    mi = broadcast_index(mask->dims(), {B, H, S, T});
  }
  bool bool_mask = mask && mask->dtype() == DType::Bool;
  std::vector<double> y(static_cast<size_t>(B * H * S * Dv)), qk(want_qk ? static_cast<size_t>(B * H * S * T) : 0);
  std::vector<double> s(static_cast<size_t>(T));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < S; ++i) {
        int64_t hk = h / (H / Hk), row = ((b * H + h) * S + i);
        double mx = -INFINITY, sum = 0;
        for (int64_t t = 0; t < T; ++t) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += qv[row * D + d] * kv[((b * Hk + hk) * T + t) * D + d];
          double x = dot * scale;
          if (want_qk && mode == 0) qk[row * T + t] = x;
          if (softcap > 0) x = softcap * std::tanh(x / softcap);
          if (mask) x = bool_mask ? (mv[mi[row * T + t]] != 0 ? x : -INFINITY) : x + mv[mi[row * T + t]];
          if (causal && t > i + P) x = -INFINITY;
          s[t] = x;
          mx = std::max(mx, x);
        }
        for (double& x : s) sum += x = mx == -INFINITY ? 0.0 : std::exp(x - mx);
        // A fully masked row: every weight 0 (ONNX 1.23), or NaN for a fused Softmax.
        if (sum == 0) sum = c.node.attr_int(kMaskedRowsNan, 0) ? NAN : INFINITY;
        if (want_qk && mode == 3)
          for (int64_t t = 0; t < T; ++t) qk[row * T + t] = s[t] / sum;
        for (int64_t d = 0; d < Dv; ++d) {
          double acc = 0;
          for (int64_t t = 0; t < T; ++t) acc += s[t] / sum * vv[((b * Hk + hk) * T + t) * Dv + d];
          y[row * Dv + d] = acc;
        }
      }
  std::vector<Tensor> out = {from_values(c, q.dtype(), {B, H, S, Dv}, y),
                            from_values(c, k.dtype(), {B, Hk, T, D}, kv), from_values(c, v.dtype(), {B, Hk, T, Dv}, vv)};
  if (want_qk) out.push_back(from_values(c, q.dtype(), {B, H, S, T}, qk));
  return out;
}

}  // namespace

void add_nn_evals(EvalTable& t) {
  t.add("RMSNormalization", eval_layer_norm);
  t.add("Gelu", eval_gelu);
  t.add("MatMul", eval_matmul);
  t.add("Gemm", eval_gemm);
  t.add("Softmax", eval_softmax);
  t.add("LogSoftmax", eval_softmax);
  t.add("LayerNormalization", eval_layer_norm);
  t.add("Attention", eval_attention);
  t.add("RotaryEmbedding", eval_rotary);
}

}  // namespace onnxc::ir::eval_detail
