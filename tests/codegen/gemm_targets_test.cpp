// GEMM schedules sized from the target description (codegen/schedule/target_desc.h): the register blocks
// each ISA gets, and the products and their epilogues compiled for every ISA this machine can run,
// checked against a double-precision reference (a block sized for AVX-512 must not be what AVX2 code
// gets, and an AVX2 block must compute the same values).
#include <gtest/gtest.h>

#include "codegen/schedule/gemm.h"
#include "codegen/schedule/gemm_int8.h"
#include "codegen/target.h"
#include "gemm_harness.h"
#include "runnable_targets.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace onnxc::codegen::testing {
namespace {

TargetDesc desc(const char* name) { return codegen::describe(parse_target(name)); }

TEST(TargetDesc, DescribesEachIsaFromItsTargetString) {
  TargetDesc avx512 = desc("x86-64-avx512"), avx2 = desc("x86-64-avx2"), neon = desc("arm64");
  EXPECT_EQ(avx512.isa, "avx512");
  EXPECT_EQ(avx512.f32_lanes(), 16);
  EXPECT_EQ(avx512.vector_registers, 32);
  EXPECT_EQ(avx2.isa, "avx2");
  EXPECT_EQ(avx2.f32_lanes(), 8);
  EXPECT_EQ(avx2.vector_registers, 16);
  EXPECT_TRUE(avx2.fma);
  EXPECT_EQ(avx2.int8_dot, Int8Dot::Int16Pairs);
  EXPECT_EQ(neon.isa, "neon");
  EXPECT_EQ(neon.f32_lanes(), 4);
  EXPECT_EQ(neon.int8_dot, Int8Dot::None);
  EXPECT_EQ(desc("arm64-dotprod").int8_dot, Int8Dot::ArmSdot);
  EXPECT_TRUE(desc("cuda").gpu);
}

// Every block fits the ISA's accumulator registers; N a multiple of every width gets the widest
// intensity (three vectors).
TEST(TargetDesc, GemmBlocksFitTheRegisters) {
  for (const char* name : {"x86-64-avx512", "x86-64-avx2", "arm64", "arm64-dotprod"}) {
    TargetDesc d = desc(name);
    for (int64_t n : {16, 24, 47, 64, 100, 768, 2304, 3072}) {
      for (int64_t m : {0, -1, 1, 7, 120, 128}) {
        PanelShape p = choose_panel(n, d, 4096, m);
        EXPECT_EQ(p.width % d.f32_lanes(), 0) << name << " n=" << n << " m=" << m;
        EXPECT_GE(p.rows, 1) << name << " n=" << n << " m=" << m;
        EXPECT_LE(p.rows * (p.width / d.f32_lanes()), d.accumulator_budget()) << name << " n=" << n << " m=" << m;
      }
    }
    Int8Block b = int8_block(d);
    const int vecs = b.width / d.f32_lanes();
    // Accumulators, one vector per column group, the broadcast row value, and with int16 pairs one
    // product in flight and one spare.
    EXPECT_LE(b.rows * vecs + vecs + (b.k_group == 2 ? 3 : 1), d.vector_registers) << name;
  }
  EXPECT_EQ(choose_panel(768, desc("x86-64-avx512")).width, 48);
  EXPECT_EQ(choose_panel(768, desc("x86-64-avx512")).rows, 8);
  EXPECT_EQ(choose_panel(768, desc("x86-64-avx2")).width, 24);
  EXPECT_EQ(choose_panel(768, desc("x86-64-avx2")).rows, 4);
  EXPECT_EQ(choose_panel(768, desc("arm64")).width, 12);
  EXPECT_EQ(choose_panel(768, desc("arm64")).rows, 8);
  // BERT's projections (static M = 128) keep their 48 x 8 block.
  EXPECT_EQ(choose_panel(768, desc("x86-64-avx512"), 768, 128).width, 48);
  EXPECT_EQ(choose_panel(768, desc("x86-64-avx512"), 768, 128).rows, 8);
  // int8: vpdpbusd takes four bytes per lane (AVX-512 VNNI, which Halide 14 knows as Sapphire
  // Rapids); without it, int16 pairs through vpmaddwd in as many registers as are left.
  Int8Block vnni = int8_block(codegen::describe(parse_target("x86-64-avx512").with_feature(Halide::Target::AVX512_SapphireRapids)));
  EXPECT_EQ(vnni.width, 48);  // the float32 panel's shape: 24 accumulators, 11 loads per 24 products
  EXPECT_EQ(vnni.rows, 8);
  EXPECT_EQ(vnni.k_group, 4);
  Int8Block sdot = int8_block(desc("arm64-dotprod"));
  EXPECT_EQ(sdot.width, 12);
  EXPECT_EQ(sdot.rows, 8);
  EXPECT_EQ(sdot.k_group, 4);
  Int8Block avx512 = int8_block(desc("x86-64-avx512"));
  EXPECT_EQ(avx512.width, 32);
  EXPECT_EQ(avx512.rows, 13);
  EXPECT_EQ(avx512.k_group, 2);
  Int8Block avx2 = int8_block(desc("x86-64-avx2"));
  EXPECT_EQ(avx2.width, 16);
  EXPECT_EQ(avx2.rows, 5);
  EXPECT_EQ(avx2.k_group, 2);
  EXPECT_EQ(int8_block(desc("arm64")).k_group, 4);
}

// M and K steer the block: rows that divide M, panels that fit L2.
TEST(TargetDesc, GemmBlocksFollowMAndK) {
  const TargetDesc avx512 = desc("x86-64-avx512");
  // N = 1024 is whole 64-column panels; 6 rows leave M = 128 a last block of 2 (132 rows computed),
  // 4 rows divide it. A run-time M is scored at 128.
  PanelShape p = choose_panel(1024, avx512, 1024, -1);
  EXPECT_EQ(p.width, 64);
  EXPECT_EQ(p.rows, 4);
  EXPECT_EQ(choose_panel(1024, avx512, 1024, 120).rows, 6);  // 120 = 20 blocks of 6
  EXPECT_EQ(choose_panel(1024, avx512, 1024, 0).rows, 6);    // M not known: as many rows as fit
  // K = 4096: a 64-column panel is 1 MiB, all of L2; 48 columns (768 KiB) fit, with 8 rows.
  p = choose_panel(1024, avx512, 4096, -1);
  EXPECT_EQ(p.width, 48);
  EXPECT_EQ(p.rows, 8);
  // AVX2 keeps 24 x 4 (4 rows divide 128 already).
  p = choose_panel(1024, desc("x86-64-avx2"), 1024, -1);
  EXPECT_EQ(p.width, 24);
  EXPECT_EQ(p.rows, 4);
}

double max_rel_error(const GemmCase& c, const ir::Tensor& got, const ir::Tensor& a, const ir::Tensor& b) {
  std::vector<double> want = reference(c, a, b, nullptr), mag = magnitude(c, a, b, nullptr);
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double g = got.get_f64(static_cast<int64_t>(i));
    double r = std::fabs(g - want[i]) / (mag[i] + std::fabs(want[i]) + 1e-30);
    worst = std::isnan(r) ? INFINITY : std::max(worst, r);
  }
  return worst;
}

