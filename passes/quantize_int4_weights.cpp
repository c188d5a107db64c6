// Weight-only int4 quantization of constant-weight products (see quantize_int4_weights.h).
#include "passes/quantize_int4_weights.h"

#include <algorithm>
#include <cmath>

#include "passes/matmul_nbits.h"
#include "passes/rewrite.h"

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
  const bool gemm = n->op_type() == "Gemm";
  if (!n->domain().empty() || (!gemm && n->op_type() != "MatMul") || n->num_inputs() < 2) return false;
  ir::Value *a = n->input(0), *w = n->input(1);
  const ir::Shape* as = shape_of(a);
  if (!as || as->size() < 2 || a->dtype() != ir::DType::Float32 || !w->is_constant() ||
      w->dtype() != ir::DType::Float32 || w->constant().rank() != 2 || !all_finite(w->constant()))
    return false;
  bool trans_b = false;
  ir::Value* bias = nullptr;
  if (gemm) {
    if (n->attr_int("transA", 0) != 0 || n->attr_float("alpha", 1.0f) != 1.0f) return false;
    trans_b = n->attr_int("transB", 0) != 0;
    if (n->num_inputs() > 2 && n->input(2)) {
      bias = n->input(2);
      if (!bias->is_constant() || bias->dtype() != ir::DType::Float32) return false;
      const ir::Tensor& c = bias->constant();
      const int64_t cols = trans_b ? w->constant().dims()[0] : w->constant().dims()[1];
      if (c.numel() != cols || (c.rank() == 2 && c.dims()[0] != 1) || c.rank() > 2) return false;  // a [N] bias
      ir::Tensor row(ir::DType::Float32, {cols});
      const float beta = n->attr_float("beta", 1.0f);
      for (int64_t i = 0; i < cols; ++i) row.mutable_data<float>()[i] = beta * c.data<float>()[i];
      bias = g.add_initializer(g.unique_name(bias->name() + "/bias"), std::move(row));
    }
  }
  const auto& wd = w->constant().dims();
  const int64_t k_ext = trans_b ? wd[1] : wd[0], n_ext = trans_b ? wd[0] : wd[1];
  if (k_ext < kMinDim || n_ext < kMinDim) return false;
  BlockQuantWeight q = quantize_weight(w->constant(), trans_b, opt);
  std::vector<ir::Value*> in = matmul_nbits_inputs(g, a, q, bias, w->name() + "/int4");
  ir::Node* mm = replace_node(*n, "MatMulNBits", in, kMicrosoftDomain);
  for (ir::Attribute& at : matmul_nbits_attrs(q)) mm->set_attr(std::move(at));
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
    return quantize_int4_weights(m, opt);
  }
};

}  // namespace

bool quantize_int4_weights(ir::Model& model, const Int4Options& opt) { return quantize_in(*model.graph, opt); }

std::unique_ptr<Pass> make_quantize_int4_weights_pass() { return std::make_unique<QuantizeInt4Pass>(); }

}  // namespace onnxc::passes
