// Packing a block-quantized weight into MatMulNBits' inputs (see matmul_nbits.h).
#include "passes/matmul_nbits.h"

#include "ir/error.h"
#include "passes/fusion.h"

namespace onnxc::passes {

std::vector<ir::Value*> matmul_nbits_inputs(ir::Graph& g, ir::Value* a, const BlockQuantWeight& w, ir::Value* bias,
                                            const std::string& base) {
  const int64_t kb = w.k_blocks(), blob = w.block * w.bits / 8, per_byte = 8 / w.bits;
  internal_check(static_cast<int64_t>(w.codes.size()) == w.n * w.k && static_cast<int64_t>(w.scales.size()) == w.n * kb)
      << "block-quantized weight of the wrong size";
  const bool zp = !w.zero_points.empty();
  auto zero_of = [&](int64_t n, int64_t b) { return zp ? w.zero_points[n * kb + b] : 1 << (w.bits - 1); };

  ir::Tensor packed(ir::DType::UInt8, {w.n, kb, blob});
  auto* pb = packed.mutable_data<uint8_t>();
  for (int64_t n = 0; n < w.n; ++n)
    for (int64_t k = 0; k < kb * w.block; ++k) {
      unsigned code = k < w.k ? w.codes[n * w.k + k] : zero_of(n, k / w.block);  // padding dequantizes to 0
      pb[n * kb * blob + k / per_byte] |= static_cast<uint8_t>(code << ((k % per_byte) * w.bits));
    }
  ir::Tensor scales(ir::DType::Float32, {w.n * kb});
  std::copy(w.scales.begin(), w.scales.end(), scales.mutable_data<float>());

  std::vector<ir::Value*> in = {a, g.add_initializer(g.unique_name(base + "/nbits_B"), std::move(packed)),
                                g.add_initializer(g.unique_name(base + "/nbits_scales"), std::move(scales))};
  if (zp) {
    const int64_t row = (kb * w.bits + 7) / 8;
    ir::Tensor z(ir::DType::UInt8, {w.n * row});
    auto* pz = z.mutable_data<uint8_t>();
    for (int64_t n = 0; n < w.n; ++n)
      for (int64_t b = 0; b < kb; ++b)
        pz[n * row + b / per_byte] |= static_cast<uint8_t>(w.zero_points[n * kb + b] << ((b % per_byte) * w.bits));
    in.push_back(g.add_initializer(g.unique_name(base + "/nbits_zero_points"), std::move(z)));
  }
  if (bias) {
    while (in.size() < 5) in.push_back(nullptr);  // zero_points and g_idx omitted
    in.push_back(bias);
  }
  return in;
}

std::vector<ir::Attribute> matmul_nbits_attrs(const BlockQuantWeight& w) {
  return {RewriteBuilder::attr("K", w.k), RewriteBuilder::attr("N", w.n), RewriteBuilder::attr("bits", int64_t{w.bits}),
          RewriteBuilder::attr("block_size", w.block)};
}

}  // namespace onnxc::passes
