// Runs one MatMul or Gemm node through its registered lowering without the kernel emitter: inputs
// become ImageParams, add_constant binds a Buffer to an ImageParam, the lowering's schedule runs on
// the output Func, and the pipeline is JIT-compiled. Shared by gemm_tests and bench/gemm_bench.
// ONNXC_GEMM_STMT=file writes the lowered statement of each kernel built (the last one wins), and
// ONNXC_GEMM_ASM=file its assembly. onnxc.DynamicQuantMatMul (the int8 product) runs too: B is then
// its int8 weight and the column scales are 1.
#pragma once

#include <Halide.h>

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/lower/lower.h"
#include "ir/graph.h"

namespace onnxc::codegen::testing {

struct GemmCase {
  std::string op = "MatMul";  // "MatMul" or "Gemm"
  ir::DType dtype = ir::DType::Float32;
  std::vector<int64_t> a, b;   // operand shapes (ONNX order)
  std::optional<std::vector<int64_t>> c;  // Gemm's C
  bool b_const = true;         // B is a weight (packed at compile time)
  bool symbolic = true;        // A's (and a non-constant B's) dims are run-time extents
  std::vector<bool> a_dynamic, b_dynamic;  // per dim, overriding `symbolic` when not empty
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 1.0f;
  bool relu_bias_epilogue = false;  // compose out = relu(result + bias[n]) as a fused consumer
  bool flatten_epilogue = false;    // compose a Reshape of the result to 2-D (other dims than acc)
  bool wide_rows = false;           // DynamicQuantMatMul's wide_rows = 1 (int16 pairs; B may be int16)
};

std::string describe(const GemmCase& c);
std::vector<int64_t> output_shape(const GemmCase& c);

// The JIT target for this machine. Halide 14 reads AVX-512 BF16 + VNNI as "avx512_sapphirerapids",
// which lets LLVM use AVX512-FP16 instructions; CPUs without them (AMD Zen 4/5) then die with SIGILL
// on f16/bf16 kernels, so the feature is dropped unless /proc/cpuinfo lists avx512_fp16.
Halide::Target host_target();

// A compiled kernel for one case; inputs are bound at construction.
class GemmKernel {
 public:
  // Lowers and schedules; JIT-compiles too when `jit` (a CUDA target can be compiled ahead of time
  // through pipeline() without a GPU).
  GemmKernel(const GemmCase& c, const ir::Tensor& a, const ir::Tensor& b, const ir::Tensor* c_in,
             const Halide::Target& target = host_target(), bool jit = true);
  // Binds other operands (same ranks; any extents that are run-time ones) without recompiling; `c`
  // describes the new shapes. A constant B stays the one the kernel was compiled with.
  void bind(const GemmCase& c, const ir::Tensor& a, const ir::Tensor& b);
  // After construction for a GPU target without `jit`: the GPU schedule's loops turned into host
  // loops (gpu_on_host.h) and JIT-compiled for this machine. Returns how many loops were GPU loops.
  int jit_gpu_schedule_on_host();
  ir::Tensor run();               // realizes into a fresh tensor
  void run_into(ir::Tensor& out);  // realizes into `out` (output_shape, dtype)
  Halide::Pipeline& pipeline() { return pipeline_; }
  Halide::Func output() const { return output_; }

 private:
  // An ImageParam bound to `data`, as a tensor whose dims are run-time extents where `dynamic`.
  HTensor add_param(const std::string& name, const ir::Tensor& data, std::vector<bool> dynamic);
  Halide::Func compose_epilogues(Halide::Func result) const;

  GemmCase case_;
  ir::Graph graph_;
  std::vector<Halide::ImageParam> params_;
  std::deque<ir::Tensor> keep_;  // bytes behind bound buffers (a deque: pointers stay valid)
  Halide::Func output_;
  Halide::Pipeline pipeline_;
};

// Random tensor with values in [-1, 1] (small integers for integer dtypes).
ir::Tensor random_tensor(ir::DType t, const std::vector<int64_t>& dims, uint32_t seed);
// Naive double-precision result of the case, as f64.
std::vector<double> reference(const GemmCase& c, const ir::Tensor& a, const ir::Tensor& b, const ir::Tensor* c_in);
// Per-element error bound: the sum of |terms| of each output, for relative-to-magnitude checks.
std::vector<double> magnitude(const GemmCase& c, const ir::Tensor& a, const ir::Tensor& b, const ir::Tensor* c_in);

}  // namespace onnxc::codegen::testing
