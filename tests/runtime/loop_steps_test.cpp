// ABI v4 loops through the public API, on a hand-written descriptor whose kernels are plain C++
// functions: LOOP / body / NEXT with a trip count and a condition read per run, a carried value, a scan
// output gathered and stacked after the loop (its length bound from data), an outer tensor the body
// reads on every iteration, and the descriptor checks that keep backward jumps to their own loops.
#include <HalideRuntime.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "desc_builder.h"
#include "onnxc/runtime.h"

namespace {

using ::testing::HasSubstr;

template <typename T>
T *data(void *arg) {
  return reinterpret_cast<T *>(static_cast<halide_buffer_t *>(arg)->host);
}
int32_t extent(void *arg) { return static_cast<halide_buffer_t *>(arg)->dim[0].extent; }

int add(void **args) {  // {a, b, y}: y = a + b
  for (int32_t i = 0; i < extent(args[0]); ++i) data<float>(args[2])[i] = data<float>(args[0])[i] + data<float>(args[1])[i];
  return 0;
}
int add_one(void **args) {  // {x, y}: y = x + 1
  for (int32_t i = 0; i < extent(args[0]); ++i) data<float>(args[1])[i] = data<float>(args[0])[i] + 1;
  return 0;
}
int copy(void **args) {  // {x, y}: y = x
  for (int32_t i = 0; i < extent(args[0]); ++i) data<float>(args[1])[i] = data<float>(args[0])[i];
  return 0;
}
int positive(void **args) {  // {stop, cond}: cond = stop > 0
  *data<uint8_t>(args[1]) = *data<int64_t>(args[0]) > 0;
  return 0;
}
int keep_going(void **args) {  // {iter, stop, cond}: cond = iter + 1 < stop
  *data<uint8_t>(args[2]) = *data<int64_t>(args[0]) + 1 < *data<int64_t>(args[1]);
  return 0;
}

enum { T_TRIP, T_STOP, T_X, T_XP1, T_ITER, T_COND, T_ACC, T_TMP, T_NEXT, T_Y, T_SCAN };
enum { K_ADD, K_ADD_ONE, K_COPY, K_POSITIVE, K_KEEP_GOING };
constexpr int32_t kFloat = ONNXC_DTYPE_FLOAT, kInt64 = ONNXC_DTYPE_INT64, kBool = ONNXC_DTYPE_BOOL;

// A scalar argument that passes the constant v.
int32_t scalar_const(DescBuilder &b, int64_t v) { return DescBuilder::scalar(b.constant(v)); }

// acc = x; xp1 = x + 1; loop (at most trip times, while iter + 1 < stop, entered when stop > 0):
// acc = (acc + xp1) + 1, each new acc a scan row. y = acc. xp1 is read only at the start of the body,
// so only the loop's liveness keeps later body tensors (tmp, next) out of its bytes.
DescBuilder loop_model() {
  DescBuilder b("loop");
  int32_t n = b.symbol("n"), count = b.symbol("count");
  b.input("trip", kInt64, {});  // T_TRIP, then the rest in enum order
  b.input("stop", kInt64, {});
  b.input("x", kFloat, {n});
  b.intermediate("xp1", kFloat, {n});
  b.intermediate("iter", kInt64, {});
  b.intermediate("cond", kBool, {});
  b.intermediate("acc", kFloat, {n});
  b.intermediate("tmp", kFloat, {n});
  b.intermediate("next", kFloat, {n});
  b.output("y", kFloat, {n});
  b.output("scan", kFloat, {count, n});
  b.kernel("add", add);  // K_ADD, then the rest in enum order
  b.kernel("add_one", add_one);
  b.kernel("copy", copy);
  b.kernel("positive", positive);
  b.kernel("keep_going", keep_going);
  b.call(K_POSITIVE, {T_STOP, T_COND});
  b.call(K_ADD_ONE, {T_X, T_XP1});
  b.call(K_COPY, {T_X, T_ACC});
  int32_t head = b.loop(10, T_ITER, T_TRIP, T_COND);  // done: to step 10
  b.call(K_ADD, {T_ACC, T_XP1, T_TMP});
  b.call(K_ADD_ONE, {T_TMP, T_NEXT});
  b.call(K_KEEP_GOING, {T_ITER, T_STOP, T_COND});
  b.host(ONNXC_HOST_SCAN_APPEND, {T_NEXT});
  b.call(K_COPY, {T_NEXT, T_ACC});
  b.next(head);
  b.host(ONNXC_HOST_SCAN_COLLECT, {T_SCAN, scalar_const(b, 7), scalar_const(b, 0), scalar_const(b, 0)},
         {1});  // collects what step 7 appended
  b.call(K_COPY, {T_ACC, T_Y});
  return b;
}

struct Result {
  std::vector<float> y;
  std::vector<int64_t> scan_dims;
  std::vector<float> scan;
};

struct Loaded : LoadedDesc {
  using LoadedDesc::LoadedDesc;
  Result run(int64_t trip, int64_t stop, std::vector<float> x) {
    int64_t n = static_cast<int64_t>(x.size());
    float none = 0;
    onnxc_tensor tt{7, 0, nullptr, &trip}, ts{7, 0, nullptr, &stop}, tx{1, 1, &n, x.empty() ? &none : x.data()};
    EXPECT_EQ(onnxc_session_set_input(session, 0, &tt), ONNXC_OK) << onnxc_session_last_error(session);
    EXPECT_EQ(onnxc_session_set_input(session, 1, &ts), ONNXC_OK) << onnxc_session_last_error(session);
    EXPECT_EQ(onnxc_session_set_input(session, 2, &tx), ONNXC_OK) << onnxc_session_last_error(session);
    EXPECT_EQ(onnxc_session_run(session), ONNXC_OK) << onnxc_session_last_error(session);
    Result r;
    onnxc_tensor y, scan;
    if (onnxc_session_get_output(session, 0, &y) != ONNXC_OK || onnxc_session_get_output(session, 1, &scan) != ONNXC_OK) return r;
    r.y.assign(static_cast<const float *>(y.data), static_cast<const float *>(y.data) + y.dims[0]);
    r.scan_dims.assign(scan.dims, scan.dims + scan.rank);
    r.scan.assign(static_cast<const float *>(scan.data), static_cast<const float *>(scan.data) + scan.dims[0] * scan.dims[1]);
    return r;
  }
};

// What the model computes, written out as plain loops.
Result expected(int64_t trip, int64_t stop, const std::vector<float> &x) {
  Result r;
  int64_t k = 0;
  bool cond = stop > 0;
  std::vector<float> acc = x;
  while (k < trip && cond) {
    for (size_t i = 0; i < acc.size(); ++i) acc[i] = acc[i] + (x[i] + 1) + 1;
    r.scan.insert(r.scan.end(), acc.begin(), acc.end());
    cond = k + 1 < stop;
    ++k;
  }
  r.y = acc;
  r.scan_dims = {k, static_cast<int64_t>(x.size())};
  return r;
}

void expect_same(const Result &got, const Result &want) {
  EXPECT_EQ(got.y, want.y);
  EXPECT_EQ(got.scan_dims, want.scan_dims);
  EXPECT_EQ(got.scan, want.scan);
}

TEST(LoopSteps, TripCountConditionCarriedValueAndScanOutput) {
  DescBuilder b = loop_model();
  Loaded m(b.get());
  ASSERT_NE(m.session, nullptr);
  expect_same(m.run(0, 100, {1, 2}), expected(0, 100, {1, 2}));  // no iteration: y = x, scan [0, 2]
  expect_same(m.run(1, 100, {1, 2}), expected(1, 100, {1, 2}));
  expect_same(m.run(5, 100, {1, 2, 3}), expected(5, 100, {1, 2, 3}));  // ended by the trip count
  expect_same(m.run(100, 3, {1, 2, 3}), expected(100, 3, {1, 2, 3}));  // ended by the condition
  expect_same(m.run(100, 0, {4}), expected(100, 0, {4}));              // condition false on entry
  expect_same(m.run(4, 100, {}), expected(4, 100, {}));                // empty values, four iterations
  EXPECT_EQ(expected(5, 100, {1}).y, (std::vector<float>{1 + 5 * 3}));  // the reference itself
}

TEST(LoopSteps, DescriptorChecks) {
  DescBuilder b = loop_model();
  b.steps[9].kernel = 2;  // back to a kernel step: a loop only the model's data could not end
  EXPECT_EQ(load_error(b), "model 'loop': loop step 3 exits to step 10, but step 9 is not its next step");
  b = loop_model();  // a second way back to the same loop
  b.set_step(11, ONNXC_STEP_NEXT, 3);
  EXPECT_EQ(load_error(b), "model 'loop': next step 11 goes back to step 3, which is not a loop step whose exit is step 12");
  b = loop_model();
  b.steps[3].kernel = 9;  // the step before the exit must be the loop's NEXT
  EXPECT_EQ(load_error(b), "model 'loop': loop step 3 exits to step 9, but step 8 is not its next step");
  b = loop_model();
  b.steps[3].kernel = 13;
  EXPECT_EQ(load_error(b), "model 'loop': loop step 3 exits to step 13; the exit must lie after a body and at most at 12 (the end)");
  b = loop_model();
  b.set_args(3, {T_X, T_TRIP, T_COND});
  EXPECT_EQ(load_error(b), "model 'loop': loop step 3's iteration count must be an int64 intermediate tensor");
  b = loop_model();
  b.set_args(3, {T_ITER, T_TRIP, T_X});
  EXPECT_EQ(load_error(b), "model 'loop': loop step 3's condition must be a bool tensor");
  b = loop_model();  // a jump from before the loop into its body
  b.set_step(0, ONNXC_STEP_JUMP, 5);
  EXPECT_EQ(load_error(b), "model 'loop': step 0 goes to step 5 across the edge of the loop body at steps 3..9");
  b = loop_model();  // a collect that names a kernel step as its append step
  b.set_args(10, {T_SCAN, scalar_const(b, 6), scalar_const(b, 0), scalar_const(b, 0)});
  EXPECT_EQ(load_error(b), "model 'loop': step 10 (ScanCollect): its append step must be an earlier ScanAppend step, named by a constant");
  b = loop_model();  // reverse is a flag
  b.set_args(10, {T_SCAN, scalar_const(b, 7), scalar_const(b, 0), scalar_const(b, 2)});
  EXPECT_EQ(load_error(b),
            "model 'loop': step 10 (ScanCollect): the axis must be a constant in [0, 1] and the reverse flag a constant 0 or 1");
  b = loop_model();  // the scan output has the appended value's rank plus one
  b.set_args(10, {T_Y, scalar_const(b, 7), scalar_const(b, 0), scalar_const(b, 0)});
  EXPECT_EQ(load_error(b), "model 'loop': step 10 (ScanCollect): Y must have the appended X's dtype and one dim more");
  b = loop_model();
  b.d.uses_cuda = 1;
  EXPECT_THAT(load_error(b, ONNXC_ERR_UNSUPPORTED), HasSubstr("not supported in CUDA libraries"));
}

// A symbol bound inside a body would be bound once per iteration: refused like one inside an If range.
TEST(LoopSteps, NoSymbolBoundInsideABody) {
  DescBuilder b = loop_model();
  b.steps[8] = b.steps[10];  // the collect moves into the body, right after its append
  b.set_args(8, {T_SCAN, scalar_const(b, 7), scalar_const(b, 0), scalar_const(b, 0)});
  b.set_step(10, ONNXC_STEP_KERNEL, K_COPY, {T_NEXT, T_ACC});
  EXPECT_EQ(load_error(b), "model 'loop': step 8 binds symbol 'count' inside a range a control step may skip");
}

}  // namespace
