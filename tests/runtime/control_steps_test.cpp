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

enum { E_N };
const char *const kSymbols[] = {"n"};
const uint32_t kExprStart[] = {0, 2};
const int64_t kExprCode[] = {ONNXC_EXPR_SYM, 0};
const int32_t kDimsN[] = {E_N};
enum { T_COND, T_X, T_A, T_B, T_Y };

// y = cond ? (x + 1) + 1 : (-x) + 1: each range has an intermediate of its own (a, b) that the arena may
// place at the same offset, and both ranges write y.
DescBuilder if_model() {
  static const onnxc_tensor_desc tensors[] = {{"cond", 9, ONNXC_TENSOR_INPUT, 0, nullptr, -1, 0, 0, ONNXC_VALUE_TENSOR},
                                              {"x", 1, ONNXC_TENSOR_INPUT, 1, kDimsN, -1, 0, 0, ONNXC_VALUE_TENSOR},
                                              {"a", 1, ONNXC_TENSOR_INTERMEDIATE, 1, kDimsN, -1, 0, 0, ONNXC_VALUE_TENSOR},
                                              {"b", 1, ONNXC_TENSOR_INTERMEDIATE, 1, kDimsN, -1, 0, 0, ONNXC_VALUE_TENSOR},
                                              {"y", 1, ONNXC_TENSOR_OUTPUT, 1, kDimsN, -1, 0, 0, ONNXC_VALUE_TENSOR}};
  static const onnxc_kernel_desc kernels[] = {{"add_one", add_one}, {"negate", negate}};
  static const int32_t inputs[] = {T_COND, T_X}, outputs[] = {T_Y};
  static const int32_t cond[] = {T_COND}, xa[] = {T_X, T_A}, ay[] = {T_A, T_Y}, xb[] = {T_X, T_B}, by[] = {T_B, T_Y};
  static const onnxc_step steps[] = {{4, 1, cond, ONNXC_STEP_BRANCH, 0, nullptr},  // false: to step 4
                                     {0, 2, xa, ONNXC_STEP_KERNEL, 0, nullptr},
                                     {0, 2, ay, ONNXC_STEP_KERNEL, 0, nullptr},
                                     {6, 0, nullptr, ONNXC_STEP_JUMP, 0, nullptr},    // past the else-range
                                     {1, 2, xb, ONNXC_STEP_KERNEL, 0, nullptr},
                                     {0, 2, by, ONNXC_STEP_KERNEL, 0, nullptr}};
  return hand_written({"if", kSymbols, kExprStart, kExprCode, tensors, inputs, outputs, kernels, steps});
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
  int32_t e_count = b.add_expr({ONNXC_EXPR_SYM, 1});
  static const char *const symbols[] = {"n", "count"};
  b.d.symbols = symbols;
  b.d.n_symbols = 2;
  b.tensors.push_back({"nz", 7, ONNXC_TENSOR_INTERMEDIATE, 0, nullptr, -1, 0, 0, ONNXC_VALUE_TENSOR});
  b.set_dims(5, {b.add_expr({ONNXC_EXPR_CONST, 1}), e_count});
  b.steps[1] = onnxc_step{ONNXC_HOST_NONZERO, 0, nullptr, ONNXC_STEP_HOST, 0, nullptr};
  b.set_args(1, {T_X, 5});
  b.set_binds(1, {1});
  EXPECT_EQ(load_error(b), "model 'if': step 1 binds symbol 'count' inside a range a control step may skip");
}

}  // namespace
