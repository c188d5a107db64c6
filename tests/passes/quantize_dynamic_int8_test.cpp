// quantize_dynamic_int8 (`--quantize dynamic-int8`): which products become int8 and what the
// rewritten graph holds; the kernel's numbers are tested in tests/codegen/lower_quant_matmul_test.cpp.
#include <gtest/gtest.h>

#include "passes/pipeline.h"
#include "test_util.h"

namespace onnxc::testing {
namespace {

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// A 16×16 weight: column n holds n+1 at k = 0 and 0 elsewhere, so the int8 values are 127 and 0 and
// the scale of column n is (n+1)/127.
std::string weight(const std::string& name, bool transposed) {
  std::string v;
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) {
      int k = transposed ? c : r, n = transposed ? r : c;
      v += (v.empty() ? "" : ", ") + std::to_string(k == 0 ? n + 1 : 0);
    }
  return "      %" + name + " = const f32[16,16] {" + v + "}\n";
}

TEST(QuantizeDynamicInt8, MatMulAndGemmWithConstantWeights) {
  std::string text = "    graph main(%x: f32[m,16]) {\n" + weight("w", false) + weight("wt", true) +
                     "      %c = const f32[16] {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}\n"
                     "      %y: f32[m,16] = MatMul(%x, %w)\n"
                     "      %z: f32[m,16] = Gemm(%y, %wt, %c) {transB=1, beta=2}\n"
                     "      %o: f32[m,16] = Relu(%z)\n"
                     "      return %o\n    }\n";
  std::string out = run_passes(text, {"quantize_dynamic_int8", "infer_shapes", "dce"});
  EXPECT_EQ(2u, [&] {
    size_t c = 0;
    for (size_t p = out.find("onnxc.DynamicQuantMatMul("); p != std::string::npos;
         p = out.find("onnxc.DynamicQuantMatMul(", p + 1))
      ++c;
    return c;
  }()) << out;
  EXPECT_TRUE(has(out, "%w/int8 = const i8[16,16]")) << out;
  EXPECT_TRUE(has(out, "%wt/int8 = const i8[16,16]")) << out;  // transB: quantized as [K, N]
  EXPECT_TRUE(has(out, "= Add(%z/int8, %c/scaled)")) << out;    // beta folded into the bias
  EXPECT_FALSE(has(out, "= MatMul(")) << out;
  // W and the transposed Wt hold the same matrix: the same int8 bytes and scales.
  auto hash_of = [&](const std::string& name) {
    size_t p = out.find("%" + name + " = const");
    return p == std::string::npos ? std::string() : out.substr(out.find('#', p), 17);
  };
  EXPECT_EQ(hash_of("w/int8"), hash_of("wt/int8")) << out;
  EXPECT_EQ(hash_of("w/int8_scale"), hash_of("wt/int8_scale")) << out;
  EXPECT_FALSE(has(out, "Gemm(")) << out;
}

TEST(QuantizeDynamicInt8, NearMissesStayFloat) {
  // A run-time weight, a weight holding NaN, a 3-D activation, a too-small K, and a product that is
  // a graph output (its name is the user's) are left as written.
  std::string nan_w = weight("wn", false);
  nan_w.replace(nan_w.find("{1,"), 3, "{nan,");
  std::string text = "    graph main(%x: f32[m,16], %v: f32[16,16], %x3: f32[b,m,16], %s: f32[m,8]) {\n" +
                     weight("w", false) + nan_w +
                     "      %small = const f32[8,16] {" + std::string(
                         "0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "
                         "0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "
                         "0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "
                         "0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0") +
                     "}\n"
                     "      %a: f32[m,16] = MatMul(%x, %v)\n"
                     "      %b: f32[m,16] = MatMul(%x, %wn)\n"
                     "      %c: f32[b,m,16] = MatMul(%x3, %w)\n"
                     "      %d: f32[m,16] = MatMul(%s, %small)\n"
                     "      %e: f32[m,16] = MatMul(%x, %w)\n"
                     "      %f: f32[m,16] = Add(%a, %b)\n"
                     "      %g: f32[m,16] = Add(%f, %d)\n"
                     "      return %g, %c, %e\n    }\n";
  std::string out = run_passes(text, {"quantize_dynamic_int8", "infer_shapes", "dce"});
  EXPECT_FALSE(has(out, "DynamicQuantMatMul")) << out;
  EXPECT_EQ(out, run_passes(text, {"infer_shapes", "dce"}));
}

TEST(QuantizeDynamicInt8, AttentionContextGetsWideRows) {
  // The heads' contexts (softmax·V, seen through a Transpose and a Reshape) feed the output
  // projection, which gets an int16 weight and wide_rows = 1; the projection of the plain input
  // beside it gets the int8 form.
  std::string text = "    graph main(%x: f32[m,16], %s: f32[2,m,m], %v: f32[2,m,8]) {\n" + weight("w", false) +
                     weight("wo", false) +
                     "      %shape = const i64[2] {-1, 16}\n"
                     "      %p: f32[2,m,m] = Softmax(%s) {axis=-1}\n"
                     "      %ctx: f32[2,m,8] = MatMul(%p, %v)\n"
                     "      %t: f32[m,2,8] = Transpose(%ctx) {perm=[1, 0, 2]}\n"
                     "      %rows: f32[m,16] = Reshape(%t, %shape)\n"
                     "      %out: f32[m,16] = MatMul(%rows, %wo)\n"
                     "      %in: f32[m,16] = MatMul(%x, %w)\n"
                     "      %sum: f32[m,16] = Add(%out, %in)\n"
                     "      return %sum\n    }\n";
  std::string out = run_passes(text, {"quantize_dynamic_int8", "infer_shapes", "dce"});
  EXPECT_FALSE(has(out, "= MatMul(%rows, %wo)")) << out;
  // K = 16: the weight's integers reach floor(sqrt(2^31 / 16)) = 11585.
  EXPECT_TRUE(has(out, "onnxc.DynamicQuantMatMul(%rows, %wo/int16, %wo/int8_scale) {wide_rows=1}")) << out;
  EXPECT_TRUE(has(out, "%wo/int16 = const i16[16,16]")) << out;
  EXPECT_TRUE(has(out, "onnxc.DynamicQuantMatMul(%x, %w/int8, %w/int8_scale)\n")) << out;
}

// Where the target's kernel multiplies int16 pairs (tools/build.cpp sets the pass option for AVX2
// targets) every product takes the wide form, not only the attention output's.
TEST(QuantizeDynamicInt8, Int16PairTargetsWidenEveryProduct) {
  std::string text = "    graph main(%x: f32[m,16]) {\n" + weight("w", false) + weight("wt", true) +
                     "      %c = const f32[16] {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}\n"
                     "      %y: f32[m,16] = MatMul(%x, %w)\n"
                     "      %z: f32[m,16] = Gemm(%y, %wt, %c) {transB=1}\n"
                     "      %o: f32[m,16] = Relu(%z)\n"
                     "      return %o\n    }\n";
  ir::Model m = parse_model(dedent(text));
  passes::PipelineOptions po;
  po.pass_options["quantize_dynamic_int8.int16_pairs"] = "1";
  passes::run_pipeline(m, {"infer_shapes", "quantize_dynamic_int8", "infer_shapes", "dce"}, po);
  std::string out = ir::to_string(*m.graph);
  EXPECT_TRUE(has(out, "onnxc.DynamicQuantMatMul(%x, %w/int16, %w/int8_scale) {wide_rows=1}")) << out;
  EXPECT_TRUE(has(out, "onnxc.DynamicQuantMatMul(%y/int8, %wt/int16, %wt/int8_scale) {wide_rows=1}")) << out;
  // Column n holds n + 1 at k = 0: its integer is floor(sqrt(2^31 / 16)) = 11585 whatever n is.
  const ir::Value* qw = m.graph->find_value("w/int16");
  ASSERT_TRUE(qw && qw->is_constant());
  const auto* q = static_cast<const int16_t*>(qw->constant().raw());
  for (int n = 0; n < 16; ++n) EXPECT_EQ(q[n], 11585) << n;
  EXPECT_EQ(q[16], 0);
  EXPECT_FALSE(has(out, "/int8 = const")) << out;
  // Without the option the same graph keeps the int8 form (MatMulAndGemmWithConstantWeights).
  EXPECT_FALSE(has(run_passes(text, {"infer_shapes", "quantize_dynamic_int8", "dce"}), "wide_rows"));
}

// A 16×16 weight of small values, ((7k + 3n) mod 17 - 8) / 10, that int8 holds to ~0.3% (scale
// 0.8 / 127 per column); with `outlier` row 0 holds 50 instead, so the column's scale is 50 / 127
// and the small values keep 0 to 2 levels (~3% of the matrix's norm lost).
std::string graded_weight(const std::string& name, bool outlier) {
  std::string v;
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 16; ++n) {
      const int x = (7 * k + 3 * n) % 17 - 8;
      v += (v.empty() ? "" : ", ") + (outlier && k == 0 ? std::string("50") : std::to_string(x / 10.0));
    }
  return "      %" + name + " = const f32[16,16] {" + v + "}\n";
}

