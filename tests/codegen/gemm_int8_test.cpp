// The int8 product of `--quantize dynamic-int8` (onnxc.DynamicQuantMatMul) on every ISA this machine
// runs: its int32 sums equal a scalar reference exactly, over random shapes with odd K and partial
// column and row blocks, including the largest products (255 × -128) that would saturate an int16
// pair sum (vpmaddubsw's), and with wide rows (int16 pairs) up to 2^31; the instruction each
// target's block is built around is the one emitted (vpmaddwd, vpdpbusd, ARM's sdot); and which
// targets `--quantize dynamic-int8` quantizes for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>

#include "codegen/schedule/gemm_int8.h"
#include "codegen/target.h"
#include "gemm_harness.h"
#include "runnable_targets.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace onnxc::codegen::testing {
namespace {

// Rows of integers in [0, 255], each holding both 0 and 255: the kernel's row range is then [0, 255],
// its step 1 and its quantized row the row itself, so with the harness's column scales of 1 every
// output is the int32 sum Σ_k a·w itself (exact in float32: |sum| ≤ 255·128·K < 2^24 for K < 514).
ir::Tensor integer_rows(int64_t m, int64_t k, std::mt19937& rng, bool extreme) {
  ir::Tensor a(ir::DType::Float32, {m, k});
  std::uniform_int_distribution<int> level(0, 255), coin(0, 3);
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t i = 0; i < k; ++i) {
      int v = extreme || coin(rng) == 0 ? 255 : level(rng);
      a.mutable_data<float>()[r * k + i] = static_cast<float>(v);
    }
    a.mutable_data<float>()[r * k] = 0.0f;  // the row's low end
    if (k > 1) a.mutable_data<float>()[r * k + k - 1] = 255.0f;
  }
  return a;
}

ir::Tensor int8_weight(int64_t k, int64_t n, std::mt19937& rng, bool extreme) {
  ir::Tensor w(ir::DType::Int8, {k, n});
  std::uniform_int_distribution<int> value(-128, 127), coin(0, 3);
  for (int64_t i = 0; i < k * n; ++i) {
    int v = extreme ? -128 : coin(rng) == 0 ? (i % 2 ? 127 : -128) : value(rng);
    w.mutable_data<int8_t>()[i] = static_cast<int8_t>(v);
  }
  return w;
}

// The weight's value at i, int8 or int16.
int64_t weight_at(const ir::Tensor& w, int64_t i) {
  return w.dtype() == ir::DType::Int8 ? w.data<int8_t>()[i] : w.data<int16_t>()[i];
}

void expect_exact_sums(const ir::Tensor& got, const ir::Tensor& a, const ir::Tensor& w, const std::string& what) {
  const int64_t m_ext = a.dims()[0], k_ext = a.dims()[1], n_ext = w.dims()[1];
  ASSERT_EQ(got.numel(), m_ext * n_ext) << what;
  int wrong = 0;
  for (int64_t m = 0; m < m_ext; ++m) {
    for (int64_t n = 0; n < n_ext; ++n) {
      int64_t sum = 0;
      for (int64_t k = 0; k < k_ext; ++k)
        sum += static_cast<int64_t>(a.data<float>()[m * k_ext + k]) * weight_at(w, k * n_ext + n);
      const float g = got.data<float>()[m * n_ext + n];
      if (g != static_cast<float>(sum) && ++wrong <= 5)
        ADD_FAILURE() << what << " m=" << m << " n=" << n << ": got " << g << ", the int32 sum is " << sum;
    }
  }
  EXPECT_EQ(wrong, 0) << what;
}

TEST(Int8Gemm, ExactInt32SumsOnEveryRunnableIsa) {
  for (const std::string& name : onnxc::test::runnable_targets()) {
    const Halide::Target t = name == "host" ? host_target() : parse_target(name);
    const Int8Block block = int8_block(codegen::describe(with_dot_products(t)));
    SCOPED_TRACE(name + " (k group " + std::to_string(block.k_group) + ", " + std::to_string(block.width) + " x " +
                 std::to_string(block.rows) + " block)");
    std::mt19937 rng(1234);
    std::uniform_int_distribution<int64_t> k_of(1, 200), n_of(1, 80);
    // Fixed edges (K = 1, odd K, N of one column, N one past a block), random shapes, and the
    // largest sums: every product 255 × -128 over K = 513.
    std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 17}, {3, 1}, {7, 2 * block.width + 1}, {513, 5}};
    for (int i = 0; i < 4; ++i) shapes.push_back({k_of(rng) | 1, n_of(rng)});
    for (auto [k, n] : shapes) {
      const bool extreme = k == 513;
      GemmCase c{.op = "DynamicQuantMatMul", .a = {1, k}, .b = {k, n}, .a_dynamic = {true, false}};
      ir::Tensor w = int8_weight(k, n, rng, extreme);
      ir::Tensor a = integer_rows(1, k, rng, extreme);
      GemmKernel kernel(c, a, w, nullptr, t);
      for (int64_t m : {int64_t{1}, int64_t{block.rows} - 1, int64_t{4 * block.rows} + 1, int64_t{37}}) {
        c.a = {m, k};
        a = integer_rows(m, k, rng, extreme);
        kernel.bind(c, a, w);
        expect_exact_sums(kernel.run(), a, w, "M=" + std::to_string(m) + " K=" + std::to_string(k) + " N=" + std::to_string(n));
      }
    }
  }
}

