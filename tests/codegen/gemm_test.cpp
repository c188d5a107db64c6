// MatMul and Gemm lowerings, JIT-compiled and compared with a naive double-precision reference:
// shapes that hit every tail of the register blocks, broadcast batches, 1-D operands, Gemm's
// attributes and C broadcasts, other dtypes, a fused epilogue, NaN/inf through the one-row
// specialization, and a CUDA build.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "codegen/schedule/gpu_gemm.h"
#include "gemm_harness.h"
#include "ir/error.h"

// Cases are designated initializers naming only what differs from the defaults; GCC 12 warns about
// the omitted fields (GCC 14 no longer does).
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace onnxc::codegen::testing {
namespace {

using ir::DType;

// Allowed error relative to Σ|a·b| (plus |C|): f32 rounding over K terms stays far below 1e-5 of
// that; f16/bf16 results are rounded to their own precision once.
double tolerance(DType t) {
  switch (t) {
    case DType::Float32: return 1e-5;
    case DType::Float64: return 1e-12;
    case DType::Float16: return 2e-3;
    case DType::BFloat16: return 1.6e-2;
    default: return 0;
  }
}

struct Inputs {
  ir::Tensor a, b;
  std::optional<ir::Tensor> c;
  const ir::Tensor* c_ptr() const { return c ? &*c : nullptr; }
};

Inputs make_inputs(const GemmCase& c, uint32_t seed) {
  Inputs in{random_tensor(c.dtype, c.a, seed), random_tensor(c.dtype, c.b, seed + 1), std::nullopt};
  if (c.c) in.c = random_tensor(c.dtype, *c.c, seed + 2);
  return in;
}

void expect_matches(const GemmCase& c, GemmKernel& k, const Inputs& in) {
  ir::Tensor got = k.run();
  std::vector<double> want = reference(c, in.a, in.b, in.c_ptr());
  std::vector<double> mag = magnitude(c, in.a, in.b, in.c_ptr());
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << describe(c);
  const double tol = tolerance(c.dtype);
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i) {
    double g = got.get_f64(static_cast<int64_t>(i));
    double bound = tol * (mag[i] + std::fabs(want[i])) + (tol > 0 ? 1e-30 : 0);
    if (!(std::fabs(g - want[i]) <= bound)) {
      ADD_FAILURE() << describe(c) << ": element " << i << " is " << g << ", expected " << want[i];
      ++bad;
    }
  }
}

// Compiles once and checks it, with fresh data each time.
void check(const GemmCase& c, uint32_t seed = 1) {
  Inputs in = make_inputs(c, seed);
  GemmKernel k(c, in.a, in.b, in.c_ptr());
  expect_matches(c, k, in);
}

const int64_t kRows[] = {1, 7, 8, 33, 128};
const int64_t kDepths[] = {1, 17, 64, 768};
const int64_t kCols[] = {1, 16, 47, 48, 96, 100};

// One kernel per (K, N) serves every M: A's dims are run-time extents, so each M only re-binds A.
TEST(Gemm, MatMulConstantWeightAllTails) {
  for (int64_t k : kDepths) {
    for (int64_t n : kCols) {
      GemmCase c{.a = {kRows[0], k}, .b = {k, n}};
      Inputs in = make_inputs(c, 7);
      GemmKernel kernel(c, in.a, in.b, nullptr);
      for (int64_t m : kRows) {
        c.a = {m, k};
        in.a = random_tensor(c.dtype, c.a, static_cast<uint32_t>(m));
        kernel.bind(c, in.a, in.b);
        expect_matches(c, kernel, in);
      }
    }
  }
}

// All extents are run-time ones: one kernel serves the whole grid.
TEST(Gemm, MatMulRuntimeWeightAllTails) {
  GemmCase c{.a = {1, 1}, .b = {1, 1}, .b_const = false};
  Inputs first = make_inputs(c, 5);
  GemmKernel kernel(c, first.a, first.b, nullptr);
  for (int64_t m : kRows) {
    for (int64_t k : kDepths) {
      for (int64_t n : kCols) {
        c.a = {m, k};
        c.b = {k, n};
        Inputs in = make_inputs(c, static_cast<uint32_t>(m * 1000 + k + n));
        kernel.bind(c, in.a, in.b);
        expect_matches(c, kernel, in);
      }
    }
  }
}

// NaN and ±inf in A through the one-row (M == 1) specialization and the row-block path of the same
// kernel: a NaN row gives NaN everywhere, inf·0 gives NaN, inf times nonzero gives ±inf, and the
// rows beside them are untouched.
TEST(Gemm, SpecialValuesThroughOneRowAndBlockedPaths) {
  const int64_t k = 40, n = 100;
  GemmCase c{.a = {1, k}, .b = {k, n}};
  ir::Tensor b = random_tensor(DType::Float32, c.b, 3);
  float* bp = b.mutable_data<float>();
  for (int64_t j = 0; j < n; ++j) bp[5 * n + j] = j % 3 == 0 ? 0.0f : 1.0f;  // row 5: zeros and ones
  Inputs in{random_tensor(DType::Float32, c.a, 4), b, std::nullopt};
  GemmKernel kernel(c, in.a, in.b, nullptr);
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t m : {1, 9}) {
    for (float special : {std::numeric_limits<float>::quiet_NaN(), inf, -inf}) {
      c.a = {m, k};
      in.a = random_tensor(DType::Float32, c.a, static_cast<uint32_t>(m));
      in.a.mutable_data<float>()[(m - 1) * k + 5] = special;  // last row meets B's row 5
      kernel.bind(c, in.a, in.b);
      ir::Tensor got = kernel.run();
      std::vector<double> want = reference(c, in.a, in.b, nullptr);
      for (int64_t i = 0; i < m * n; ++i) {
        double g = got.get_f64(i), w = want[static_cast<size_t>(i)];
        if (std::isnan(w)) EXPECT_TRUE(std::isnan(g)) << "m=" << m << " element " << i;
        else if (std::isinf(w)) EXPECT_EQ(g, w) << "m=" << m << " element " << i;
        else EXPECT_NEAR(g, w, 1e-4) << "m=" << m << " element " << i;
      }
    }
  }
}

