// ABI v3 control steps through the public API, on a hand-written descriptor whose kernels are plain C++
// functions: an If as BRANCH / then-range / JUMP / else-range, the condition read per run, arena reuse
// across the two ranges, and the descriptor checks for targets, conditions and binds inside a range.
#include <HalideRuntime.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "desc_builder.h"
#include "onnxc/runtime.h"

namespace {

using ::testing::HasSubstr;

float *data(void *arg) { return reinterpret_cast<float *>(static_cast<halide_buffer_t *>(arg)->host); }
int32_t extent(void *arg) { return static_cast<halide_buffer_t *>(arg)->dim[0].extent; }

int add_one(void **args) {  // {x, y}: y = x + 1
  for (int32_t i = 0; i < extent(args[0]); ++i) data(args[1])[i] = data(args[0])[i] + 1;
  return 0;
}
int negate(void **args) {  // {x, y}: y = -x
  for (int32_t i = 0; i < extent(args[0]); ++i) data(args[1])[i] = -data(args[0])[i];
  return 0;
}

enum { T_COND, T_X, T_A, T_B, T_Y };
constexpr int32_t kFloat = ONNXC_DTYPE_FLOAT, kBool = ONNXC_DTYPE_BOOL;

// y = cond ? (x + 1) + 1 : (-x) + 1: each range has an intermediate of its own (a, b) that the arena may
// place at the same offset, and both ranges write y.
DescBuilder if_model() {
  DescBuilder b("if");
  int32_t n = b.symbol("n");
  b.input("cond", kBool, {});  // T_COND, then the rest in enum order
  b.input("x", kFloat, {n});
  b.intermediate("a", kFloat, {n});
  b.intermediate("b", kFloat, {n});
  b.output("y", kFloat, {n});
  int32_t add_one_k = b.kernel("add_one", add_one), negate_k = b.kernel("negate", negate);
  b.branch(4, T_COND);  // false: to step 4
  b.call(add_one_k, {T_X, T_A});
  b.call(add_one_k, {T_A, T_Y});
  b.jump(6);  // past the else-range
  b.call(negate_k, {T_X, T_B});
  b.call(add_one_k, {T_B, T_Y});
  return b;
}

struct Loaded : LoadedDesc {
  using LoadedDesc::LoadedDesc;
  std::vector<float> run(bool c, std::vector<float> x) {
    uint8_t cond = c;
    int64_t n = static_cast<int64_t>(x.size());
    float none = 0;  // an empty x still passes a pointer
    onnxc_tensor tc{9, 0, nullptr, &cond}, tx{1, 1, &n, x.empty() ? &none : x.data()};
    EXPECT_EQ(onnxc_session_set_input(session, 0, &tc), ONNXC_OK) << onnxc_session_last_error(session);
    EXPECT_EQ(onnxc_session_set_input(session, 1, &tx), ONNXC_OK) << onnxc_session_last_error(session);
    EXPECT_EQ(onnxc_session_run(session), ONNXC_OK) << onnxc_session_last_error(session);
    onnxc_tensor out;
    if (onnxc_session_get_output(session, 0, &out) != ONNXC_OK) return {};
    const float *p = static_cast<const float *>(out.data);
    return std::vector<float>(p, p + out.dims[0]);
  }
};

TEST(ControlSteps, BranchRunsOneRangePerRunAndBothWriteTheOutput) {
  DescBuilder b = if_model();
  Loaded m(b.get());
  ASSERT_NE(m.session, nullptr);
  EXPECT_EQ(m.run(true, {1, 2, 3}), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(m.run(false, {1, 2, 3}), (std::vector<float>{0, -1, -2}));
  EXPECT_EQ(m.run(true, {-1, 0}), (std::vector<float>{1, 2}));
  EXPECT_EQ(m.run(false, {}), (std::vector<float>{}));
}

TEST(ControlSteps, DescriptorChecks) {
  DescBuilder b = if_model();
  b.steps[0].kernel = 0;  // a branch to itself would loop: control only moves forward
  EXPECT_EQ(load_error(b),
            "model 'if': branch step 0 goes to step 0; a target must lie after the step and at most at 6 (the end)");
  b = if_model();
  b.steps[3].kernel = 7;
  EXPECT_EQ(load_error(b), "model 'if': jump step 3 goes to step 7; a target must lie after the step and at most at 6 (the end)");
  b = if_model();
  b.steps[3].kernel = 6;  // the end is a valid target
  b.set_args(0, {T_X});
  EXPECT_EQ(load_error(b), "model 'if': branch step 0's condition must be a bool tensor");
  b = if_model();
  b.set_args(3, {T_X});
  EXPECT_EQ(load_error(b), "model 'if': jump step 3 has 1 args, not 0");
  b = if_model();
  b.set_binds(0, {0});
  EXPECT_EQ(load_error(b), "model 'if': branch step 0 binds 1 symbols; only host steps bind");
  b = if_model();
  b.d.uses_cuda = 1;
  EXPECT_THAT(load_error(b, ONNXC_ERR_UNSUPPORTED), HasSubstr("control steps are not supported in CUDA libraries"));
}

// A host step that binds a symbol inside a range a branch may skip would leave it unbound after the If.
TEST(ControlSteps, NoSymbolBoundInsideASkippableRange) {
  DescBuilder b = if_model();
  int32_t count = b.symbol("count");
  int32_t nz = b.intermediate("nz", ONNXC_DTYPE_INT64, {b.constant(1), count});
  b.set_step(1, ONNXC_STEP_HOST, ONNXC_HOST_NONZERO, {T_X, nz}, {1});
  EXPECT_EQ(load_error(b), "model 'if': step 1 binds symbol 'count' inside a range a control step may skip");
}

}  // namespace
