// Where an opened library's weights are read from (runtime/src/weights.h): a blob of 16 MiB or more
// is copied into anonymous memory and its file pages unmapped as it goes; ONNXC_WEIGHTS=mapped keeps
// it in the library's pages, =copy copies a blob of any size. A MatMul against a constant weight of
// 17 MiB (its packed panels are the blob) runs in every placement, with two models of the one
// library open at once (the second copies pages the first has unmapped, read again from the file),
// and a small one is forced through the copy; each result is checked against the product in double.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "onnxc/runtime.h"
#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;

#ifdef HAVE_ONNXC_RUNTIME
constexpr int64_t kRows = 3, kK = 64;

struct Product {
  std::vector<float> x, w;
  int64_t n;
  std::vector<float> expect() const {
    std::vector<float> y(static_cast<size_t>(kRows * n));
    for (int64_t i = 0; i < kRows; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t k = 0; k < kK; ++k) s += static_cast<double>(x[i * kK + k]) * w[k * n + j];
        y[i * n + j] = static_cast<float>(s);
      }
    return y;
  }
};

std::string compile_product(const Product& p, const std::string& name) {
  ModelBuilder mb(13);
  auto* x = mb.input("x", DType::Float32, {kRows, kK});
  mb.output(mb.op("MatMul", {x, mb.const_f32("w", {kK, p.n}, p.w)}, "y", DType::Float32, ir::Shape{kRows, p.n}));
  return compile(mb.model(), name).so_path;
}

// Runs `model` once on p.x and checks y.
void run_and_check(onnxc_model* model, const Product& p, const std::string& what) {
  onnxc_session* s = nullptr;
  ASSERT_EQ(onnxc_session_create(model, nullptr, &s), ONNXC_OK) << onnxc_last_error();
  int64_t dims[] = {kRows, kK};
  std::vector<float> x = p.x;
  onnxc_tensor in{ONNXC_DTYPE_FLOAT, 2, dims, x.data()};
  ASSERT_EQ(onnxc_session_set_input(s, 0, &in), ONNXC_OK) << onnxc_session_last_error(s);
  ASSERT_EQ(onnxc_session_run(s), ONNXC_OK) << onnxc_session_last_error(s);
  onnxc_tensor out;
  ASSERT_EQ(onnxc_session_get_output(s, 0, &out), ONNXC_OK);
  const auto expect = p.expect();
  const float* y = static_cast<const float*>(out.data);
  EXPECT_TRUE(all_close(std::vector<float>(y, y + expect.size()), expect, 1e-5, 1e-5)) << what;
  onnxc_session_free(s);
}

TEST(WeightsPlacement, CopiedMappedAndTwiceOpenedGiveTheProduct) {
  Product big{uniform(kRows * kK, 3), {}, 67000};  // 64 × 67000 floats: 17.2 MB, over the 16 MiB line
  big.w = uniform(static_cast<size_t>(kK * big.n), 4);
  const std::string so = compile_product(big, "weights_big");
  for (const char* mode : {"mapped", "auto", "copy"}) {
    if (std::string(mode) == "auto") unsetenv("ONNXC_WEIGHTS");
    else setenv("ONNXC_WEIGHTS", mode, 1);
    onnxc_model *a = nullptr, *b = nullptr;
    ASSERT_EQ(onnxc_model_open(so.c_str(), &a), ONNXC_OK) << onnxc_last_error();
    ASSERT_EQ(onnxc_model_open(so.c_str(), &b), ONNXC_OK) << onnxc_last_error();
    run_and_check(a, big, std::string(mode) + ", first model");
    run_and_check(b, big, std::string(mode) + ", second model");
    onnxc_model_free(a);
    run_and_check(b, big, std::string(mode) + ", second model after the first is freed");
    onnxc_model_free(b);
  }
  Product small{uniform(kRows * kK, 5), uniform(kK * 40, 6), 40};
  const std::string small_so = compile_product(small, "weights_small");
  setenv("ONNXC_WEIGHTS", "copy", 1);
  onnxc_model* m = nullptr;
  ASSERT_EQ(onnxc_model_open(small_so.c_str(), &m), ONNXC_OK) << onnxc_last_error();
  run_and_check(m, small, "small blob, copied");
  onnxc_model_free(m);
  unsetenv("ONNXC_WEIGHTS");
}

// An embedding table that is only gathered from (20.5 MB of float32) and a 17.2 MB MatMul weight in
// one library: the table lies after the blob's copied prefix, so a copy takes only the MatMul's bytes
// (onnxc_model_copied_weight_bytes); the same table also read by a MatMul (tied embeddings) is copied
// (or the transposed copy the compiler folds it into).
// Every placement gives the gathered rows times the weight, computed here in double.
constexpr int64_t kVocab = 80000, kDim = 64, kN = 67000;