// Eight panels or more give tasks of ~128 rows (fewer give ~32): M around and past that task
// height, K and N off every block size, and NaN/inf in the last row of the task past row 128
// reaching exactly its own row.
TEST(Gemm, ManyPanelsTaskTails) {
  const int64_t k = 33, n = 8 * 48 + 5;
  GemmCase c{.a = {1, k}, .b = {k, n}, .a_dynamic = {true, false}};
  Inputs in = make_inputs(c, 11);
  GemmKernel kernel(c, in.a, in.b, nullptr);
  for (int64_t m : {1, 7, 127, 130, 257}) {
    c.a = {m, k};
    in.a = random_tensor(c.dtype, c.a, static_cast<uint32_t>(m));
    kernel.bind(c, in.a, in.b);
    expect_matches(c, kernel, in);
  }
  c.a = {130, k};
  in.a = random_tensor(c.dtype, c.a, 12);
  float* a = in.a.mutable_data<float>();
  a[129 * k + 3] = std::numeric_limits<float>::quiet_NaN();
  a[128 * k + 4] = std::numeric_limits<float>::infinity();
  kernel.bind(c, in.a, in.b);
  ir::Tensor got = kernel.run();
  std::vector<double> want = reference(c, in.a, in.b, nullptr);
  for (int64_t i = 0; i < 130 * n; ++i) {
    double g = got.get_f64(i), w = want[static_cast<size_t>(i)];
    if (std::isnan(w)) EXPECT_TRUE(std::isnan(g)) << "element " << i;
    else if (std::isinf(w)) EXPECT_EQ(g, w) << "element " << i;
    else EXPECT_NEAR(g, w, 1e-4) << "element " << i;
  }
  EXPECT_TRUE(std::isnan(got.get_f64(129 * n)));
  EXPECT_TRUE(std::isinf(got.get_f64(128 * n + 1)));
  EXPECT_FALSE(std::isnan(got.get_f64(127 * n)));
  check({.a = {2, 130, 17}, .b = {2, 17, 400}});                   // batched weight, one per batch
  check({.a = {130, 17}, .b = {17, 400}, .b_const = false});       // staged panels: task per panel
}