// Two products of the same size, one weight outlier-heavy: with a budget of half the products'
// multiply-adds the one whose int8 weight loses more takes the wide form, whichever comes first;
// with the default budget (a quarter) neither fits.
TEST(QuantizeDynamicInt8, WorstWeightErrorGoesWideWithinBudget) {
  for (bool first_outlier : {true, false}) {
    std::string text = "    graph main(%x: f32[m,16]) {\n" + graded_weight("wa", first_outlier) +
                       graded_weight("wb", !first_outlier) +
                       "      %ya: f32[m,16] = MatMul(%x, %wa)\n"
                       "      %yb: f32[m,16] = MatMul(%ya, %wb)\n"
                       "      %o: f32[m,16] = Relu(%yb)\n"
                       "      return %o\n    }\n";
    auto quantize = [&](const char* budget) {
      ir::Model m = parse_model(dedent(text));
      passes::PipelineOptions po;
      if (budget) po.pass_options["quantize_dynamic_int8.wide_budget"] = budget;
      passes::run_pipeline(m, {"infer_shapes", "quantize_dynamic_int8", "infer_shapes", "dce"}, po);
      return ir::to_string(*m.graph);
    };
    const std::string out = quantize("0.5");
    const std::string wide = first_outlier ? "%x, %wa" : "%ya/int8, %wb";
    const std::string narrow = first_outlier ? "%ya/int8, %wb" : "%x, %wa";
    const std::string wn = first_outlier ? "wa" : "wb", nn = first_outlier ? "wb" : "wa";
    EXPECT_TRUE(has(out, "onnxc.DynamicQuantMatMul(" + wide + "/int16, %" + wn + "/int8_scale) {wide_rows=1}")) << out;
    EXPECT_TRUE(has(out, "onnxc.DynamicQuantMatMul(" + narrow + "/int8, %" + nn + "/int8_scale)\n")) << out;
    EXPECT_FALSE(has(quantize(nullptr), "wide_rows")) << quantize(nullptr);
    // Budget 1: both go wide.
    const std::string all = quantize("1");
    EXPECT_TRUE(has(all, "%wa/int16 = const i16[16,16]") && has(all, "%wb/int16 = const i16[16,16]")) << all;
  }
}

}  // namespace
}  // namespace onnxc::testing
