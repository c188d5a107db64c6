// fuse_dequantize_matmul: a MatMul by a block-dequantized constant weight -> com.microsoft.MatMulNBits,
// so the weight stays packed and is dequantized in registers (codegen/lower/quant_nbits.cpp) instead
// of being expanded into a float copy.
//
//   q [K, N] int4|uint4|int8|uint8 (constant) ─┐
//   scale [ceil(K/block), N] f32 (constant) ───┼─▶ DequantizeLinear(axis 0, block_size) ─▶ W
//   [zero point, like scale, q's type] ────────┘
//   A [.., K] f32 ─────────────────────────────────────────────────────────────────────▶ MatMul(A, W)
//
// What ONNX Runtime's and Olive's QDQ int4 export writes. MatMulNBits codes are unsigned: a signed q
// becomes q + 2^(bits-1) with its zero point shifted by the same amount, which leaves every
// (q - zero) and so every dequantized weight unchanged. Other layouts (blocks along N, a scale per
// tensor or per column, block sizes MatMulNBits lacks) are left to DequantizeLinear and MatMul.
#include "passes/fuse_dequantize_matmul.h"

#include "passes/matmul_nbits.h"

namespace onnxc::passes {
namespace {

using namespace pat;

int code_bits(ir::DType t) {
  switch (t) {
    case ir::DType::Int4: case ir::DType::UInt4: return 4;
    case ir::DType::Int8: case ir::DType::UInt8: return 8;
    default: return 0;
  }
}

std::string check(const Match& m, const FusionContext&) {
  const ir::Node* dq = m.node("dq");
  const ir::Tensor& q = m["q"]->constant();
  const ir::Tensor& s = m["scale"]->constant();
  const ir::Value* a = m["a"];
  if (!code_bits(q.dtype())) return "the weight is not int4, uint4, int8 or uint8";
  if (q.rank() != 2) return "the quantized weight is not a matrix";
  if (a->dtype() != ir::DType::Float32 || !a->shape() || a->shape()->size() < 2)
    return "A is not a float32 tensor of rank 2 or more";
  const int64_t block = dq->attr_int("block_size", 0);
  if (block == 0) return "the scale is not blocked (block_size 0)";
  if (block < 16 || (block & (block - 1)) != 0) return "block_size is not a power of two of at least 16";
  int64_t axis = dq->attr_int("axis", 1);
  if (axis != 0 && axis != -2) return "the blocks do not run along K (axis is not 0)";
  const int64_t k = q.dims()[0], n = q.dims()[1];
  if (s.dtype() != ir::DType::Float32 || s.dims() != std::vector<int64_t>{(k + block - 1) / block, n})
    return "the scale is not float32 [ceil(K / block_size), N]";
  if (m.has("zp") && m["zp"]) {
    const ir::Tensor& z = m["zp"]->constant();
    if (z.dtype() != q.dtype() || z.dims() != s.dims()) return "the zero point is not shaped like the scale";
  }
  return "";
}

void rewrite(const Match& m, RewriteBuilder& b) {
  const ir::Tensor& q = m["q"]->constant();
  const ir::Tensor& s = m["scale"]->constant();
  const ir::Tensor* z = m.has("zp") && m["zp"] ? &m["zp"]->constant() : nullptr;
  BlockQuantWeight w;
  w.bits = code_bits(q.dtype());
  w.block = m.node("dq")->attr_int("block_size", 0);
  w.k = q.dims()[0];
  w.n = q.dims()[1];
  const int64_t kb = w.k_blocks();
  const int shift = ir::dtype_is_signed(q.dtype()) ? 1 << (w.bits - 1) : 0;  // signed codes become unsigned
  const auto* qv = static_cast<const uint8_t*>(q.raw());  // one element per byte (sub-byte types unpacked)
  w.codes.resize(w.n * w.k);
  for (int64_t kk = 0; kk < w.k; ++kk)
    for (int64_t nn = 0; nn < w.n; ++nn)
      w.codes[nn * w.k + kk] = static_cast<uint8_t>(shift ? static_cast<int8_t>(qv[kk * w.n + nn]) + shift : qv[kk * w.n + nn]);
  w.scales.resize(w.n * kb);
  for (int64_t bb = 0; bb < kb; ++bb)
    for (int64_t nn = 0; nn < w.n; ++nn) w.scales[nn * kb + bb] = s.data<float>()[bb * w.n + nn];
  // ONNX's default zero point is 0; MatMulNBits' is 2^(bits-1), which is 0 shifted for signed codes.
  if (z || !shift) {
    const auto* zv = z ? static_cast<const uint8_t*>(z->raw()) : nullptr;
    w.zero_points.resize(w.n * kb);
    for (int64_t bb = 0; bb < kb; ++bb)
      for (int64_t nn = 0; nn < w.n; ++nn) {
        int v = zv ? (shift ? static_cast<int8_t>(zv[bb * w.n + nn]) : zv[bb * w.n + nn]) : 0;
        w.zero_points[nn * kb + bb] = static_cast<uint8_t>(v + shift);
      }
  }
  b.replace({m.root()}, "MatMulNBits", matmul_nbits_inputs(b.graph(), m["a"], w, nullptr, m["q"]->name()),
            matmul_nbits_attrs(w), kMicrosoftDomain);
}

}  // namespace

std::vector<FusionRule> dequantize_matmul_rules() {
  Pattern dq = op("DequantizeLinear", {any().constant().capture("q"), any().constant().capture("scale"),
                                       optional(any().constant().capture("zp"))})
                   .capture("dq");
  return {{"dequantize_matmul", "dequantize_matmul", op("MatMul", {any().capture("a"), dq}).commutative(false), check,
           rewrite}};
}

}  // namespace onnxc::passes