// Static shapes pick panel widths from N (64, 32, 16 columns) for a run-time B.
TEST(Gemm, MatMulRuntimeWeightStaticPanels) {
  for (int64_t n : {64, 32, 100, 128, 20})
    for (int64_t m : {1, 5, 40}) check({.a = {m, 24}, .b = {24, n}, .b_const = false, .symbolic = false});
  check({.a = {1, 64}, .b = {64, 100}, .symbolic = false});  // a static M of 1: one-row blocks, no specialization
}

TEST(Gemm, MatMulBatchedAndBroadcast) {
  check({.a = {2, 3, 7, 17}, .b = {17, 20}});                        // weight shared by all batches
  check({.a = {2, 3, 7, 17}, .b = {17, 20}, .b_const = false});
  check({.a = {2, 1, 7, 17}, .b = {3, 17, 20}, .b_const = false});   // both broadcast
  check({.a = {4, 33, 64}, .b = {4, 64, 48}, .b_const = false});     // attention-style
  check({.a = {12, 9, 16}, .b = {12, 16, 9}, .b_const = false});
  check({.a = {2, 3, 5, 17}, .b = {3, 17, 50}});                     // batched constant weight
  check({.a = {1, 5, 17}, .b = {4, 17, 9}, .b_const = false});       // run-time extent 1 broadcasts
  check({.a = {4, 5, 17}, .b = {1, 17, 9}, .b_const = false});
  check({.a = {3, 7, 17}, .b = {1, 17, 49}});
  check({.a = {2, 7, 17}, .b = {17, 20}, .b_const = false, .symbolic = false});
  // Three and four batch dims (MaxViT's [batch, windows, heads, tokens, dim] scores): the outer ones
  // stay serial loops around the parallel task (fused deeper, the kernel failed at run time).
  check({.a = {1, 4, 2, 9, 8}, .b = {1, 4, 2, 8, 32}, .b_const = false});
  check({.a = {2, 4, 2, 9, 8}, .b = {1, 4, 1, 8, 40}, .b_const = false});
  check({.a = {2, 3, 2, 2, 9, 8}, .b = {8, 40}});
  check({.a = {1, 4, 2, 9, 8}, .b = {4, 2, 8, 33}});
}

TEST(Gemm, MatMulOneDimensional) {
  for (bool bc : {true, false}) {
    check({.a = {17}, .b = {17, 40}, .b_const = bc});
    check({.a = {9, 17}, .b = {17}, .b_const = bc});
    check({.a = {17}, .b = {17}, .b_const = bc});
    check({.a = {2, 3, 17}, .b = {17}, .b_const = bc});
    check({.a = {17}, .b = {2, 17, 33}, .b_const = bc});
    check({.a = {64}, .b = {64, 96}, .b_const = bc, .symbolic = false});
  }
}

TEST(Gemm, GemmAttributes) {
  for (bool bc : {true, false}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        GemmCase c{.op = "Gemm", .b_const = bc, .trans_a = ta, .trans_b = tb, .alpha = 0.5f, .beta = 2.0f};
        c.a = ta ? std::vector<int64_t>{17, 9} : std::vector<int64_t>{9, 17};
        c.b = tb ? std::vector<int64_t>{50, 17} : std::vector<int64_t>{17, 50};
        c.c = std::vector<int64_t>{9, 50};
        check(c);
      }
    }
  }
}

