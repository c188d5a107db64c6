// Weight-only int4 quantization of constant-weight products (see quantize_int4_weights.h).
#include "passes/quantize_int4_weights.h"

#include <algorithm>
#include <cmath>

#include "passes/fusion.h"
#include "passes/matmul_nbits.h"
#include "passes/rewrite.h"
#include "passes/weight_product.h"

namespace onnxc::passes {
namespace {

constexpr int64_t kMinDim = 16;  // smaller products are not worth quantizing

// One block of weights w[0..count) -> codes, its scale and zero point.
void quantize_block(const float* w, int64_t count, int64_t stride, bool symmetric, uint8_t* codes, float& scale,
                    uint8_t& zero) {
  float lo = 0, hi = 0, amax = 0;
  for (int64_t i = 0; i < count; ++i) {
    float x = w[i * stride];
    lo = std::min(lo, x), hi = std::max(hi, x), amax = std::max(amax, std::fabs(x));
  }
  float z = 8, qmin = 1, qmax = 15;
  if (symmetric) {
    scale = amax / 7.0f;
  } else {
    scale = (hi - lo) / 15.0f;
    qmin = 0;
    z = scale > 0 ? std::clamp(std::nearbyint(-lo / scale), 0.0f, 15.0f) : 0.0f;
  }
  zero = static_cast<uint8_t>(z);
  for (int64_t i = 0; i < count; ++i) {
    float q = scale > 0 ? std::nearbyint(w[i * stride] / scale) + z : z;
    codes[i] = static_cast<uint8_t>(std::clamp(q, qmin, qmax));
  }
}

bool all_finite(const ir::Tensor& t) {
  const float* v = t.data<float>();
  return std::all_of(v, v + t.numel(), [](float x) { return std::isfinite(x); });
}

// W (K×N, or N×K when transposed) as MatMulNBits' weight.
BlockQuantWeight quantize_weight(const ir::Tensor& wt, bool transposed, const Int4Options& opt) {
  BlockQuantWeight w;
  w.bits = 4;
  w.block = opt.block;
  w.k = transposed ? wt.dims()[1] : wt.dims()[0];
  w.n = transposed ? wt.dims()[0] : wt.dims()[1];
  const int64_t kb = w.k_blocks();
  w.codes.resize(w.n * w.k);
  w.scales.resize(w.n * kb);
  std::vector<uint8_t> zeros(w.n * kb);
  const float* src = wt.data<float>();
  for (int64_t n = 0; n < w.n; ++n)
    for (int64_t b = 0; b < kb; ++b) {
      const int64_t k0 = b * w.block, count = std::min(w.block, w.k - k0);
      const float* first = transposed ? src + n * w.k + k0 : src + k0 * w.n + n;
      quantize_block(first, count, transposed ? 1 : w.n, opt.symmetric, &w.codes[n * w.k + k0], w.scales[n * kb + b],
                     zeros[n * kb + b]);
    }
  if (!opt.symmetric) w.zero_points = std::move(zeros);
  return w;
}

bool quantize_node(ir::Graph& g, ir::Node* n, const Int4Options& opt) {
  std::optional<WeightProduct> p = match_weight_product(*n, kMinDim);
  const ir::Shape* as = p ? shape_of(p->a) : nullptr;
  if (!as || as->size() < 2 || !all_finite(p->w->constant())) return false;
  ir::Value* bias = nullptr;
  if (p->bias) {
    const ir::Tensor& c = p->bias->constant();
    if (c.numel() != p->n || (c.rank() == 2 && c.dims()[0] != 1) || c.rank() > 2) return false;  // a [N] bias
    bias = scaled_bias(g, *p, {p->n});
  }
  BlockQuantWeight q = quantize_weight(p->w->constant(), p->trans_b, opt);
  std::vector<ir::Value*> in = matmul_nbits_inputs(g, p->a, q, bias, p->w->name() + "/int4");
  ir::Node* mm = replace_node(*n, "MatMulNBits", in, kMicrosoftDomain);
  for (ir::Attribute& at : matmul_nbits_attrs(q)) mm->set_attr(std::move(at));
  if (opt.accuracy_level != 0) mm->set_attr(RewriteBuilder::attr("accuracy_level", opt.accuracy_level));
  return true;
}

bool quantize_in(ir::Graph& g, const Int4Options& opt) {
  bool changed = false;
  for (ir::Node* n : g.nodes()) {
    for (ir::Graph* sg : n->subgraphs()) changed |= quantize_in(*sg, opt);
    changed |= quantize_node(g, n, opt);
  }
  return changed;
}

class QuantizeInt4Pass : public Pass {
 public:
  bool run(ir::Model& m) override { return quantize_int4_weights(m, Int4Options{}); }
  bool run(ir::Model& m, PassContext& ctx) override {
    Int4Options opt;
    if (auto it = ctx.options.find("quantize_int4_weights.block"); it != ctx.options.end()) opt.block = std::stoll(it->second);
    opt.symmetric = ctx.options.count("quantize_int4_weights.symmetric") > 0;
    if (auto it = ctx.options.find("quantize_int4_weights.accuracy_level"); it != ctx.options.end())
      opt.accuracy_level = std::stoll(it->second);
    return quantize_int4_weights(m, opt);
  }
};

}  // namespace

bool quantize_int4_weights(ir::Model& model, const Int4Options& opt) { return quantize_in(*model.graph, opt); }

std::unique_ptr<Pass> make_quantize_int4_weights_pass() { return std::make_unique<QuantizeInt4Pass>(); }

}  // namespace onnxc::passes
