// Normalization lowerings: LayerNormalization (last axis with Mean/InvStdDev outputs, two trailing
// axes), RMSNormalization, BatchNormalization (inference).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

struct LnRef {
  std::vector<float> y, mean, inv;
};

LnRef layer_norm_ref(const std::vector<float>& x, int rows, int len, const std::vector<float>& scale,
                     const std::vector<float>& bias, float eps) {
  LnRef r;
  for (int i = 0; i < rows; ++i) {
    double m = 0, v = 0;
    for (int k = 0; k < len; ++k) m += x[i * len + k];
    m /= len;
    for (int k = 0; k < len; ++k) v += (x[i * len + k] - m) * (x[i * len + k] - m);
    double inv = 1 / std::sqrt(v / len + eps);
    for (int k = 0; k < len; ++k) r.y.push_back(float((x[i * len + k] - m) * inv * scale[k] + (bias.empty() ? 0 : bias[k])));
    r.mean.push_back(float(m));
    r.inv.push_back(float(inv));
  }
  return r;
}

std::vector<float> wave(int n, float scale, float offset = 0) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(std::cos(i * 0.9f) * scale + offset);
  return v;
}

TEST(LowerNorm, LayerNormLastAxisWithStatsOutputs) {
  ModelBuilder b(17);
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n, 2, 8});
  auto scale = wave(8, 0.5f, 1), bias = wave(8, 0.1f);
  auto* s = b.const_f32("scale", {8}, scale);
  auto* bb = b.const_f32("bias", {8}, bias);
  ir::Node* ln = b.node("LayerNormalization", {x, s, bb},
                        {{"y", ir::Type::tensor(DType::Float32, ir::Shape{n, 2, 8})},
                         {"mean", ir::Type::tensor(DType::Float32, ir::Shape{n, 2, 1})},
                         {"inv", ir::Type::tensor(DType::Float32, ir::Shape{n, 2, 1})}});
  ln->set_attr_float("epsilon", 1e-3f);
  for (int i = 0; i < 3; ++i) b.output(ln->output(i));
  auto r = compile(b.model(), "ln_stats");
  LoadedModel lib(r.so_path);
  for (int rows : {1, 3}) {
    auto xv = wave(rows * 16, 3, 0.5f);
    auto out = lib.run({HostTensor::f32({rows, 2, 8}, xv)});
    auto ref = layer_norm_ref(xv, rows * 2, 8, scale, bias, 1e-3f);
    EXPECT_TRUE(all_close(out[0].values<float>(), ref.y, 1e-5, 1e-5));
    EXPECT_TRUE(all_close(out[1].values<float>(), ref.mean, 1e-5, 1e-6));
    EXPECT_TRUE(all_close(out[2].values<float>(), ref.inv, 1e-5, 1e-6));
  }
}

// Row sums run in vector lanes (schedule_rowwise): rows whose length is not a multiple of the
// vector width, few rows (serial) and many (parallel tasks), and a NaN or +inf in one row making
// exactly that row NaN.
TEST(LowerNorm, LayerNormLaneSumsTailsAndSpecialValues) {
  ModelBuilder b(17);
  Dim n = Dim::symbol("n");
  const int lens[] = {17, 777};
  for (int len : lens) {
    std::string id = std::to_string(len);
    auto* x = b.input("x" + id, DType::Float32, {n, len});
    auto* s = b.const_f32("scale" + id, {len}, wave(len, 0.5f, 1));
    auto* bb = b.const_f32("bias" + id, {len}, wave(len, 0.1f));
    b.output(b.op("LayerNormalization", {x, s, bb}, "y" + id, DType::Float32, {n, len}));
  }
  auto r = compile(b.model(), "ln_lanes");
  LoadedModel lib(r.so_path);
  for (int rows : {1, 3, 40}) {
    std::vector<HostTensor> in;
    std::vector<std::vector<float>> xs;
    for (int len : lens) {
      auto xv = wave(rows * len, 3, 100);  // an offset: the deviations are small against the sum
      if (rows == 40) xv[7 * len + len - 1] = NAN, xv[9 * len + 3] = INFINITY;
      xs.push_back(xv);
      in.push_back(HostTensor::f32({rows, len}, xv));
    }
    auto out = lib.run(in);
    for (size_t i = 0; i < 2; ++i) {
      int len = lens[i];
      auto ref = layer_norm_ref(xs[i], rows, len, wave(len, 0.5f, 1), wave(len, 0.1f), 1e-5f);
      EXPECT_TRUE(all_close(out[i].values<float>(), ref.y, 1e-4, 1e-4)) << "len " << len << " rows " << rows;
      if (rows == 40) {
        EXPECT_TRUE(std::isnan(out[i].values<float>()[7 * len])) << "len " << len;
        EXPECT_TRUE(std::isnan(out[i].values<float>()[9 * len])) << "len " << len;
        EXPECT_FALSE(std::isnan(out[i].values<float>()[8 * len])) << "len " << len;
      }
    }
  }
}

