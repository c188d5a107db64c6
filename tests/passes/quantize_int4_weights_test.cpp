// The int4 weight passes: fuse_dequantize_matmul (a MatMul by a blocked DequantizeLinear of a
// constant weight -> com.microsoft.MatMulNBits) and quantize_int4_weights (`--quantize int4-weights`).
// What the rewritten graph holds; the kernel's numbers are tested in
// tests/codegen/lower_quant_nbits_test.cpp and against ONNX Runtime in tests/python/check_nbits_ort.py.
#include <gtest/gtest.h>

#include <functional>
#include <tuple>

#include "passes/quantize_int4_weights.h"
#include "test_util.h"

namespace onnxc::testing {
namespace {

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

size_t count(const std::string& text, const std::string& what) {
  size_t c = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++c;
  return c;
}

// "%name = const TYPE[dims] {v0, v1, ...}" with v(i) for element i.
std::string constant(const std::string& name, const std::string& type, const std::vector<int64_t>& dims,
                     const std::function<double(int64_t)>& v) {
  int64_t n = 1;
  std::string d;
  for (int64_t x : dims) n *= x, d += (d.empty() ? "" : ",") + std::to_string(x);
  std::string s;
  for (int64_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v(i));
  return "      %" + name + " = const " + type + "[" + d + "] {" + s + "}\n";
}

std::string dq_matmul(const std::string& q_type, const std::string& dq_attrs, bool zero_point, int64_t k = 64) {
  std::string text = "    graph main(%x: f32[m," + std::to_string(k) + "]) {\n";
  const double shift = q_type[0] == 'u' ? 0 : 3;  // unsigned codes stay non-negative
  text += constant("q", q_type, {k, 16}, [&](int64_t i) { return double(i % 7) - shift; });
  text += constant("s", "f32", {k / 32, 16}, [](int64_t i) { return 0.5 + 0.25 * double(i % 3); });
  if (zero_point) text += constant("z", q_type, {k / 32, 16}, [&](int64_t i) { return double(i % 3) - shift / 3; });
  text += "      %w: f32[" + std::to_string(k) + ",16] = DequantizeLinear(%q, %s" + (zero_point ? ", %z" : "") + ") {" +
          dq_attrs + "}\n";
  text += "      %y: f32[m,16] = MatMul(%x, %w)\n      return %y\n    }\n";
  return text;
}

TEST(FuseDequantizeMatMul, BlockedInt4AndUint8WeightsBecomeMatMulNBits) {
  for (auto [type, zp, bits] : {std::tuple{"i4", true, 4}, std::tuple{"u4", false, 4}, std::tuple{"i8", false, 8},
                                std::tuple{"u8", true, 8}}) {
    SCOPED_TRACE(type);
    std::string out = run_passes(dq_matmul(type, "axis=0, block_size=32", zp), {"fuse_dequantize_matmul", "dce"});
    EXPECT_EQ(1u, count(out, "com.microsoft.MatMulNBits(")) << out;
    EXPECT_TRUE(has(out, "bits=" + std::to_string(bits))) << out;
    EXPECT_TRUE(has(out, "block_size=32")) << out;
    EXPECT_TRUE(has(out, "K=64") && has(out, "N=16")) << out;
    EXPECT_TRUE(has(out, "return %y")) << out;  // the output keeps its name
    EXPECT_FALSE(has(out, "DequantizeLinear")) << out;
    // Signed codes without a zero point need none (MatMulNBits' default is the shifted 0); every
    // other form writes its zero points.
    EXPECT_EQ(std::string(type) != "i8", has(out, "nbits_zero_points")) << out;
  }
}

TEST(FuseDequantizeMatMul, OtherLayoutsStayAsWritten) {
  // Blocks along N (axis 1), a per-column scale (no block_size), and a block size MatMulNBits lacks.
  std::string along_n = "    graph main(%x: f32[m,16]) {\n" +
                        constant("q", "i4", {16, 64}, [](int64_t i) { return double(i % 7) - 3; }) +
                        constant("s", "f32", {16, 2}, [](int64_t) { return 0.5; }) +
                        "      %w: f32[16,64] = DequantizeLinear(%q, %s) {axis=1, block_size=32}\n"
                        "      %y: f32[m,64] = MatMul(%x, %w)\n      return %y\n    }\n";
  std::string block24 = dq_matmul("i4", "axis=0, block_size=24", false, 48);
  for (const std::string& text : {along_n, block24}) {
    std::string out = run_passes(text, {"fuse_dequantize_matmul", "dce"});
    EXPECT_FALSE(has(out, "MatMulNBits")) << out;
    EXPECT_EQ(out, canonical(text));
  }
}

// A 40×16 weight (K = 40: a partial last block of 8 at block 32) in a MatMul, its transpose in a Gemm
// with a bias, and a product too small to quantize.
std::string float_model() {
  auto w = [](int64_t i) { return 0.01 * double((i * 37) % 101) - 0.5; };
  return "    graph main(%x: f32[m,40]) {\n" + constant("w", "f32", {40, 16}, w) + constant("wt", "f32", {16, 40}, w) +
         constant("c", "f32", {16}, [](int64_t i) { return 0.1 * double(i); }) +
         constant("small", "f32", {40, 8}, w) +
         "      %y: f32[m,16] = MatMul(%x, %w)\n"
         "      %z: f32[m,16] = Gemm(%x, %wt, %c) {transB=1}\n"
         "      %s: f32[m,8] = MatMul(%x, %small)\n"
         "      %o: f32[m,16] = Add(%y, %z)\n"
         "      return %o, %z, %s\n    }\n";
}

TEST(QuantizeInt4Weights, MatMulAndGemmBecomeMatMulNBits) {
  std::string out = run_passes(float_model(), {"quantize_int4_weights", "infer_shapes", "dce"});
  EXPECT_EQ(2u, count(out, "com.microsoft.MatMulNBits(")) << out;
  EXPECT_TRUE(has(out, "%z: f32[m,16] = com.microsoft.MatMulNBits(")) << out;  // a graph output keeps its name
  EXPECT_TRUE(has(out, "= MatMul(%x, %small)")) << out;                         // N = 8: left float
  EXPECT_FALSE(has(out, "Gemm(")) << out;
  EXPECT_EQ(2u, count(out, "nbits_zero_points = const u8[16]")) << out;  // asymmetric: 2 blocks a column, packed
  EXPECT_TRUE(has(out, "nbits_B = const u8[16,2,16]")) << out;          // [N, k_blocks, 32 / 2]
  EXPECT_TRUE(has(out, ", %c)")) << out;  // Gemm's C ([N], beta 1) read as MatMulNBits' bias as it is
}

TEST(QuantizeInt4Weights, SymmetricBlocksWriteNoZeroPoints) {
  ir::Model m = parse_model(dedent(float_model()));
  passes::Int4Options opt;
  opt.block = 16;
  opt.symmetric = true;
  EXPECT_TRUE(passes::quantize_int4_weights(m, opt));
  std::string out = ir::to_string(*m.graph);
  EXPECT_FALSE(has(out, "nbits_zero_points")) << out;
  EXPECT_TRUE(has(out, "nbits_B = const u8[16,3,8]")) << out;  // K 40 in blocks of 16: 3 blocks of 8 bytes
  EXPECT_TRUE(has(out, "block_size=16")) << out;
}

// `--quantize int4-weights:acc=int8` asks for accuracy_level 4 (int8 activations); by default none is
// written (ONNX Runtime's default, 0: float32 products).
TEST(QuantizeInt4Weights, AccuracyLevelIsWrittenOnlyWhenAsked) {
  ir::Model m = parse_model(dedent(float_model()));
  EXPECT_TRUE(passes::quantize_int4_weights(m, passes::Int4Options{}));
  EXPECT_FALSE(has(ir::to_string(*m.graph), "accuracy_level")) << ir::to_string(*m.graph);
  ir::Model m4 = parse_model(dedent(float_model()));
  passes::Int4Options opt;
  opt.accuracy_level = 4;
  EXPECT_TRUE(passes::quantize_int4_weights(m4, opt));
  EXPECT_TRUE(has(ir::to_string(*m4.graph), "accuracy_level=4")) << ir::to_string(*m4.graph);
}

}  // namespace
}  // namespace onnxc::testing