TEST(Gemm, GemmBroadcastC) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {1}, {50}, {1, 50}, {9, 1}, {1, 1}, {9, 50}};
  for (const auto& cs : shapes) {
    check({.op = "Gemm", .a = {9, 17}, .b = {17, 50}, .c = cs, .beta = 0.25f});
    check({.op = "Gemm", .a = {9, 17}, .b = {50, 17}, .c = cs, .b_const = false, .trans_b = true});
  }
  check({.op = "Gemm", .a = {9, 17}, .b = {17, 50}});                                  // no C
  check({.op = "Gemm", .a = {9, 17}, .b = {17, 50}, .c = std::vector<int64_t>{50}, .beta = 0.0f});
  check({.op = "Gemm", .a = {1, 768}, .b = {1000, 768}, .c = std::vector<int64_t>{1000}, .trans_b = true});
}

TEST(Gemm, OtherDtypes) {
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float64, DType::Int32, DType::Int64, DType::UInt32,
                  DType::UInt64}) {
    for (bool bc : {true, false}) {
      check({.dtype = t, .a = {7, 33}, .b = {33, 20}, .b_const = bc});
      check({.dtype = t, .a = {2, 3, 17}, .b = {17, 5}, .b_const = bc});
      check({.dtype = t, .a = {17}, .b = {17, 5}, .b_const = bc});
      check({.op = "Gemm", .dtype = t, .a = {17, 6}, .b = {9, 17}, .c = std::vector<int64_t>{9}, .b_const = bc,
             .trans_a = true, .trans_b = true, .alpha = 2.0f, .beta = 3.0f});
    }
  }
}

// A fused consumer (bias + ReLU) composed on the output: the GEMM is computed per output tile.
TEST(Gemm, FusedEpilogue) {
  for (int64_t m : {1, 7, 33, 128}) {
    check({.a = {m, 64}, .b = {64, 96}, .relu_bias_epilogue = true});
    check({.a = {m, 64}, .b = {64, 100}, .relu_bias_epilogue = true});
    check({.a = {2, m, 64}, .b = {64, 47}, .b_const = false, .relu_bias_epilogue = true});
  }
}

// A consumer with other dims than the product (a Reshape): the product is computed whole first.
TEST(Gemm, ReshapingEpilogue) {
  check({.a = {2, 3, 7, 17}, .b = {17, 20}, .flatten_epilogue = true});
  check({.a = {2, 7, 64}, .b = {64, 100}, .b_const = false, .flatten_epilogue = true});
  check({.a = {3, 5, 17}, .b = {17, 9}, .b_const = false, .flatten_epilogue = true});
  check({.dtype = DType::Int32, .a = {2, 7, 17}, .b = {17, 9}, .flatten_epilogue = true});
}

// Sets ONNXC_CUDA_GEMM (the CUDA GEMM form a compile picks) for one scope, restoring it after.
class GemmVariant {
 public:
  explicit GemmVariant(const char* name) {
    if (const char* v = std::getenv("ONNXC_CUDA_GEMM")) saved_ = v, had_ = true;
    setenv("ONNXC_CUDA_GEMM", name, 1);
  }
  ~GemmVariant() {
    if (had_) setenv("ONNXC_CUDA_GEMM", saved_.c_str(), 1);
    else unsetenv("ONNXC_CUDA_GEMM");
  }

 private:
  std::string saved_;
  bool had_ = false;
};