TEST(LowerNorm, LayerNormTwoTrailingAxesAndResidualFusion) {
  ModelBuilder b(17);
  auto* x = b.input("x", DType::Float32, {3, 2, 4});
  auto* res = b.input("res", DType::Float32, {3, 2, 4});
  auto scale = wave(8, 0.3f, 1);
  auto* s = b.const_f32("scale", {2, 4}, scale);
  auto* sum = b.op("Add", {x, res}, "sum", DType::Float32, {3, 2, 4});
  ir::Node* ln = b.node("LayerNormalization", {sum, s}, {{"y", ir::Type::tensor(DType::Float32, ir::Shape{3, 2, 4})}});
  ln->set_attr_int("axis", -2);
  b.output(ln->output());
  auto r = compile(b.model(), "ln2");
  EXPECT_EQ(r.kernels, 1);  // the residual Add is inlined into the norm
  LoadedModel lib(r.so_path);
  auto xv = wave(24, 2), rv = wave(24, 1, 0.25f);
  std::vector<float> sv(24);
  for (int i = 0; i < 24; ++i) sv[i] = xv[i] + rv[i];
  auto out = lib.run({HostTensor::f32({3, 2, 4}, xv), HostTensor::f32({3, 2, 4}, rv)});
  EXPECT_TRUE(all_close(out[0].values<float>(), layer_norm_ref(sv, 3, 8, scale, {}, 1e-5f).y, 1e-5, 1e-5));
}

TEST(LowerNorm, RmsAndBatchNorm) {
  ModelBuilder b(23);
  auto* x = b.input("x", DType::Float32, {2, 3, 2});
  auto scale3 = std::vector<float>{0.5f, 1, 2};
  auto* s2 = b.const_f32("s2", {2}, {1.5f, -1});
  b.output(b.op("RMSNormalization", {x, s2}, "rms", DType::Float32, {2, 3, 2}));
  auto* sc = b.const_f32("sc", {3}, scale3);
  auto* bi = b.const_f32("bi", {3}, {0, 1, -1});
  auto* mu = b.const_f32("mu", {3}, {0.5f, 0, 1});
  auto* var = b.const_f32("var", {3}, {1, 4, 0.25f});
  b.output(b.op("BatchNormalization", {x, sc, bi, mu, var}, "bn", DType::Float32, {2, 3, 2}));
  auto xv = wave(12, 2);
  auto out = compile_and_run(b.model(), {HostTensor::f32({2, 3, 2}, xv)});
  std::vector<float> rms, bn;
  for (int r = 0; r < 6; ++r) {
    double q = (xv[2 * r] * xv[2 * r] + xv[2 * r + 1] * xv[2 * r + 1]) / 2;
    double inv = 1 / std::sqrt(q + 1e-5);
    rms.push_back(float(xv[2 * r] * inv * 1.5));
    rms.push_back(float(xv[2 * r + 1] * inv * -1));
  }
  float mus[] = {0.5f, 0, 1}, vars[] = {1, 4, 0.25f}, bis[] = {0, 1, -1};
  for (int i = 0; i < 12; ++i) {
    int c = (i / 2) % 3;
    bn.push_back(float((xv[i] - mus[c]) / std::sqrt(vars[c] + 1e-5) * scale3[c] + bis[c]));
  }
  EXPECT_TRUE(all_close(out[0].values<float>(), rms, 1e-5, 1e-6));
  EXPECT_TRUE(all_close(out[1].values<float>(), bn, 1e-5, 1e-6));
}