// Wide rows (the attention output projection's: wide_rows = 1, int16 weights, int16 pairs on every
// target): rows of integers 0..L holding both ends, L the levels the kernel gives K and max|w|
// (floor((2^31 - 1) / (K·max|w|)), at most 32767), so again every output is the int32 sum. Small
// sums (exact in float32) over odd K and partial blocks, and the largest: K = 768 with every
// product after the first 1672 × 1672 (the pass's weight bound for K = 768): 2.14e9, whose float32
// value is negative if any partial sum wrapped.
TEST(Int8Gemm, WideRowsExactInt32Sums) {
  auto levels_of = [](int64_t k, int64_t wmax) { return std::min<int64_t>(32767, 2147483647 / (k * wmax)); };
  for (const std::string& name : onnxc::test::runnable_targets()) {
    const Halide::Target t = name == "host" ? host_target() : parse_target(name);
    SCOPED_TRACE(name);
    std::mt19937 rng(99);
    struct Shape { int64_t k, n, wmax; bool extreme; };
    for (Shape s : {Shape{7, 37, 2, false}, Shape{65, 20, 3, false}, Shape{768, 33, 1672, true}}) {
      const int64_t levels = levels_of(s.k, s.wmax);
      ir::Tensor w(ir::DType::Int16, {s.k, s.n});
      std::uniform_int_distribution<int64_t> value(-s.wmax, s.wmax);
      for (int64_t i = 0; i < s.k * s.n; ++i) w.mutable_data<int16_t>()[i] = static_cast<int16_t>(s.extreme ? s.wmax : value(rng));
      if (!s.extreme) w.mutable_data<int16_t>()[0] = static_cast<int16_t>(-s.wmax);  // max|w| is wmax
      for (int64_t m : {int64_t{1}, int64_t{29}}) {
        ir::Tensor a(ir::DType::Float32, {m, s.k});
        std::uniform_int_distribution<int64_t> level(0, levels);
        for (int64_t r = 0; r < m; ++r) {
          for (int64_t i = 0; i < s.k; ++i)
            a.mutable_data<float>()[r * s.k + i] = static_cast<float>(s.extreme ? levels : level(rng));
          a.mutable_data<float>()[r * s.k] = 0.0f;
          a.mutable_data<float>()[r * s.k + s.k - 1] = static_cast<float>(levels);
        }
        GemmCase c{.op = "DynamicQuantMatMul", .a = {m, s.k}, .b = {s.k, s.n}, .a_dynamic = {true, false}, .wide_rows = true};
        GemmKernel kernel(c, a, w, nullptr, t);
        ir::Tensor got = kernel.run();
        if (!s.extreme) {
          expect_exact_sums(got, a, w, "K=" + std::to_string(s.k) + " M=" + std::to_string(m));
        } else {  // each row: 0, then `levels` K - 1 times; the sum is past 2^30 and compared in float32
          const int64_t sum = levels * s.wmax * (s.k - 1);
          EXPECT_GT(sum, int64_t{1} << 30);
          for (int64_t i = 0; i < m * s.n; ++i) EXPECT_EQ(got.data<float>()[i], static_cast<float>(sum)) << "at " << i;
        }
      }
    }
  }
}

std::string assembly_of(const Halide::Target& t) {
  GemmCase c{.op = "DynamicQuantMatMul", .a = {64, 96}, .b = {96, 64}, .a_dynamic = {true, false}};
  std::mt19937 rng(7);
  ir::Tensor a = integer_rows(64, 96, rng, false), w = int8_weight(96, 64, rng, false);
  GemmKernel kernel(c, a, w, nullptr, t, /*jit=*/false);
  const std::string path = ::testing::TempDir() + "onnxc_int8_gemm.s";
  kernel.pipeline().compile_to_assembly(path, kernel.pipeline().infer_arguments(), "int8_gemm", with_dot_products(t));
  std::ifstream f(path);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  return text;
}

// Compiled ahead of time (not run), so every x86 kind is checked whatever this CPU has.
TEST(Int8Gemm, EmitsEachTargetsDotProduct) {
  const std::string avx2 = assembly_of(parse_target("x86-64-avx2"));
  EXPECT_NE(avx2.find("vpmaddwd"), std::string::npos) << "AVX2: no vpmaddwd";
  EXPECT_EQ(avx2.find("vpmaddubsw"), std::string::npos) << "AVX2: vpmaddubsw's int16 sums can saturate";
  const std::string vnni = assembly_of(parse_target("x86-64-avx512").with_feature(Halide::Target::AVX512_SapphireRapids));
  EXPECT_NE(vnni.find("vpdpbusd"), std::string::npos) << "AVX-512 VNNI: no vpdpbusd";
  const std::string sdot = assembly_of(parse_target("arm64-dotprod"));
  EXPECT_NE(sdot.find("sdot"), std::string::npos) << "ARM dotprod: no sdot";
}

// `--quantize dynamic-int8` quantizes where the int8 kernel beats float32: x86 with AVX2 or AVX-512
// (vpmaddwd pairs, or vpdpbusd) and ARM with dotprod (sdot on q - 128). ARM without dotprod stays
// float32: there the bytes would be widened in the loop.
TEST(Int8Gemm, QuantizesOnlyWhereInt8Pays) {
  EXPECT_TRUE(int8_products_pay(parse_target("x86-64-avx2")));
  EXPECT_TRUE(int8_products_pay(parse_target("x86-64-avx512")));
  EXPECT_TRUE(int8_products_pay(parse_target("x86-64-avx512").with_feature(Halide::Target::AVX512_SapphireRapids)));
  EXPECT_FALSE(int8_products_pay(parse_target("x86-64-linux-sse41")));
  EXPECT_FALSE(int8_products_pay(parse_target("x86-64-linux-avx")));
  EXPECT_FALSE(int8_products_pay(parse_target("arm64")));
  EXPECT_TRUE(int8_products_pay(parse_target("arm64-dotprod")));
}

}  // namespace
}  // namespace onnxc::codegen::testing
