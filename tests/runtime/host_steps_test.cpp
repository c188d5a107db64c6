// ABI v2 host steps through the public API, on hand-written descriptors (no kernels needed): ops whose
// output sizes depend on data bind symbols at run time, outputs of different sizes across runs, and the
// descriptor checks for steps, binds and the order in which sizes become known.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "desc_builder.h"
#include "onnxc/runtime.h"

namespace {

using ::testing::HasSubstr;

enum { E_N, E_COUNT, E_ONE, E_MINUS1, E_ZERO, E_COUNT2, E_TWO };
constexpr int32_t kFloat = ONNXC_DTYPE_FLOAT, kInt64 = ONNXC_DTYPE_INT64;

// A descriptor with symbols n, count, count2 and the expressions E_* (in that order), no tensors yet.
DescBuilder with_exprs(const char *name) {
  DescBuilder b(name);
  b.symbol("n");
  b.symbol("count");
  b.constant(1);
  b.constant(-1);
  b.constant(0);
  b.symbol("count2");
  b.constant(2);
  return b;
}

// x[n] float -> NonZero -> y[1, count] int64: the smallest model with a symbol bound from data.
DescBuilder nonzero_model() {
  DescBuilder b = with_exprs("nonzero");
  int32_t x = b.input("x", kFloat, {E_N}), y = b.output("y", kInt64, {E_ONE, E_COUNT});
  b.host(ONNXC_HOST_NONZERO, {x, y}, {1});
  return b;
}

std::vector<int64_t> run_i64(onnxc_session *s, const std::vector<float> &x, size_t output, std::vector<int64_t> *dims) {
  int64_t n = static_cast<int64_t>(x.size());
  onnxc_tensor in{1, 1, &n, const_cast<float *>(x.data())};
  EXPECT_EQ(onnxc_session_set_input(s, 0, &in), ONNXC_OK) << onnxc_session_last_error(s);
  EXPECT_EQ(onnxc_session_run(s), ONNXC_OK) << onnxc_session_last_error(s);
  onnxc_tensor out;
  if (onnxc_session_get_output(s, output, &out) != ONNXC_OK) return {};
  dims->assign(out.dims, out.dims + out.rank);
  size_t numel = 1;
  for (int64_t d : *dims) numel *= static_cast<size_t>(d);
  const int64_t *p = static_cast<const int64_t *>(out.data);
  return std::vector<int64_t>(p, p + numel);
}

using Loaded = LoadedDesc;

TEST(HostSteps, NonZeroBindsItsCountPerRun) {
  DescBuilder b = nonzero_model();
  Loaded m(b.get());
  ASSERT_NE(m.session, nullptr);
  onnxc_value_info info;
  ASSERT_EQ(onnxc_model_output_info(m.model, 0, &info), ONNXC_OK);
  EXPECT_EQ(info.dims[1], -1);
  EXPECT_STREQ(info.dim_names[1], "count");
  std::vector<int64_t> dims;
  // -0.0 is zero, NaN is not.
  EXPECT_EQ(run_i64(m.session, {0, 1.5f, -0.0f, NAN, 0}, 0, &dims), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(dims, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(run_i64(m.session, {3, 0, 2, 2, 0, 0, 7, 1}, 0, &dims), (std::vector<int64_t>{0, 2, 3, 6, 7}));
  EXPECT_EQ(dims, (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(run_i64(m.session, {0, 0}, 0, &dims), (std::vector<int64_t>{}));
  EXPECT_EQ(dims, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(run_i64(m.session, {4}, 0, &dims), (std::vector<int64_t>{0}));
}

TEST(HostSteps, UniqueInFirstOccurrenceOrderWithEveryOutput) {
  DescBuilder b = with_exprs("unique");
  int32_t x = b.input("x", kFloat, {E_N}), values = b.output("y", kFloat, {E_COUNT});
  int32_t indices = b.output("indices", kInt64, {E_COUNT}), inverse = b.output("inverse", kInt64, {E_N});
  int32_t counts = b.output("counts", kInt64, {E_COUNT});
  b.host(ONNXC_HOST_UNIQUE, {x, values, indices, inverse, counts, DescBuilder::scalar(E_MINUS1), DescBuilder::scalar(E_ZERO)},
         {1});  // flattened, not sorted
  Loaded m(b.get());
  ASSERT_NE(m.session, nullptr);
  std::vector<int64_t> dims;
  EXPECT_EQ(run_i64(m.session, {2, 1, 1, 3, 4, 3}, 1, &dims), (std::vector<int64_t>{0, 1, 3, 4}));
  onnxc_tensor y;
  ASSERT_EQ(onnxc_session_get_output(m.session, 0, &y), ONNXC_OK);
  const float *yv = static_cast<const float *>(y.data);
  EXPECT_EQ(std::vector<float>(yv, yv + y.dims[0]), (std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(run_i64(m.session, {2, 1, 1, 3, 4, 3}, 2, &dims), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(run_i64(m.session, {2, 1, 1, 3, 4, 3}, 3, &dims), (std::vector<int64_t>{1, 2, 2, 1}));
}

TEST(HostSteps, OutputDimsThatDisagreeWithTheOpAreAnErrorNotAnOverflow) {
  DescBuilder b = nonzero_model();
  b.set_dims(1, {E_COUNT, E_TWO});  // NonZero of a rank-1 input is [1, count]
  Loaded m(b.get());
  ASSERT_NE(m.session, nullptr);
  std::vector<float> x = {1, 0, 1};
  int64_t n = 3;
  onnxc_tensor in{1, 1, &n, x.data()};
  ASSERT_EQ(onnxc_session_set_input(m.session, 0, &in), ONNXC_OK);
  EXPECT_EQ(onnxc_session_run(m.session), ONNXC_ERR_SHAPE_MISMATCH);
  EXPECT_STREQ(onnxc_session_last_error(m.session),
               "step 0 (NonZero): output tensor 1 ('y') has dims [2, 2] but the op produced [1, 2]");
}

TEST(HostSteps, DescriptorChecks) {
  DescBuilder b = nonzero_model();
  b.steps[0].kernel = 99;
  EXPECT_EQ(load_error(b, ONNXC_ERR_UNSUPPORTED), "model 'nonzero': step 0 runs host op 99, which this runtime does not know");
  b = nonzero_model();
  b.steps[0].kind = 7;
  EXPECT_EQ(load_error(b), "model 'nonzero': step 0 has unknown kind 7");
  b = nonzero_model();
  b.set_args(0, {0});
  EXPECT_EQ(load_error(b), "model 'nonzero': step 0 (NonZero) has 1 args, not 2");
  b = nonzero_model();
  b.set_args(0, {0, 0});
  EXPECT_EQ(load_error(b), "model 'nonzero': step 0 (NonZero) writes tensor 0 ('x'), which is not an intermediate or output tensor");
  b = nonzero_model();
  b.set_binds(0, {});
  EXPECT_EQ(load_error(b), "model 'nonzero': step 0 (NonZero) has 0 binds (list NULL), not 1");
  b = nonzero_model();
  b.set_binds(0, {5});
  EXPECT_EQ(load_error(b), "model 'nonzero': step 0 (NonZero) binds symbol 5, out of range (3 symbols)");
  b = nonzero_model();
  b.set_binds(0, {0});  // n is x's dim
  EXPECT_EQ(load_error(b), "model 'nonzero': symbol 'n' is bound from data by a host step but is also used by an input's dims");
  b = nonzero_model();
  b.set_binds(0, {-1});  // nothing binds count
  EXPECT_THAT(load_error(b), HasSubstr("symbol 'count' is used but no input has a dim that is exactly it and no host step binds it"));
  b = nonzero_model();
  b.tensors[1].dtype = 1;
  EXPECT_EQ(load_error(b), "model 'nonzero': step 0 (NonZero): output must be int64 of rank 2");
  b = nonzero_model();
  b.d.uses_cuda = 1;
  EXPECT_EQ(load_error(b, ONNXC_ERR_UNSUPPORTED),
            "model 'nonzero': step 0 runs host op NonZero, but host steps are not supported in CUDA libraries");
}

TEST(HostSteps, NothingIsUsedBeforeTheStepThatSizesIt) {
  // Step 0 reads y, which step 1 sizes: refused at load.
  DescBuilder b = nonzero_model();
  b.output("z", kInt64, {E_TWO, E_COUNT2});
  b.tensors[1].kind = ONNXC_TENSOR_INTERMEDIATE;
  b.outputs = {2};
  b.steps.push_back(b.steps[0]);
  b.set_args(0, {1, 2});
  b.set_binds(0, {2});
  EXPECT_EQ(load_error(b), "model 'nonzero': step 0 arg 0 uses a size that step 1 binds from data, not before");
  // In the right order the chain runs: nonzero of nonzero's (int64) output.
  std::swap(b.steps[0], b.steps[1]);
  Loaded m(b.get());
  ASSERT_NE(m.session, nullptr);
  std::vector<int64_t> dims;
  EXPECT_EQ(run_i64(m.session, {0, 5, 0, 6}, 0, &dims), (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(dims, (std::vector<int64_t>{2, 2}));
}

}  // namespace
