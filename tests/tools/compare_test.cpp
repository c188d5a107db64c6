// onnxc_check's comparison: ONNX's allclose rule, NaN/inf handling, exact dtypes, shape and dtype
// mismatches, worst-element indices and the report table.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tools/check/compare.h"

namespace onnxc::check {
namespace {

using ir::DType;
using ir::Tensor;

Tensor f32(std::vector<int64_t> dims, std::vector<float> v) { return Tensor::from_vector(DType::Float32, dims, v); }

TEST(Compare, EqualTensorsMatch) {
  TensorReport r = compare_tensors("y", f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {1, 2, 3, 4}), {});
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.mismatches, 0);
  EXPECT_EQ(r.numel, 4);
  EXPECT_EQ(r.max_abs_err, 0);
  EXPECT_TRUE(r.worst.empty());
}

TEST(Compare, ToleranceIsAtolPlusRtolTimesExpected) {
  Tolerance tol{1e-3, 1e-7};
  // |a - e| <= 1e-7 + 1e-3 * 100 = 0.1000001
  EXPECT_TRUE(compare_tensors("y", f32({1}, {100.1f}), f32({1}, {100}), tol).ok);
  EXPECT_FALSE(compare_tensors("y", f32({1}, {100.2f}), f32({1}, {100}), tol).ok);
  // Relative to the expected value, not the actual one.
  EXPECT_FALSE(compare_tensors("y", f32({1}, {0}), f32({1}, {1e-6f}), tol).ok);
}

TEST(Compare, NanMatchesNanOnly) {
  float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(compare_tensors("y", f32({2}, {nan, inf}), f32({2}, {nan, inf}), {}).ok);
  TensorReport r = compare_tensors("y", f32({3}, {nan, 1, -inf}), f32({3}, {1, nan, inf}), {});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 3);
  EXPECT_TRUE(std::isnan(r.max_abs_err));
}

TEST(Compare, WorstElementsComeWithRowMajorIndices) {
  std::vector<float> a(24, 0), e(24, 0);
  a[1 * 12 + 2 * 4 + 3] = 5;  // [1,2,3]
  a[7] = 1;                   // [0,1,3]
  TensorReport r = compare_tensors("y", f32({2, 3, 4}, a), f32({2, 3, 4}, e), {}, 5);
  ASSERT_EQ(r.worst.size(), 2u);
  EXPECT_EQ(index_str(r.worst[0].index), "[1,2,3]");
  EXPECT_EQ(r.worst[0].abs_err, 5);
  EXPECT_EQ(index_str(r.worst[1].index), "[0,1,3]");
  EXPECT_EQ(r.mismatches, 2);
}

TEST(Compare, WorstListIsBounded) {
  std::vector<float> a(100), e(100, 0);
  for (int i = 0; i < 100; ++i) a[i] = static_cast<float>(i);
  TensorReport r = compare_tensors("y", f32({100}, a), f32({100}, e), {}, 3);
  EXPECT_EQ(r.mismatches, 99);
  ASSERT_EQ(r.worst.size(), 3u);
  EXPECT_EQ(r.worst[0].index[0], 99);
  EXPECT_EQ(r.worst[2].index[0], 97);
}

TEST(Compare, IntegersAndBoolsAreExact) {
  Tensor a = Tensor::from_vector<int64_t>(DType::Int64, {3}, {1, 2, 3});
  Tensor e = Tensor::from_vector<int64_t>(DType::Int64, {3}, {1, 2, 4});
  TensorReport r = compare_tensors("i", a, e, Tolerance{1, 1});  // tolerances do not apply
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.mismatches, 1);
  Tensor b1 = Tensor::from_vector<uint8_t>(DType::Bool, {2}, {1, 0});
  Tensor b2 = Tensor::from_vector<uint8_t>(DType::Bool, {2}, {1, 1});
  TensorReport rb = compare_tensors("b", b1, b2, {});
  EXPECT_FALSE(rb.ok);
  ASSERT_EQ(rb.worst.size(), 1u);
  EXPECT_EQ(rb.worst[0].actual, "false");
}

