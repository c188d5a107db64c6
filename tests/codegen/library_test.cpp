// The artifact as a user links it: two models' static libraries in one C program (each keeps its
// kernels and Halide runtime private), symbols a shared library exports, the kernel cache and
// parallel compiles giving identical libraries, and CUDA code generation without a GPU.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "codegen/emit/library.h"
#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

namespace fs = std::filesystem;

ir::Model scaled_relu(float scale) {
  ModelBuilder b(17);
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n});
  auto* s = b.const_f32("s", {}, {scale});
  auto* m = b.op("Mul", {x, s}, "m", DType::Float32, {n});
  b.output(b.op("Relu", {m}, "y", DType::Float32, {n}));
  return std::move(b.model());
}

std::string read(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

TEST(Library, TwoStaticModelsLinkIntoOneProgram) {
  auto a = compile(scaled_relu(2), "model_a");
  auto b = compile(scaled_relu(-3), "model_b");
  std::string dir = temp_dir("static");
  std::string c = dir + "/main.c";
  std::ofstream(c) << R"(#include <stdio.h>
#include "model_a.h"
#include "model_b.h"
int main(void) {
  const onnxc_model_desc *a = onnxc_model_model_a(), *b = onnxc_model_model_b();
  printf("%s %s %u %u\n", a->name, b->name, a->n_steps, b->n_steps);
  return a == b;
}
)";
  std::string exe = dir + "/main";
  std::vector<std::string> cmd = {"cc", "-I", std::string(ONNXC_SOURCE_DIR) + "/runtime/include",
                                  "-I", fs::path(a.header_path).parent_path().string(),
                                  "-I", fs::path(b.header_path).parent_path().string(), c, a.a_path, b.a_path,
                                  "-ldl", "-lpthread", "-lm", "-o", exe};
  ASSERT_NO_THROW(codegen::run_command(cmd, dir + "/cc.log")) << read(dir + "/cc.log");
  ASSERT_NO_THROW(codegen::run_command({exe}, dir + "/run.log"));
  EXPECT_EQ(read(dir + "/run.log"), "model_a model_b 1 1\n");
  fs::remove_all(dir);
}

TEST(Library, SharedLibraryExportsOnlyTheModel) {
  auto r = compile(scaled_relu(2), "exports");
  void* h = dlopen(r.so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  EXPECT_NE(dlsym(h, "onnxc_model_exports"), nullptr);
  EXPECT_NE(dlsym(h, "onnxc_model_entry"), nullptr);
  EXPECT_EQ(dlsym(h, "halide_set_num_threads"), nullptr);  // reached through the descriptor instead
  dlclose(h);
}

TEST(Library, CacheAndParallelJobsGiveTheSameLibrary) {
  ir::Model m = scaled_relu(0.5f);
  codegen::CompileOptions o;
  o.name = "jobs";
  o.cache_dir = temp_dir("cache");
  o.out_dir = temp_dir("jobs1");
  o.jobs = 1;
  auto first = codegen::compile_model(m, o);
  EXPECT_EQ(first.cache_hits, 0u);
  o.out_dir = temp_dir("jobs2");
  o.jobs = 4;
  int progress_calls = 0;
  o.progress = [&](const codegen::KernelProgress& p) {
    ++progress_calls;
    EXPECT_TRUE(p.cache_hit);
    EXPECT_EQ(p.total, first.distinct_kernels);
  };
  auto second = codegen::compile_model(m, o);
  EXPECT_EQ(second.cache_hits, static_cast<uint64_t>(first.distinct_kernels));
  EXPECT_EQ(progress_calls, first.distinct_kernels);
  EXPECT_EQ(read(first.plan_c_path), read(second.plan_c_path));
  LoadedModel lib(second.so_path);
  auto out = lib.run({HostTensor::f32({3}, {-2, 1, 4})});
  EXPECT_TRUE(all_close(out[0].values<float>(), {0, 0.5f, 2}));
  for (const auto& d : {o.cache_dir, fs::path(first.so_path).parent_path().string(), o.out_dir}) fs::remove_all(d);
}

// ONNXC_DUMP_STMT=DIR writes each kernel it compiles (not those found in the cache) as Halide's
// lowered statement, named by the kernel's function.
TEST(Library, DumpStmtWritesEachCompiledKernel) {
  codegen::CompileOptions o;
  o.name = "dumped";
  o.use_cache = false;
  o.out_dir = temp_dir("dumped");
  std::string dir = temp_dir("stmt");
  setenv("ONNXC_DUMP_STMT", dir.c_str(), 1);
  auto r = codegen::compile_model(scaled_relu(2), o);
  unsetenv("ONNXC_DUMP_STMT");
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(e.path().extension(), ".stmt");
    EXPECT_NE(read(e.path().string()).find("produce"), std::string::npos) << e.path();
  }
  EXPECT_EQ(files, r.distinct_kernels);
  for (const auto& d : {dir, o.out_dir}) fs::remove_all(d);
}