// Rows whose count is an expression (x[1:], n - 1 rows), none where x has one row: the norms'
// row-wise kernel then computes and reads nothing (it read row 1 of a one-row x before).
TEST(LowerNorm, LayerAndRmsNormOverNoRowsOfExpressionCount) {
  ModelBuilder b(23);
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n, 8});
  auto* one = b.const_i64("one", {1});
  auto* big = b.const_i64("big", {INT64_MAX});
  auto* zero = b.const_i64("zero", {0});
  auto* rows = b.op("Slice", {x, one, big, zero}, "rows", DType::Float32, {n - 1, 8});
  auto* s = b.const_f32("scale", {8}, wave(8, 0.5f, 1));
  b.output(b.op("LayerNormalization", {rows, s}, "ln", DType::Float32, {n - 1, 8}));
  b.output(b.op("RMSNormalization", {rows, s}, "rms", DType::Float32, {n - 1, 8}));
  LoadedModel lib(compile(b.model(), "norm_no_rows").so_path);
  for (int k : {1, 4}) {
    auto xv = wave(8 * k, 2, 0.3f);
    auto out = lib.run({HostTensor::f32({k, 8}, xv)});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].dims, (std::vector<int64_t>{k - 1, 8}));
    EXPECT_EQ(out[1].dims, (std::vector<int64_t>{k - 1, 8}));
    std::vector<float> xr(xv.begin() + 8, xv.end()), rms;
    for (int r = 0; r + 1 < k; ++r) {
      double sq = 0;
      for (int c = 0; c < 8; ++c) sq += double(xr[r * 8 + c]) * xr[r * 8 + c];
      double inv = 1 / std::sqrt(sq / 8 + 1e-5);
      for (int c = 0; c < 8; ++c) rms.push_back(float(xr[r * 8 + c] * inv * wave(8, 0.5f, 1)[c]));
    }
    EXPECT_TRUE(all_close(out[0].values<float>(), layer_norm_ref(xr, k - 1, 8, wave(8, 0.5f, 1), {}, 1e-5f).y, 1e-5, 1e-5)) << k;
    EXPECT_TRUE(all_close(out[1].values<float>(), rms, 1e-5, 1e-5)) << k;
  }
}

// The other norms over inputs empty at run time: no batch (n = 0: an empty output of the input's
// shape) and no elements to normalize over (the spatial axis 0: every mean and variance is over
// nothing, the output is empty too). Each computes and reads nothing there (bounds checks would
// fail the run), and with n = 2 still gives its values (here: unit rows of LpNormalization).
TEST(LowerNorm, OtherNormsOverEmptyInputs) {
  for (bool spatial : {false, true}) {
    ModelBuilder b(21);
    Dim n = Dim::symbol("n");
    std::vector<Dim> dims = spatial ? std::vector<Dim>{2, 4, n} : std::vector<Dim>{n, 4, 5};
    auto* x = b.input("x", DType::Float32, dims);
    auto* sc = b.const_f32("sc", {4}, {1, 0.5f, 2, -1});
    auto* bi = b.const_f32("bi", {4}, {0, 1, -1, 0.5f});
    auto* mu = b.const_f32("mu", {4}, {0.5f, 0, 1, 0});
    auto* var = b.const_f32("var", {4}, {1, 4, 0.25f, 2});
    b.output(b.op("InstanceNormalization", {x, sc, bi}, "inst", DType::Float32, dims));
    ir::Node* gn = b.node("GroupNormalization", {x, sc, bi}, {{"group", ir::Type::tensor(DType::Float32, ir::Shape(dims))}});
    gn->set_attr_int("num_groups", 2);
    b.output(gn->output());
    b.output(b.op("BatchNormalization", {x, sc, bi, mu, var}, "batch", DType::Float32, dims));
    ir::Node* mvn = b.node("MeanVarianceNormalization", {x}, {{"mvn", ir::Type::tensor(DType::Float32, ir::Shape(dims))}});
    mvn->set_attr_ints("axes", {0, 2});
    b.output(mvn->output());
    ir::Node* lp = b.node("LpNormalization", {x}, {{"lp", ir::Type::tensor(DType::Float32, ir::Shape(dims))}});
    lp->set_attr_int("axis", -1);
    b.output(lp->output());
    LoadedModel lib(compile(b.model(), spatial ? "norms_no_positions" : "norms_no_batch").so_path);
    for (int k : {0, 2}) {
      std::vector<int64_t> shape = spatial ? std::vector<int64_t>{2, 4, k} : std::vector<int64_t>{k, 4, 5};
      const int count = static_cast<int>(shape[0] * shape[1] * shape[2]);
      auto xv = wave(count, 2, 0.3f);
      auto out = lib.run({HostTensor::f32(shape, xv)});
      ASSERT_EQ(out.size(), 5u);
      for (const auto& o : out) {
        EXPECT_EQ(o.dims, shape) << spatial << " " << k;
        EXPECT_EQ(o.values<float>().size(), static_cast<size_t>(count));
      }
      const int len = static_cast<int>(shape[2]);
      for (int r = 0; len > 0 && r < count / len; ++r) {
        double sq = 0;
        for (int c = 0; c < len; ++c) sq += double(out[4].values<float>()[r * len + c]) * out[4].values<float>()[r * len + c];
        EXPECT_NEAR(sq, 1.0, 1e-5) << r;
      }
    }
  }
}

}  // namespace
}  // namespace onnxc::test