struct Embedding {
  std::vector<int64_t> ids{7, kVocab - 1, 0};
  std::vector<float> table = uniform(static_cast<size_t>(kVocab * kDim), 7);
  std::vector<float> w = uniform(static_cast<size_t>(kDim * kN), 8);
  std::vector<float> expect() const {
    std::vector<float> y(ids.size() * kN);
    for (size_t i = 0; i < ids.size(); ++i)
      for (int64_t j = 0; j < kN; ++j) {
        double s = 0;
        for (int64_t k = 0; k < kDim; ++k) s += static_cast<double>(table[ids[i] * kDim + k]) * w[k * kN + j];
        y[i * kN + j] = static_cast<float>(s);
      }
    return y;
  }
};

void run_embedding(onnxc_model* model, const Embedding& e, const std::string& what) {
  onnxc_session* s = nullptr;
  ASSERT_EQ(onnxc_session_create(model, nullptr, &s), ONNXC_OK) << onnxc_last_error();
  int64_t dims[] = {static_cast<int64_t>(e.ids.size())};
  std::vector<int64_t> ids = e.ids;
  onnxc_tensor in{ONNXC_DTYPE_INT64, 1, dims, ids.data()};
  ASSERT_EQ(onnxc_session_set_input(s, 0, &in), ONNXC_OK) << onnxc_session_last_error(s);
  ASSERT_EQ(onnxc_session_run(s), ONNXC_OK) << onnxc_session_last_error(s);
  onnxc_tensor out;
  ASSERT_EQ(onnxc_session_get_output(s, 0, &out), ONNXC_OK);
  const auto expect = e.expect();
  const float* y = static_cast<const float*>(out.data);
  EXPECT_TRUE(all_close(std::vector<float>(y, y + expect.size()), expect, 1e-5, 1e-5)) << what;
  onnxc_session_free(s);
}

TEST(WeightsPlacement, AGatheredTableStaysInTheLibrary) {
  const Embedding e;
  const int64_t rows = static_cast<int64_t>(e.ids.size());
  const uint64_t table_bytes = kVocab * kDim * 4, w_bytes = kDim * kN * 4;
  ModelBuilder mb(13);
  auto* ids = mb.input("ids", DType::Int64, {rows});
  auto* table = mb.const_f32("table", {kVocab, kDim}, e.table);
  auto* h = mb.op("Gather", {table, ids}, "h", DType::Float32, ir::Shape{rows, kDim});
  mb.output(mb.op("MatMul", {h, mb.const_f32("w", {kDim, kN}, e.w)}, "y", DType::Float32, ir::Shape{rows, kN}));
  const std::string so = compile(mb.model(), "weights_gathered").so_path;
  for (const char* mode : {"mapped", "auto", "copy"}) {
    if (std::string(mode) == "auto") unsetenv("ONNXC_WEIGHTS");
    else setenv("ONNXC_WEIGHTS", mode, 1);
    onnxc_model* m = nullptr;
    ASSERT_EQ(onnxc_model_open(so.c_str(), &m), ONNXC_OK) << onnxc_last_error();
    const onnxc_model_desc* d = onnxc_model_desc_of(m);
    EXPECT_GE(d->weights_size, table_bytes + w_bytes) << mode;
    EXPECT_GE(d->weights_size - d->weights_copy_size, table_bytes) << mode << ": the table lies after the prefix";
    const uint64_t copied = onnxc_model_copied_weight_bytes(m);
    if (std::string(mode) == "mapped") EXPECT_EQ(copied, 0u);
    else EXPECT_EQ(copied, d->weights_copy_size) << mode;
    EXPECT_GE(copied + (std::string(mode) == "mapped" ? w_bytes : 0), w_bytes) << mode << ": the MatMul weight is copied";
    EXPECT_LT(copied, table_bytes) << mode << ": the table is not copied";
    run_embedding(m, e, std::string(mode) + ", gathered table");
    onnxc_model_free(m);
  }
  unsetenv("ONNXC_WEIGHTS");

  // Tied: the table is gathered from and also multiplied (its transpose as a MatMul weight).
  ModelBuilder tied(13);
  auto* ids2 = tied.input("ids", DType::Int64, {rows});
  auto* table2 = tied.const_f32("table", {kVocab, kDim}, e.table);
  auto* h2 = tied.op("Gather", {table2, ids2}, "h", DType::Float32, ir::Shape{rows, kDim});
  auto* tt = tied.op("Transpose", {table2}, "tt", DType::Float32, ir::Shape{kDim, kVocab});
  tied.output(tied.op("MatMul", {h2, tt}, "logits", DType::Float32, ir::Shape{rows, kVocab}));
  onnxc_model* m = nullptr;
  ASSERT_EQ(onnxc_model_open(compile(tied.model(), "weights_tied").so_path.c_str(), &m), ONNXC_OK) << onnxc_last_error();
  const onnxc_model_desc* d = onnxc_model_desc_of(m);
  // Whether the compiler folds the transpose into a second constant or reads the table itself, the
  // bytes the MatMul reads whole are in the copied prefix.
  EXPECT_GE(d->weights_copy_size, table_bytes);
  EXPECT_GE(onnxc_model_copied_weight_bytes(m), table_bytes);
  onnxc_model_free(m);
}
#endif

}  // namespace
}  // namespace onnxc::test