// The register-blocked product on each runnable ISA: every tail of the AVX2 block (N around 24,
// M around 4 and the 32-row tasks) and of AVX-512's 64 x 4 block for a run-time M, a run-time B, and the fused bias + ReLU epilogue whose
// unrolled block must read the right accumulators.
TEST(GemmTargets, GemmOnEveryRunnableIsa) {
  for (const std::string& name : onnxc::test::runnable_targets()) {
    Halide::Target t = name == "host" ? host_target() : parse_target(name);
    SCOPED_TRACE(name);
    for (int64_t n : {8, 23, 24, 25, 48, 64, 100, 128}) {
      for (bool epilogue : {false, true}) {
        GemmCase c{.a = {1, 37}, .b = {37, n}, .a_dynamic = {true, false}, .relu_bias_epilogue = epilogue};
        ir::Tensor a = random_tensor(c.dtype, c.a, 1), b = random_tensor(c.dtype, c.b, 2);
        GemmKernel k(c, a, b, nullptr, t);
        for (int64_t m : {1, 3, 4, 5, 33, 130}) {
          c.a = {m, 37};
          a = random_tensor(c.dtype, c.a, static_cast<uint32_t>(m));
          k.bind(c, a, b);
          EXPECT_LT(max_rel_error(c, k.run(), a, b), 1e-5) << describe(c) << " m=" << m;
        }
      }
    }
    GemmCase staged{.a = {37, 19}, .b = {19, 50}, .b_const = false};
    ir::Tensor a = random_tensor(staged.dtype, staged.a, 3), b = random_tensor(staged.dtype, staged.b, 4);
    GemmKernel k(staged, a, b, nullptr, t);
    EXPECT_LT(max_rel_error(staged, k.run(), a, b), 1e-5) << describe(staged);
  }
}

}  // namespace
}  // namespace onnxc::codegen::testing