// Two layers that differ only in their weights (a transformer's twelve, say) share one compiled
// function, each call reading its own weights; constants whose values shape the code (Pad's pads)
// keep kernels apart even when every shape is the same.
TEST(Library, KernelsDifferingOnlyInWeightsShareOneFunction) {
  const int64_t d = 16;  // wide enough for the packed-panel GEMM, whose packing reads the weights
  ModelBuilder b(17);
  Dim n = Dim::symbol("n");
  ir::Value* h = b.input("x", DType::Float32, {n, d});
  std::vector<std::vector<float>> w(2, std::vector<float>(d * d)), bias(2, std::vector<float>(d));
  for (int l = 0; l < 2; ++l) {
    for (int64_t i = 0; i < d * d; ++i) w[l][i] = static_cast<float>((i * (l + 3)) % 7) - 3.0f;
    for (int64_t i = 0; i < d; ++i) bias[l][i] = static_cast<float>(l) - 0.25f * static_cast<float>(i % 5);
    std::string s = std::to_string(l);
    auto* mm = b.op("MatMul", {h, b.const_f32("w" + s, {d, d}, w[l])}, "mm" + s, DType::Float32, {n, d});
    auto* add = b.op("Add", {mm, b.const_f32("b" + s, {d}, bias[l])}, "add" + s, DType::Float32, {n, d});
    h = b.op("Relu", {add}, "h" + s, DType::Float32, {n, d});
  }
  b.output(h);
  ir::Value* v = b.input("v", DType::Float32, {3});
  b.output(b.op("Pad", {v, b.const_i64("front", {1, 0})}, "front_pad", DType::Float32, {4}));
  b.output(b.op("Pad", {v, b.const_i64("back", {0, 1})}, "back_pad", DType::Float32, {4}));
  auto r = compile(b.model(), "shared_weights");
  EXPECT_EQ(r.kernels, 4);
  EXPECT_EQ(r.distinct_kernels, 3);  // the two layers share one; the two Pads do not

  std::vector<float> x(2 * d), want;
  for (int64_t i = 0; i < 2 * d; ++i) x[i] = 0.125f * static_cast<float>(i % 9) - 0.5f;
  std::vector<float> cur = x;
  for (int l = 0; l < 2; ++l) {
    std::vector<float> next(2 * d);
    for (int64_t row = 0; row < 2; ++row)
      for (int64_t col = 0; col < d; ++col) {
        float acc = 0;
        for (int64_t k = 0; k < d; ++k) acc += cur[row * d + k] * w[l][k * d + col];
        next[row * d + col] = std::max(acc + bias[l][col], 0.0f);
      }
    cur = next;
  }
  LoadedModel lib(r.so_path);
  auto out = lib.run({HostTensor::f32({2, d}, x), HostTensor::f32({3}, {1, 2, 3})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(all_close(out[0].values<float>(), cur, 1e-5, 1e-5));
  EXPECT_TRUE(all_close(out[1].values<float>(), {0, 1, 2, 3}));
  EXPECT_TRUE(all_close(out[2].values<float>(), {1, 2, 3, 0}));
  fs::remove_all(fs::path(r.so_path).parent_path());
}

// CUDA kernels compile (PTX embedded, Halide's CUDA runtime linked) on a machine without a GPU.
TEST(Library, CudaTargetCompilesWithoutGpu) {
  ModelBuilder b(17);
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n, 8});
  auto* s = b.const_f32("s", {8}, std::vector<float>(8, 1.f));
  auto* sm = b.op("Softmax", {x}, "sm", DType::Float32, {n, 8});
  auto* ln = b.op("LayerNormalization", {sm, s}, "ln", DType::Float32, {n, 8});
  auto* axes = b.const_i64("axes", {1});
  b.output(b.op("ReduceSum", {ln, axes}, "y", DType::Float32, {n, 1}));
  auto r = compile(b.model(), "cuda_model", "cuda");
  LoadedModel lib(r.so_path);
  EXPECT_EQ(lib.desc()->uses_cuda, 1);
  EXPECT_NE(lib.desc()->copy_to_host, nullptr);
  EXPECT_NE(std::string(lib.desc()->target).find("cuda"), std::string::npos);
}

}  // namespace
}  // namespace onnxc::test
