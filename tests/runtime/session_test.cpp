// Runs the tiny model (real Halide AOT kernels, hand-written descriptor) through the public C API: for
// several shapes, statically linked and dlopen()ed, with views, a weight and symbolic dims; then every
// error path, asserted by its message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "onnxc/runtime.h"
#include "desc_builder.h"
#include "tiny_model.h"
#include "tiny_reference.h"
#include "session_check.h"

namespace {

using ::testing::HasSubstr;

class TinySession : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(onnxc_model_from_desc(onnxc_model_tiny(), &model.m), ONNXC_OK) << onnxc_last_error();
    ASSERT_EQ(onnxc_session_create(model.m, nullptr, &session.s), ONNXC_OK) << onnxc_last_error();
  }
  // Expects `status` from the last call and `message` as the session's and the thread's last error.
  void expect_error(onnxc_status got, onnxc_status want, const std::string &message) {
    EXPECT_EQ(got, want) << onnxc_status_string(got);
    EXPECT_EQ(std::string(onnxc_session_last_error(session.s)), message);
    EXPECT_EQ(std::string(onnxc_last_error()), message);
  }
  ModelPtr model;
  SessionPtr session;
  TinyCase small{2, 3};
};

TEST_F(TinySession, DescribesInputsAndOutputs) {
  EXPECT_STREQ(onnxc_model_name(model.m), "tiny");
  ASSERT_EQ(onnxc_model_num_inputs(model.m), 2u);
  ASSERT_EQ(onnxc_model_num_outputs(model.m), 4u);
  onnxc_value_info x;
  ASSERT_EQ(onnxc_model_input_info(model.m, 0, &x), ONNXC_OK);
  EXPECT_STREQ(x.name, "x");
  EXPECT_EQ(x.dtype, ONNXC_DTYPE_FLOAT);
  ASSERT_EQ(x.rank, 3);
  EXPECT_EQ(std::vector<int64_t>(x.dims, x.dims + 3), (std::vector<int64_t>{-1, -1, 8}));
  EXPECT_STREQ(x.dim_names[0], "batch");
  EXPECT_STREQ(x.dim_names[1], "seq");
  EXPECT_EQ(x.dim_names[2], nullptr);
  onnxc_value_info hflat;
  ASSERT_EQ(onnxc_model_output_info(model.m, 3, &hflat), ONNXC_OK);
  EXPECT_STREQ(hflat.name, "hflat");
  EXPECT_STREQ(hflat.dim_names[1], "seq * 8");
  onnxc_value_info p;
  ASSERT_EQ(onnxc_model_output_info(model.m, 2, &p), ONNXC_OK);
  EXPECT_EQ(p.dtype, ONNXC_DTYPE_BOOL);
  size_t index = 99;
  EXPECT_EQ(onnxc_model_output_index(model.m, "z", &index), ONNXC_OK);
  EXPECT_EQ(index, 1u);
  EXPECT_EQ(onnxc_model_input_info(model.m, 2, &x), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(onnxc_last_error(), "input index 2 is out of range: model 'tiny' has 2 inputs");
  EXPECT_EQ(x.name, nullptr) << "out is cleared on failure";
  EXPECT_EQ(onnxc_model_output_index(model.m, "q", &index), ONNXC_ERR_NOT_FOUND);
  EXPECT_STREQ(onnxc_last_error(), "model 'tiny' has no output named 'q'; its outputs are: 'y', 'z', 'p', 'hflat'");
  EXPECT_EQ(onnxc_session_model(session.s), model.m);
}

TEST_F(TinySession, RunsSeveralShapesAndComesBackToACachedPlan) {
  run_and_check(session.s, small);
  uint64_t arena_small = onnxc_session_arena_bytes(session.s);
  EXPECT_GT(arena_small, 0u);
  run_and_check(session.s, TinyCase(3, 17));
  uint64_t arena_large = onnxc_session_arena_bytes(session.s);
  EXPECT_GT(arena_large, arena_small);
  run_and_check(session.s, TinyCase(2, 3, 0.75f));  // same shape as the first, new data
  EXPECT_EQ(onnxc_session_arena_bytes(session.s), arena_large) << "the arena does not shrink";
  run_and_check(session.s, TinyCase(1, 1));
}

TEST_F(TinySession, ArenaReusesMemoryOfDeadIntermediates) {
  // batch 4, seq 16: h, s, y ([4, 16, 8] f32) are 2048 bytes, z 256, p (bool) 64. h lives to the end
  // (hflat is an output); h, s, y and z are all live in step 2; p is born in step 3, after s died, and
  // takes s's place. Without reuse: 3 * 2048 + 256 + 64.
  run_and_check(session.s, TinyCase(4, 16));
  EXPECT_EQ(onnxc_session_arena_bytes(session.s), 3u * 2048 + 256);
}

TEST_F(TinySession, ZeroSizeTensorsRun) {
  run_and_check(session.s, TinyCase(0, 5));
  run_and_check(session.s, TinyCase(3, 0));
  // NULL data is fine for an empty input.
  std::vector<int64_t> xd = {0, 4, 8}, md = {0, 4};
  onnxc_tensor x = tensor(ONNXC_DTYPE_FLOAT, xd, nullptr), m = tensor(ONNXC_DTYPE_FLOAT, md, nullptr);
  ASSERT_EQ(onnxc_session_set_input(session.s, 0, &x), ONNXC_OK) << onnxc_session_last_error(session.s);
  ASSERT_EQ(onnxc_session_set_input(session.s, 1, &m), ONNXC_OK);
  ASSERT_EQ(onnxc_session_run(session.s), ONNXC_OK) << onnxc_session_last_error(session.s);
  onnxc_tensor y;
  ASSERT_EQ(onnxc_session_get_output(session.s, 0, &y), ONNXC_OK);
  EXPECT_EQ(dims_of(y), (std::vector<int64_t>{0, 4, 8}));
  run_and_check(session.s, small);
}

TEST_F(TinySession, OneThreadAndOneCachedPlan) {
  onnxc_session_options opts;
  onnxc_session_options_default(&opts);
  EXPECT_EQ(opts.num_threads, 0);
  EXPECT_EQ(opts.max_cached_plans, 8u);
  opts.num_threads = 1;
  opts.max_cached_plans = 1;
  SessionPtr s;
  ASSERT_EQ(onnxc_session_create(model.m, &opts, &s.s), ONNXC_OK);
  for (int i = 0; i < 3; i++) {
    run_and_check(s.s, TinyCase(2, 3, static_cast<float>(i)));
    run_and_check(s.s, TinyCase(5, 2, static_cast<float>(i)));
  }
}

// The thread count baked in by `onnxc compile --threads` applies when the session asks for 0;
// an explicit session option wins.
int g_threads_requested = -1;
int spy_set_num_threads(int n) {
  g_threads_requested = n;
  return 1;
}

TEST(TinyThreads, LibraryDefaultAppliesUnlessTheSessionSetsOne) {
  DescBuilder b(*onnxc_model_tiny());
  b.d.set_num_threads = spy_set_num_threads;
  b.d.default_num_threads = 3;
  ModelPtr m;
  ASSERT_EQ(onnxc_model_from_desc(b.get(), &m.m), ONNXC_OK) << onnxc_last_error();
  SessionPtr by_default;
  ASSERT_EQ(onnxc_session_create(m.m, nullptr, &by_default.s), ONNXC_OK);
  run_and_check(by_default.s, TinyCase(2, 3));
  EXPECT_EQ(g_threads_requested, 3);
  onnxc_session_options opts;
  onnxc_session_options_default(&opts);
  opts.num_threads = 1;
  SessionPtr explicit_one;
  ASSERT_EQ(onnxc_session_create(m.m, &opts, &explicit_one.s), ONNXC_OK);
  run_and_check(explicit_one.s, TinyCase(2, 3));
  EXPECT_EQ(g_threads_requested, 1);
}

TEST_F(TinySession, SessionsKeepTheirModelAlive) {
  onnxc_model_free(model.m);
  model.m = nullptr;
  run_and_check(session.s, small);
}

TEST_F(TinySession, SessionsRunConcurrently) {
  SessionPtr other;
  ASSERT_EQ(onnxc_session_create(model.m, nullptr, &other.s), ONNXC_OK);
  std::thread t([&] {
    for (int i = 0; i < 20; i++) run_and_check(other.s, TinyCase(3, 7 + i % 3));
  });
  for (int i = 0; i < 20; i++) run_and_check(session.s, TinyCase(2, 4 + i % 2));
  t.join();
}

TEST(TinyLibrary, RunsWhenLoadedWithDlopen) {
  ModelPtr model;
  ASSERT_EQ(onnxc_model_open(ONNXC_TEST_TINY_LIBRARY, &model.m), ONNXC_OK) << onnxc_last_error();
  EXPECT_STREQ(onnxc_model_name(model.m), "tiny");
  EXPECT_NE(onnxc_model_desc_of(model.m), onnxc_model_tiny()) << "the library's own copy, not ours";
  SessionPtr session;
  ASSERT_EQ(onnxc_session_create(model.m, nullptr, &session.s), ONNXC_OK);
  run_and_check(session.s, TinyCase(2, 3));
  run_and_check(session.s, TinyCase(4, 9));
}

TEST(TinyLibrary, OpenReportsWhatWentWrong) {
  ModelPtr model;
  EXPECT_EQ(onnxc_model_open("/nonexistent/libnothing.so", &model.m), ONNXC_ERR_LOAD_FAILED);
  EXPECT_EQ(model.m, nullptr);
  EXPECT_THAT(onnxc_last_error(), HasSubstr("cannot load model library '/nonexistent/libnothing.so': "));
  EXPECT_EQ(onnxc_model_open(ONNXC_TEST_RUNTIME_LIBRARY, &model.m), ONNXC_ERR_LOAD_FAILED);
  EXPECT_EQ(std::string(onnxc_last_error()),
            std::string("'") + ONNXC_TEST_RUNTIME_LIBRARY + "' is not an onnxc model library: it has no symbol onnxc_model_entry");
  EXPECT_EQ(onnxc_model_open(nullptr, &model.m), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(onnxc_last_error(), "onnxc_model_open: library_path is NULL");
  EXPECT_EQ(onnxc_model_open(ONNXC_TEST_TINY_LIBRARY, nullptr), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(onnxc_last_error(), "onnxc_model_open: out is NULL");
}

// ---- input errors ---------------------------------------------------------------------------------

TEST_F(TinySession, RejectsAnInputIndexOrNameThatDoesNotExist) {
  onnxc_tensor x = tensor(ONNXC_DTYPE_FLOAT, small.x_dims, small.x.data());
  expect_error(onnxc_session_set_input(session.s, 2, &x), ONNXC_ERR_INVALID_ARGUMENT,
               "input index 2 is out of range: model 'tiny' has 2 inputs");
  expect_error(onnxc_session_set_input_by_name(session.s, "src", &x), ONNXC_ERR_NOT_FOUND,
               "model 'tiny' has no input named 'src'; its inputs are: 'x', 'm'");
}

TEST_F(TinySession, RejectsTheWrongDtype) {
  std::vector<int64_t> data(small.x.size());
  onnxc_tensor x = tensor(ONNXC_DTYPE_INT64, small.x_dims, data.data());
  expect_error(onnxc_session_set_input(session.s, 0, &x), ONNXC_ERR_DTYPE_MISMATCH,
               "input 'x' (index 0): dtype is int64 (7) but the model expects float32 (1)");
  x.dtype = 14;  // complex64: not even supported
  expect_error(onnxc_session_set_input(session.s, 0, &x), ONNXC_ERR_DTYPE_MISMATCH,
               "input 'x' (index 0): dtype is unsupported (14) but the model expects float32 (1)");
}

TEST_F(TinySession, RejectsTheWrongRank) {
  std::vector<int64_t> dims = {2, 24};
  onnxc_tensor x = tensor(ONNXC_DTYPE_FLOAT, dims, small.x.data());
  expect_error(onnxc_session_set_input(session.s, 0, &x), ONNXC_ERR_SHAPE_MISMATCH,
               "input 'x' (index 0): rank is 2 but the model expects 3");
}

TEST_F(TinySession, RejectsAFixedDimThatDiffers) {
  std::vector<int64_t> dims = {2, 6, 4};
  onnxc_tensor x = tensor(ONNXC_DTYPE_FLOAT, dims, small.x.data());
  expect_error(onnxc_session_set_input(session.s, 0, &x), ONNXC_ERR_SHAPE_MISMATCH,
               "input 'x' (index 0): dim 2 is 4 but the model expects 8");
  dims = {2, -3, 8};
  x = tensor(ONNXC_DTYPE_FLOAT, dims, small.x.data());
  expect_error(onnxc_session_set_input(session.s, 0, &x), ONNXC_ERR_SHAPE_MISMATCH,
               "input 'x' (index 0): dim 1 is -3; dims must be >= 0");
}

TEST_F(TinySession, RejectsASymbolBoundToTwoValues) {
  onnxc_tensor x = tensor(ONNXC_DTYPE_FLOAT, small.x_dims, small.x.data());
  ASSERT_EQ(onnxc_session_set_input(session.s, 0, &x), ONNXC_OK);
  std::vector<int64_t> md = {3, 3};
  std::vector<float> m(9);
  onnxc_tensor mt = tensor(ONNXC_DTYPE_FLOAT, md, m.data());
  expect_error(onnxc_session_set_input(session.s, 1, &mt), ONNXC_ERR_SHAPE_MISMATCH,
               "input 'm' (index 1): dim 0 is 3 but symbol 'batch' is 2, bound by input 'x' (index 0) dim 0");
  md = {2, 4};
  mt = tensor(ONNXC_DTYPE_FLOAT, md, m.data());
  expect_error(onnxc_session_set_input(session.s, 1, &mt), ONNXC_ERR_SHAPE_MISMATCH,
               "input 'm' (index 1): dim 1 is 4 but symbol 'seq' is 3, bound by input 'x' (index 0) dim 1");
}

TEST_F(TinySession, SettingAnInputAgainReplacesIt) {
  TinyCase big(3, 5);
  onnxc_tensor x_small = tensor(ONNXC_DTYPE_FLOAT, small.x_dims, small.x.data());
  ASSERT_EQ(onnxc_session_set_input(session.s, 0, &x_small), ONNXC_OK);
  run_and_check(session.s, big);  // sets x again with batch 3, seq 5: its old symbol values are gone
}

TEST_F(TinySession, RunNeedsEveryInputAndConsumesThem) {
  expect_error(onnxc_session_run(session.s), ONNXC_ERR_INVALID_ARGUMENT,
               "input 'x' (index 0) is not set: set every input before each onnxc_session_run");
  onnxc_tensor x = tensor(ONNXC_DTYPE_FLOAT, small.x_dims, small.x.data());
  ASSERT_EQ(onnxc_session_set_input(session.s, 0, &x), ONNXC_OK);
  expect_error(onnxc_session_run(session.s), ONNXC_ERR_INVALID_ARGUMENT,
               "input 'm' (index 1) is not set: set every input before each onnxc_session_run");
  run_and_check(session.s, small);
  expect_error(onnxc_session_run(session.s), ONNXC_ERR_INVALID_ARGUMENT,
               "input 'x' (index 0) is not set: set every input before each onnxc_session_run");
  onnxc_tensor y;
  expect_error(onnxc_session_get_output(session.s, 0, &y), ONNXC_ERR_INVALID_ARGUMENT,
               "output 'y' (index 0) is not available: the last onnxc_session_run failed or none has run");
}

TEST_F(TinySession, AFailedSetLeavesTheInputUnset) {
  onnxc_tensor x = tensor(ONNXC_DTYPE_FLOAT, small.x_dims, small.x.data());
  onnxc_tensor m = tensor(ONNXC_DTYPE_FLOAT, small.m_dims, small.m.data());
  ASSERT_EQ(onnxc_session_set_input(session.s, 0, &x), ONNXC_OK);
  ASSERT_EQ(onnxc_session_set_input(session.s, 1, &m), ONNXC_OK);
  x.dtype = ONNXC_DTYPE_DOUBLE;
  ASSERT_EQ(onnxc_session_set_input(session.s, 0, &x), ONNXC_ERR_DTYPE_MISMATCH);
  expect_error(onnxc_session_run(session.s), ONNXC_ERR_INVALID_ARGUMENT,
               "input 'x' (index 0) is not set: set every input before each onnxc_session_run");
}

TEST_F(TinySession, RejectsNullPointers) {
  onnxc_tensor x = tensor(ONNXC_DTYPE_FLOAT, small.x_dims, small.x.data()), out;
  expect_error(onnxc_session_set_input(session.s, 0, nullptr), ONNXC_ERR_INVALID_ARGUMENT,
               "input 'x' (index 0): tensor is NULL");
  onnxc_tensor no_dims = x;
  no_dims.dims = nullptr;
  expect_error(onnxc_session_set_input(session.s, 0, &no_dims), ONNXC_ERR_INVALID_ARGUMENT,
               "input 'x' (index 0): dims is NULL");
  onnxc_tensor no_data = x;
  no_data.data = nullptr;
  expect_error(onnxc_session_set_input(session.s, 0, &no_data), ONNXC_ERR_INVALID_ARGUMENT,
               "input 'x' (index 0): data is NULL but the tensor has 48 elements");
  expect_error(onnxc_session_set_input_by_name(session.s, nullptr, &x), ONNXC_ERR_INVALID_ARGUMENT,
               "onnxc_model_input_index: name is NULL");
  expect_error(onnxc_session_get_output(session.s, 0, nullptr), ONNXC_ERR_INVALID_ARGUMENT,
               "onnxc_session_get_output: out is NULL");
  expect_error(onnxc_session_get_output(session.s, 7, &out), ONNXC_ERR_INVALID_ARGUMENT,
               "output index 7 is out of range: model 'tiny' has 4 outputs");

  // No handle: only the thread's last error.
  EXPECT_EQ(onnxc_session_set_input(nullptr, 0, &x), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(onnxc_last_error(), "onnxc_session_set_input: session is NULL");
  EXPECT_EQ(onnxc_session_set_input_by_name(nullptr, "x", &x), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(onnxc_session_run(nullptr), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(onnxc_last_error(), "onnxc_session_run: session is NULL");
  EXPECT_EQ(onnxc_session_get_output(nullptr, 0, &out), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(out.data, nullptr);
  EXPECT_EQ(onnxc_session_get_output_by_name(nullptr, "y", &out), ONNXC_ERR_INVALID_ARGUMENT);
  onnxc_session *s = reinterpret_cast<onnxc_session *>(0x1);
  EXPECT_EQ(onnxc_session_create(nullptr, nullptr, &s), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(s, nullptr);
  EXPECT_STREQ(onnxc_last_error(), "onnxc_session_create: model is NULL");
  EXPECT_EQ(onnxc_session_create(model.m, nullptr, nullptr), ONNXC_ERR_INVALID_ARGUMENT);
  onnxc_model *no_model = reinterpret_cast<onnxc_model *>(0x1);
  EXPECT_EQ(onnxc_model_from_desc(nullptr, &no_model), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(no_model, nullptr);
  EXPECT_STREQ(onnxc_last_error(), "onnxc_model_from_desc: desc is NULL");
  EXPECT_STREQ(onnxc_session_last_error(nullptr), "");
  EXPECT_EQ(onnxc_model_num_inputs(nullptr), 0u);
  EXPECT_STREQ(onnxc_model_name(nullptr), "");
  onnxc_session_free(nullptr);
  onnxc_model_free(nullptr);
  onnxc_session_options_default(nullptr);
}

TEST_F(TinySession, RejectsBadOptions) {
  onnxc_session_options opts;
  onnxc_session_options_default(&opts);
  opts.num_threads = -2;
  SessionPtr s;
  EXPECT_EQ(onnxc_session_create(model.m, &opts, &s.s), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(onnxc_last_error(), "onnxc_session_create: num_threads is -2; use 0 for all cores");
}

TEST_F(TinySession, ArenaLimitIsAnOutOfMemoryError) {
  onnxc_session_options opts;
  onnxc_session_options_default(&opts);
  opts.max_arena_bytes = 4096;
  SessionPtr s;
  ASSERT_EQ(onnxc_session_create(model.m, &opts, &s.s), ONNXC_OK);
  run_and_check(s.s, TinyCase(1, 2));
  TinyCase big(4, 16);
  onnxc_tensor x = tensor(ONNXC_DTYPE_FLOAT, big.x_dims, big.x.data());
  onnxc_tensor m = tensor(ONNXC_DTYPE_FLOAT, big.m_dims, big.m.data());
  ASSERT_EQ(onnxc_session_set_input(s.s, 0, &x), ONNXC_OK);
  ASSERT_EQ(onnxc_session_set_input(s.s, 1, &m), ONNXC_OK);
  EXPECT_EQ(onnxc_session_run(s.s), ONNXC_ERR_OUT_OF_MEMORY);
  EXPECT_STREQ(onnxc_session_last_error(s.s),
               "model 'tiny' needs a 6400-byte arena for these input shapes but max_arena_bytes is 4096");
}

TEST_F(TinySession, ShapesTooLargeForHalideAreReportedNotRun) {
  // 2^31 elements: past what kernels built without large_buffers can index.
  std::vector<int64_t> xd = {1 << 16, 1 << 12, 8}, md = {1 << 16, 1 << 12};
  static float dummy[1];
  onnxc_tensor x = tensor(ONNXC_DTYPE_FLOAT, xd, dummy), m = tensor(ONNXC_DTYPE_FLOAT, md, dummy);
  ASSERT_EQ(onnxc_session_set_input(session.s, 0, &x), ONNXC_OK);
  ASSERT_EQ(onnxc_session_set_input(session.s, 1, &m), ONNXC_OK);
  expect_error(onnxc_session_run(session.s), ONNXC_ERR_SHAPE_MISMATCH,
               "tensor 0 ('x') is too large (with batch=65536, seq=4096): Halide buffers need extents and strides "
               "below 2^31 and, without the large_buffers target feature, fewer than 2^31 elements");
}

TEST(StatusStrings, NameEveryStatus) {
  EXPECT_STREQ(onnxc_status_string(ONNXC_OK), "ONNXC_OK");
  EXPECT_STREQ(onnxc_status_string(ONNXC_ERR_SHAPE_MISMATCH), "ONNXC_ERR_SHAPE_MISMATCH");
  EXPECT_STREQ(onnxc_status_string(ONNXC_ERR_INTERNAL), "ONNXC_ERR_INTERNAL");
  EXPECT_STREQ(onnxc_status_string(static_cast<onnxc_status>(77)), "ONNXC_ERR_(unknown status)");
  EXPECT_EQ(onnxc_dtype_size(ONNXC_DTYPE_BFLOAT16), 2u);
  EXPECT_EQ(onnxc_dtype_size(14), 0u);
  EXPECT_EQ(onnxc_dtype_size(ONNXC_DTYPE_STRING), sizeof(const char *));
  EXPECT_STREQ(onnxc_dtype_name(ONNXC_DTYPE_BOOL), "bool");
}

}  // namespace

// The profiler sees every step once per run, in order, with the library's node text and its flops
// expression evaluated at the run's shapes; without step_info it still sees kernel names and bytes.
struct ProfileLog {
  std::vector<onnxc_step_profile> steps;
  static void record(void *user, const onnxc_step_profile *s) { static_cast<ProfileLog *>(user)->steps.push_back(*s); }
};

TEST(TinyProfile, ReportsEveryStepWithFlopsAndBytes) {
  DescBuilder b(*onnxc_model_tiny());
  static const onnxc_step_info info[] = {{"Add 'a'", 3}, {"Mul 'b'", -1}, {"MatMul 'c'", 4}, {"", -1}};
  b.d.step_info = info;
  ModelPtr m;
  ASSERT_EQ(onnxc_model_from_desc(b.get(), &m.m), ONNXC_OK) << onnxc_last_error();
  SessionPtr s;
  ASSERT_EQ(onnxc_session_create(m.m, nullptr, &s.s), ONNXC_OK);
  ProfileLog log;
  ASSERT_EQ(onnxc_session_set_profiler(s.s, &ProfileLog::record, &log), ONNXC_OK);
  run_and_check(s.s, TinyCase(2, 3));
  ASSERT_EQ(log.steps.size(), 4u);
  for (uint32_t k = 0; k < 4; k++) {
    EXPECT_EQ(log.steps[k].step, k);
    EXPECT_STREQ(log.steps[k].nodes, info[k].nodes);
    EXPECT_LE(log.steps[k].start_ns, log.steps[k].end_ns);
    EXPECT_GT(log.steps[k].bytes, 0u);
    if (k) {
      EXPECT_GE(log.steps[k].start_ns, log.steps[k - 1].end_ns);
    }
  }
  EXPECT_EQ(log.steps[0].flops, 2.0 * 3 * 8);  // expression 3: batch*seq*8
  EXPECT_EQ(log.steps[1].flops, -1.0);
  EXPECT_EQ(log.steps[2].flops, 4.0);  // expression 4: seq + 1
  ASSERT_EQ(onnxc_session_set_profiler(s.s, nullptr, nullptr), ONNXC_OK);
  run_and_check(s.s, TinyCase(2, 3));
  EXPECT_EQ(log.steps.size(), 4u);  // off again
}

TEST(TinyProfile, OutOfRangeFlopsExpressionIsRejected) {
  DescBuilder b(*onnxc_model_tiny());
  static const onnxc_step_info info[] = {{"", 99}, {"", -1}, {"", -1}, {"", -1}};
  b.d.step_info = info;
  ModelPtr m;
  EXPECT_NE(onnxc_model_from_desc(b.get(), &m.m), ONNXC_OK);
  EXPECT_NE(std::string(onnxc_last_error()).find("step 0 counts flops with expression 99"), std::string::npos)
      << onnxc_last_error();
}