// The CUDA schedule compiles ahead of time without a GPU (PTX for sm_80), in every form.
TEST(Gemm, CudaScheduleCompiles) {
  const Halide::Target cuda("host-cuda-cuda_capability_80");
  const std::vector<GemmCase> cases = {
      {.a = {33, 64}, .b = {64, 100}},
      {.a = {4, 33, 64}, .b = {4, 64, 48}, .b_const = false},
      {.a = {17}, .b = {17, 40}},
      {.op = "Gemm", .a = {9, 17}, .b = {50, 17}, .c = std::vector<int64_t>{50}, .trans_b = true},
      {.dtype = DType::Float16, .a = {7, 33}, .b = {33, 20}},
      {.a = {2, 7, 64}, .b = {64, 96}, .relu_bias_epilogue = true},
      {.a = {2, 7, 64}, .b = {64, 96}, .flatten_epilogue = true},
      // Not vectorized (LLVM 14's NVPTX backend crashed on the vectorized float64 block).
      {.dtype = DType::Float64, .a = {4, 9, 20}, .b = {4, 20, 11}, .b_const = false},
      {.dtype = DType::Int32, .a = {5, 19}, .b = {19, 7}},
  };
  auto dir = std::filesystem::temp_directory_path() / "onnxc_gemm_cuda";
  std::filesystem::create_directories(dir);
  // ONNXC_CUDA_GEMM set outside the test (bench/gpu/ptx_report.sh) picks the one form to build.
  std::vector<std::string> forms;
  if (const char* v = std::getenv("ONNXC_CUDA_GEMM"); v && *v) forms.push_back(v);
  else
    for (const GpuGemmTile& t : gpu_gemm_variants()) forms.push_back(t.name);
  int i = 0;
  for (const std::string& form : forms) {
    GemmVariant variant(form.c_str());
    for (const GemmCase& c : cases) {
      // The other forms build the types whose code differs (f16, f64, int32: scalar and smaller tiles);
      // their f32 kernels are built by CudaKernelKeepsAccumulatorsInRegisters.
      if (form != gpu_gemm_variants().front().name && c.dtype == DType::Float32) continue;
      Inputs in = make_inputs(c, 3);
      GemmKernel k(c, in.a, in.b, in.c_ptr(), cuda, /*jit=*/false);
      std::string name = "gemm_cuda_" + std::to_string(i++);
      EXPECT_NO_THROW(k.pipeline().compile_to_static_library((dir / name).string(), k.pipeline().infer_arguments(),
                                                             name, cuda))
          << form << ": " << describe(c);
      EXPECT_TRUE(std::filesystem::exists(dir / (name + ".a"))) << form << ": " << describe(c);
    }
  }
}

// An unknown form is refused with the names of the known ones.
TEST(Gemm, CudaUnknownVariantRefused) {
  GemmVariant variant("no_such_form");
  const Halide::Target cuda("host-cuda-cuda_capability_80");
  const GemmCase c{.a = {33, 64}, .b = {64, 100}};
  Inputs in = make_inputs(c, 3);
  try {
    GemmKernel k(c, in.a, in.b, in.c_ptr(), cuda, /*jit=*/false);
    FAIL() << "ONNXC_CUDA_GEMM=no_such_form was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("smem128"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no_such_form"), std::string::npos) << e.what();
  }
}

