// The REDUCE host op (a Reduce* whose axes are data) on hand-written descriptors: x [2, 3] reduced over
// the axis the data names, keepdims=0, each reduction kind, against values computed here.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "desc_builder.h"
#include "onnxc/runtime.h"

namespace {

enum Kind { SUM, MEAN, MAX, MIN, PROD, L1, L2, LOGSUM, LOGSUMEXP, SUMSQUARE };

// x [2, 3] of `dtype`, axes int64 [1] -> REDUCE(kind) -> y [count]; returns y as doubles.
template <class T>
std::vector<double> reduce(int32_t dtype, Kind kind, const std::vector<T> &x, int64_t axis) {
  DescBuilder b("reduce");
  int32_t count = b.symbol("count");
  int32_t two = b.constant(2), three = b.constant(3), one = b.constant(1), zero = b.constant(0), k = b.constant(kind);
  int32_t in = b.input("x", dtype, {two, three}), axes = b.input("axes", ONNXC_DTYPE_INT64, {one});
  int32_t y = b.output("y", dtype, {count});
  b.host(ONNXC_HOST_REDUCE, {in, axes, y, DescBuilder::scalar(zero), DescBuilder::scalar(zero), DescBuilder::scalar(k)}, {0});
  LoadedDesc m(b.get());
  if (!m.session) return {};
  int64_t xd[] = {2, 3}, ad[] = {1};
  onnxc_tensor tx{dtype, 2, xd, const_cast<T *>(x.data())}, ta{ONNXC_DTYPE_INT64, 1, ad, &axis};
  EXPECT_EQ(onnxc_session_set_input(m.session, 0, &tx), ONNXC_OK);
  EXPECT_EQ(onnxc_session_set_input(m.session, 1, &ta), ONNXC_OK);
  EXPECT_EQ(onnxc_session_run(m.session), ONNXC_OK) << onnxc_session_last_error(m.session);
  onnxc_tensor out;
  EXPECT_EQ(onnxc_session_get_output(m.session, 0, &out), ONNXC_OK);
  const T *p = static_cast<const T *>(out.data);
  return std::vector<double>(p, p + out.dims[0]);
}

TEST(HostReduce, EveryKindOverTheAxisTheDataNames) {
  const std::vector<float> x = {1, -2, 3, 0.5f, 4, -1};  // rows {1, -2, 3}, {0.5, 4, -1}
  auto f = [&](Kind k, int64_t axis) { return reduce<float>(ONNXC_DTYPE_FLOAT, k, x, axis); };
  EXPECT_EQ(f(SUM, 1), (std::vector<double>{2, 3.5}));
  EXPECT_EQ(f(SUM, 0), (std::vector<double>{1.5, 2, 2}));
  EXPECT_EQ(f(MEAN, -1), (std::vector<double>{static_cast<float>(2.0 / 3), static_cast<float>(3.5 / 3)}));  // in double, then rounded
  EXPECT_EQ(f(MAX, 1), (std::vector<double>{3, 4}));
  EXPECT_EQ(f(MIN, 0), (std::vector<double>{0.5, -2, -1}));
  EXPECT_EQ(f(PROD, 1), (std::vector<double>{-6, -2}));
  EXPECT_EQ(f(L1, 1), (std::vector<double>{6, 5.5}));
  EXPECT_EQ(f(SUMSQUARE, 1), (std::vector<double>{14, 17.25}));
  std::vector<double> l2 = f(L2, 1), ls = f(LOGSUM, 0), lse = f(LOGSUMEXP, 1);
  EXPECT_FLOAT_EQ(l2[0], std::sqrt(14.0f));
  EXPECT_FLOAT_EQ(ls[0], std::log(1.5f));
  EXPECT_FLOAT_EQ(lse[1], std::log(std::exp(0.5) + std::exp(4.0) + std::exp(-1.0)));
}

TEST(HostReduce, NanPropagatesThroughMaxAndMin) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<double> m = reduce<float>(ONNXC_DTYPE_FLOAT, MAX, {1, nan, 3, 4, 5, 6}, 1);
  EXPECT_TRUE(std::isnan(m[0]));
  EXPECT_EQ(m[1], 6);
  EXPECT_TRUE(std::isnan(reduce<float>(ONNXC_DTYPE_FLOAT, MIN, {nan, 1, 3, 4, 5, 6}, 0)[0]));
}

TEST(HostReduce, IntegersFoldExactly) {
  EXPECT_EQ(reduce<int32_t>(ONNXC_DTYPE_INT32, MAX, {-5, -7, -9, 1, 2, 3}, 1), (std::vector<double>{-5, 3}));
  EXPECT_EQ(reduce<int64_t>(ONNXC_DTYPE_INT64, PROD, {2, 3, 4, -1, 5, 6}, 1), (std::vector<double>{24, -30}));
  EXPECT_EQ(reduce<int32_t>(ONNXC_DTYPE_INT32, MEAN, {1, 2, 4, 5, 5, 5}, 1), (std::vector<double>{2, 5}));  // 7/3 truncates
}

}  // namespace