TEST(Compare, StringsAreExact) {
  Tensor a = Tensor::strings({2}, {"a", "b"});
  EXPECT_TRUE(compare_tensors("s", a, Tensor::strings({2}, {"a", "b"}), {}).ok);
  TensorReport r = compare_tensors("s", a, Tensor::strings({2}, {"a", "c"}), {});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.worst.at(0).expected, "\"c\"");
}

TEST(Compare, ShapeAndDtypeMustMatch) {
  TensorReport r = compare_tensors("y", f32({2, 3}, std::vector<float>(6)), f32({3, 2}, std::vector<float>(6)), {});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.problem, "shape [2,3], expected [3,2]");
  Tensor d = Tensor::from_vector<double>(DType::Float64, {2}, {1, 2});
  r = compare_tensors("y", f32({2}, {1, 2}), d, {});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.problem, "dtype f32, expected f64");
}

TEST(Compare, UnravelIndex) {
  EXPECT_EQ(unravel_index(0, {2, 3}), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(unravel_index(5, {2, 3}), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(unravel_index(0, {}), (std::vector<int64_t>{}));
}

TEST(Compare, ReportTableNamesFailingOutputAndIndex) {
  TensorReport ok = compare_tensors("a", f32({1}, {1}), f32({1}, {1}), {});
  TensorReport bad = compare_tensors("b", f32({2}, {0, 3}), f32({2}, {0, 1}), {});
  std::string text = format_reports("set0", {ok, bad}, {});
  EXPECT_NE(text.find("set0"), std::string::npos);
  EXPECT_NE(text.find("MISMATCH"), std::string::npos);
  EXPECT_NE(text.find("worst elements of 'b'"), std::string::npos);
  EXPECT_NE(text.find("[1]"), std::string::npos);
  // Columns are aligned: the result column starts at the same offset on every row.
  size_t h = text.find("result"), line_start = text.rfind('\n', h) + 1;
  size_t row = text.find("\n  a ") + 1;
  EXPECT_EQ(text.find("ok", row) - row, h - line_start);
}

// Sequences and optionals: kinds, presence and lengths must agree, then each tensor element-wise.
frontend::TestValue tv(std::vector<float> x) {
  frontend::TestValue v;
  v.tensor = Tensor::from_vector<float>(DType::Float32, {static_cast<int64_t>(x.size())}, x);
  return v;
}
frontend::TestValue seq(std::vector<frontend::TestValue> items) {
  frontend::TestValue v;
  v.kind = frontend::TestValue::Kind::Sequence;
  v.elements = std::move(items);
  return v;
}

TEST(CompareValues, SequencesAndOptionals) {
  Tolerance tol;
  EXPECT_TRUE(compare_values("s", seq({tv({1, 2}), tv({3})}), seq({tv({1, 2}), tv({3})}), tol).ok);
  TensorReport r = compare_values("s", seq({tv({1, 2}), tv({4})}), seq({tv({1, 2}), tv({3})}), tol);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.name, "s[1]");
  EXPECT_EQ(r.mismatches, 1);
  r = compare_values("s", seq({tv({1, 2})}), seq({tv({1, 2}), tv({3})}), tol);
  EXPECT_EQ(r.problem, "has 1 items but the reference has 2");
  frontend::TestValue empty;
  empty.kind = frontend::TestValue::Kind::Optional;
  frontend::TestValue some = empty;
  some.elements.push_back(tv({1}));
  EXPECT_TRUE(compare_values("o", empty, empty, tol).ok);
  EXPECT_EQ(compare_values("o", empty, some, tol).problem, "is an empty optional but the reference holds a value");
  EXPECT_EQ(compare_values("o", seq({}), some, tol).problem, "is a sequence but the reference is an optional");
}

}  // namespace
}  // namespace onnxc::check