// The PTX of each CUDA GEMM form, for a constant and a run-time B: FMAs on accumulators that stay
// in registers (no local memory); the shared-memory forms also load vectors of B from shared memory
// between barriers; the per-thread forms load vectors of B from global memory.
TEST(Gemm, CudaKernelKeepsAccumulatorsInRegisters) {
  const Halide::Target cuda("host-cuda-cuda_capability_80");
  const std::vector<GemmCase> cases = {
      {.a = {2, 100, 96}, .b = {96, 200}},
      {.a = {3, 40, 64}, .b = {3, 64, 130}, .b_const = false},
  };
  auto dir = std::filesystem::temp_directory_path() / "onnxc_gemm_ptx";
  std::filesystem::create_directories(dir);
  for (const GpuGemmTile& form : gpu_gemm_variants()) {
    GemmVariant variant(form.name);
    for (const GemmCase& c : cases) {
      Inputs in = make_inputs(c, 7);
      GemmKernel k(c, in.a, in.b, in.c_ptr(), cuda, /*jit=*/false);
      const std::string path = (dir / "gemm.s").string();
      k.pipeline().compile_to_assembly(path, k.pipeline().infer_arguments(), "gemm", cuda);
      std::ifstream f(path);
      std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      // The host assembly embeds the PTX module as string data; these words occur only there.
      const size_t ptx = text.find("Generated by LLVM NVPTX");
      ASSERT_NE(ptx, std::string::npos) << form.name << ": " << describe(c) << ": no PTX in the CUDA build";
      const std::string kernel = text.substr(ptx);
      if (form.form == GpuGemmTile::Form::SharedWarp) {
        EXPECT_NE(kernel.find("ld.shared.v4.f32"), std::string::npos) << form.name << ": " << describe(c);
        EXPECT_NE(kernel.find("bar.sync"), std::string::npos) << form.name << ": " << describe(c);
      } else {
        EXPECT_EQ(kernel.find("bar.sync"), std::string::npos) << form.name << ": " << describe(c);
      }
      EXPECT_NE(kernel.find("fma.rn.f32"), std::string::npos) << form.name << ": " << describe(c);
      EXPECT_EQ(kernel.find("__local_depot"), std::string::npos)
          << form.name << ": " << describe(c) << ": accumulators spilled to local memory";
      EXPECT_EQ(kernel.find(".local"), std::string::npos) << form.name << ": " << describe(c);
    }
  }
}

// Each CUDA schedule's loop nest (operand tiles per k step, register blocks per thread or lane,
// block tiles past the last row, column and k) run as host loops: the values the GPU computes, for
// every GEMM class the CUDA schedule handles or falls back from, in every form.
TEST(Gemm, CudaScheduleOnHostMatches) {
  const Halide::Target cuda("host-cuda-cuda_capability_80");
  const std::vector<GemmCase> cases = {
      {.a = {64, 64}, .b = {64, 64}},                          // one block, whole k tiles
      {.a = {33, 70}, .b = {70, 100}},                         // tails in m, n and k
      {.a = {130, 17}, .b = {17, 129}, .b_const = false},      // run-time B, k shorter than a tile
      {.a = {3, 40, 33}, .b = {3, 33, 72}, .b_const = false},  // batched
      {.a = {2, 1, 20, 48}, .b = {3, 48, 80}, .b_const = false},  // broadcast batch
      {.a = {2, 5, 96}, .b = {96, 50}},                        // constant B, batch of A only
      {.op = "Gemm", .a = {9, 17}, .b = {50, 17}, .c = std::vector<int64_t>{50}, .trans_b = true},
      {.op = "Gemm", .a = {77, 31}, .b = {77, 65}, .c = std::vector<int64_t>{31, 65}, .trans_a = true,
       .alpha = 0.5f, .beta = 2.0f},
      {.a = {2, 7, 64}, .b = {64, 96}, .relu_bias_epilogue = true},
      {.a = {2, 7, 64}, .b = {64, 96}, .flatten_epilogue = true},  // falls back: acc whole
      {.a = {17}, .b = {17, 40}},                                  // falls back: 1-D operand
      {.dtype = DType::Float16, .a = {7, 33}, .b = {33, 20}},
      {.dtype = DType::Float64, .a = {4, 9, 20}, .b = {4, 20, 11}, .b_const = false},
      {.dtype = DType::Int32, .a = {5, 19}, .b = {19, 7}},
  };
  for (const GpuGemmTile& form : gpu_gemm_variants()) {
    GemmVariant variant(form.name);
    for (const GemmCase& c : cases) {
      SCOPED_TRACE(std::string(form.name) + ": " + describe(c));
      Inputs in = make_inputs(c, 5);
      GemmKernel k(c, in.a, in.b, in.c_ptr(), cuda, /*jit=*/false);
      EXPECT_GT(k.jit_gpu_schedule_on_host(), 0) << "no GPU loops in the CUDA schedule";
      expect_matches(c, k, in);
    }
  }
}

}  // namespace
}  // namespace onnxc::codegen::testing
