// The CUDA path without a GPU: fake kernels over the fake device of fake_cuda_device.h, so the test sees
// what the runtime does with device handles, dirty bits and the device arena. Checked: every arena
// tensor is a range of one device allocation at its plan offset; views read their root's range; inputs
// are uploaded every run (or wrapped when the caller gives device pointers); outputs are copied back, or
// left on the device and copied when read; the arena grows, never shrinks; nothing outlives the session;
// kernels see the session's context and stream; profiling waits for the device after each step; the
// device calls check their arguments. cuda_arena_plan_test.cpp checks the plan at several shapes.
#include <gtest/gtest.h>

#include <HalideRuntime.h>
#include <dlfcn.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "desc_builder.h"
#include "fake_cuda_device.h"
#include "onnxc/runtime.h"

namespace {

using namespace fake_cuda;

// The session's context and stream as the library's Halide runtime would see them: the runtime installs
// its handlers through the descriptor's setters, a kernel asks them.
onnxc_cuda_acquire_context_fn acquire_handler;
onnxc_cuda_get_stream_fn stream_handler;
onnxc_cuda_acquire_context_fn set_acquire(onnxc_cuda_acquire_context_fn h) { return std::exchange(acquire_handler, h); }
onnxc_cuda_release_context_fn set_release(onnxc_cuda_release_context_fn) { return nullptr; }
onnxc_cuda_get_stream_fn set_stream(onnxc_cuda_get_stream_fn h) { return std::exchange(stream_handler, h); }
struct Seen {
  int acquire_rc = 0;
  void *context = nullptr, *stream = nullptr;
} seen;

// out = 2 * in, "on the device".
int fake_double(void **args) {
  auto *in = static_cast<halide_buffer_t *>(args[0]);
  auto *out = static_cast<halide_buffer_t *>(args[1]);
  if (acquire_handler) {
    seen.acquire_rc = acquire_handler(nullptr, &seen.context, true);
    if (seen.acquire_rc != 0) return halide_error_code_generic_error;
    stream_handler(nullptr, seen.context, &seen.stream);
  }
  make_readable(in);
  if (!out->device) fake_device_malloc(nullptr, out, fake_interface());
  dev.calls.emplace_back(in->device, out->device);
  dev.touch(in->device, bytes(in));
  dev.touch(out->device, bytes(out));
  const auto *src = reinterpret_cast<const float *>(dev.at(in->device));
  auto *dst = reinterpret_cast<float *>(dev.at(out->device));
  for (int i = 0; i < in->dim[0].extent; i++) dst[i] = 2 * src[i];
  out->flags = halide_buffer_flag_device_dirty;
  return 0;
}


// x [n] -> a = 2x -> b = 2a -> c = 2b -> y = 2 * cv (cv a view of c). Outputs: y and ao (a view of a).
// Lifetimes (steps 0..3; outputs to the end): a 0..end, b 1..2, c 2..3, y 3..end: b's bytes may be
// reused for y, never for c or a.
enum { X, A, B, C, CV, Y, AO };
DescBuilder cuda_model(bool with_stream_hooks = false) {
  DescBuilder b("fake_cuda");
  use_fake_device(b);
  acquire_handler = nullptr;  // what an earlier test's library installed is not this one's
  stream_handler = nullptr;
  if (with_stream_hooks) {
    b.d.set_cuda_acquire_context = set_acquire;
    b.d.set_cuda_release_context = set_release;
    b.d.set_cuda_get_stream = set_stream;
  }
  int32_t n = b.symbol("n");
  b.input("x", ONNXC_DTYPE_FLOAT, {n});  // X, then the rest in enum order
  b.intermediate("a", ONNXC_DTYPE_FLOAT, {n});
  b.intermediate("b", ONNXC_DTYPE_FLOAT, {n});
  b.intermediate("c", ONNXC_DTYPE_FLOAT, {n});
  b.view("cv", ONNXC_DTYPE_FLOAT, {n}, C);
  b.output("y", ONNXC_DTYPE_FLOAT, {n});
  b.view("ao", ONNXC_DTYPE_FLOAT, {n}, A);
  b.outputs.push_back(AO);
  int32_t twice = b.kernel("fake_double", fake_double);
  b.call(twice, {X, A});
  b.call(twice, {A, B});
  b.call(twice, {B, C});
  b.call(twice, {CV, Y});
  return b;
}

std::vector<float> input(int64_t n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) x[static_cast<size_t>(i)] = static_cast<float>(i) + 0.5f;
  return x;
}

void expect_outputs(const float *y, const float *ao, const std::vector<float> &x) {
  for (size_t i = 0; i < x.size(); i++) {
    EXPECT_FLOAT_EQ(y[i], 16 * x[i]) << i;
    EXPECT_FLOAT_EQ(ao[i], 2 * x[i]) << i;
  }
}

void run(onnxc_session *s, int64_t n) {
  std::vector<float> x = input(n);
  onnxc_tensor in{ONNXC_DTYPE_FLOAT, 1, &n, x.data()};
  ASSERT_EQ(onnxc_session_set_input(s, 0, &in), ONNXC_OK) << onnxc_session_last_error(s);
  dev.calls.clear();
  ASSERT_EQ(onnxc_session_run(s), ONNXC_OK) << onnxc_session_last_error(s);
  onnxc_tensor y, ao;
  ASSERT_EQ(onnxc_session_get_output(s, 0, &y), ONNXC_OK);
  ASSERT_EQ(onnxc_session_get_output(s, 1, &ao), ONNXC_OK);
  expect_outputs(static_cast<float *>(y.data), static_cast<float *>(ao.data), x);
}

// The device ranges the last run gave a, b, c, y (from the kernels' calls), checked against the arena
// and against each other where the tensors are live together.
void expect_arena_layout(int64_t n) {
  ASSERT_EQ(dev.calls.size(), 4u);
  uint64_t a = dev.calls[0].second, b = dev.calls[1].second, c = dev.calls[2].second, y = dev.calls[3].second;
  EXPECT_EQ(dev.calls[1].first, a);
  EXPECT_EQ(dev.calls[2].first, b);
  EXPECT_EQ(dev.calls[3].first, c) << "the view cv reads c's range";
  ASSERT_FALSE(dev.arena_sizes.empty());
  const uint64_t arena = dev.arena;
  ASSERT_EQ(dev.allocations.count(arena), 1u) << "the arena is live";
  uint64_t size = static_cast<uint64_t>(n) * 4;
  for (uint64_t t : {a, b, c, y}) {
    EXPECT_GE(t, arena);
    EXPECT_LE(t + size, arena + dev.arena_sizes.back()) << "inside the arena";
    EXPECT_EQ((t - arena) % 64, 0u) << "64-byte aligned offsets";
  }
  auto disjoint = [&](uint64_t p, uint64_t q) { return p + size <= q || q + size <= p; };
  EXPECT_TRUE(disjoint(a, b) && disjoint(a, c) && disjoint(a, y)) << "a lives to the end (output view ao)";
  EXPECT_TRUE(disjoint(b, c)) << "b and c meet in step 2";
  EXPECT_TRUE(disjoint(c, y)) << "c (through cv) and y meet in step 3";
}

TEST(CudaBookkeeping, IntermediatesLiveInOneDeviceArenaAtTheirPlanOffsets) {
  dev = FakeDevice();
  DescBuilder b = cuda_model();
  LoadedDesc m(b.get());
  ASSERT_NE(m.session, nullptr);
  onnxc_session *s = m.session;
  EXPECT_EQ(onnxc_model_device(m.model), ONNXC_DEVICE_CUDA);

  run(s, 40);
  EXPECT_FALSE(dev.bad_read);
  expect_arena_layout(40);
  EXPECT_EQ(dev.arena_sizes.size(), 1u);
  EXPECT_EQ(dev.arena_sizes[0], onnxc_session_arena_bytes(s)) << "the device arena has the host arena's plan";
  EXPECT_EQ(dev.mallocs, 2) << "the arena and the input x: a, b, c, y are ranges of the arena";
  EXPECT_EQ(dev.uploads, 1);
  EXPECT_EQ(dev.downloads, 2) << "y, and a for the output view ao";

  run(s, 40);  // same size: the same allocations, the new input uploaded
  expect_arena_layout(40);
  EXPECT_EQ(dev.mallocs, 2);
  EXPECT_EQ(dev.frees, 0);
  EXPECT_EQ(dev.uploads, 2);

  run(s, 8);  // smaller: the arena stays, the input's own allocation is replaced
  expect_arena_layout(8);
  EXPECT_EQ(dev.arena_sizes.size(), 1u);
  EXPECT_EQ(dev.frees, 1);

  run(s, 100);  // larger: the arena grows once
  EXPECT_FALSE(dev.bad_read);
  expect_arena_layout(100);
  EXPECT_EQ(dev.arena_sizes.size(), 2u);
  EXPECT_GT(dev.arena_sizes[1], dev.arena_sizes[0]);
  EXPECT_EQ(dev.frees, 3) << "the old arena and the old input";

  EXPECT_FALSE(dev.overflow) << "every copy and kernel stayed inside its allocation";

  m.free_session();
  EXPECT_TRUE(dev.allocations.empty()) << "no device allocation outlives the session";
  EXPECT_EQ(dev.wraps, dev.detaches) << "every wrapped range let go";
  EXPECT_FALSE(dev.bad_read);
}

// The sequence that failed on an H100 (bench/gpu/device_io.c: batch 1 seq 7, then batch 3 seq 64):
// small, large, small. The input given on the host has Halide's own allocation; when its size changes
// the session frees it, and Halide keeps it for reuse under the size its buffer describes. Freed under
// the new run's (larger) shape, the small allocation was taken for the large input, whose upload then
// ran past its end (cuMemcpyHtoD: CUDA_ERROR_INVALID_VALUE).
TEST(CudaBookkeeping, InputAllocationsFollowTheShapeSmallLargeSmall) {
  dev = FakeDevice();
  DescBuilder b = cuda_model();
  LoadedDesc m(b.get());
  ASSERT_NE(m.session, nullptr);
  onnxc_session *s = m.session;
  for (int64_t n : {7, 3 * 64, 7, 3 * 64}) {
    SCOPED_TRACE(n);
    run(s, n);
    expect_arena_layout(n);
    EXPECT_FALSE(dev.overflow) << "an upload, a kernel or a download ran past the end of its device allocation";
    EXPECT_FALSE(dev.bad_read);
  }
  EXPECT_EQ(dev.arena_sizes.size(), 2u) << "the arena grew once and never shrank";
  m.free_session();
  EXPECT_TRUE(dev.allocations.empty()) << "no device allocation outlives the session";
}

// Device inputs and outputs: a caller's device pointer is wrapped (never uploaded, never freed), outputs
// left on the device are not copied until read, and their device addresses are the arena's ranges.
TEST(CudaBookkeeping, DeviceInputsAndOutputsSkipTheCopies) {
  dev = FakeDevice();
  DescBuilder b = cuda_model();
  LoadedDesc m(b.get());
  ASSERT_NE(m.session, nullptr);
  onnxc_session *s = m.session;

  int64_t n = 24;
  std::vector<float> x = input(n);
  uint64_t caller = dev.alloc(x.size() * 4);  // the caller's cudaMalloc
  std::memcpy(dev.at(caller), x.data(), x.size() * 4);
  ASSERT_EQ(onnxc_session_set_outputs_on_device(s, 1), ONNXC_OK);
  onnxc_tensor in{ONNXC_DTYPE_FLOAT, 1, &n, reinterpret_cast<void *>(caller)};
  ASSERT_EQ(onnxc_session_set_input_device(s, 0, &in), ONNXC_OK) << onnxc_session_last_error(s);
  dev.calls.clear();
  ASSERT_EQ(onnxc_session_run(s), ONNXC_OK) << onnxc_session_last_error(s);
  EXPECT_EQ(dev.calls[0].first, caller) << "the first kernel reads the caller's memory";
  EXPECT_EQ(dev.uploads, 0);
  EXPECT_EQ(dev.downloads, 0) << "outputs stay on the device";

  onnxc_tensor y{}, ao{};
  ASSERT_EQ(onnxc_session_get_output_device(s, 0, &y), ONNXC_OK) << onnxc_session_last_error(s);
  ASSERT_EQ(onnxc_session_get_output_device(s, 1, &ao), ONNXC_OK);
  EXPECT_EQ(reinterpret_cast<uint64_t>(y.data), dev.calls[3].second);
  EXPECT_EQ(reinterpret_cast<uint64_t>(ao.data), dev.calls[0].second) << "a view's device address is its root's";
  ASSERT_EQ(y.rank, 1);
  EXPECT_EQ(y.dims[0], n);
  expect_outputs(reinterpret_cast<float *>(dev.at(reinterpret_cast<uint64_t>(y.data))),
                 reinterpret_cast<float *>(dev.at(reinterpret_cast<uint64_t>(ao.data))), x);

  onnxc_tensor host_y{};
  ASSERT_EQ(onnxc_session_get_output(s, 0, &host_y), ONNXC_OK) << onnxc_session_last_error(s);
  EXPECT_EQ(dev.downloads, 1) << "copied when read";
  ASSERT_EQ(onnxc_session_get_output(s, 0, &host_y), ONNXC_OK);
  EXPECT_EQ(dev.downloads, 1) << "once";
  for (size_t i = 0; i < x.size(); i++) EXPECT_FLOAT_EQ(static_cast<float *>(host_y.data)[i], 16 * x[i]);

  m.free_session();
  EXPECT_EQ(dev.allocations.count(caller), 1u) << "the caller's memory is the caller's";
  dev.allocations.erase(caller);
  EXPECT_TRUE(dev.allocations.empty());
}

// The session's context and stream are what the library's Halide runtime gets while the session runs.
TEST(CudaBookkeeping, KernelsSeeTheSessionsContextAndStream) {
  dev = FakeDevice();
  seen = Seen();
  DescBuilder b = cuda_model(true);
  LoadedDesc m(b.get());
  ASSERT_NE(m.session, nullptr);
  onnxc_session *s = m.session;
  ASSERT_NE(acquire_handler, nullptr) << "the runtime installed its handlers";
  int context_storage = 0, stream_storage = 0;
  ASSERT_EQ(onnxc_session_set_cuda_stream(s, &context_storage, &stream_storage), ONNXC_OK) << onnxc_session_last_error(s);
  run(s, 16);
  EXPECT_EQ(seen.context, &context_storage);
  EXPECT_EQ(seen.stream, &stream_storage);

  // Another context: the device memory of the old one is let go first, the last outputs with it.
  ASSERT_EQ(onnxc_session_set_cuda_stream(s, &stream_storage, nullptr), ONNXC_OK);
  EXPECT_TRUE(dev.allocations.empty());
  onnxc_tensor y{};
  EXPECT_EQ(onnxc_session_get_output(s, 0, &y), ONNXC_ERR_INVALID_ARGUMENT);
  run(s, 16);
  EXPECT_EQ(seen.context, &stream_storage);
  EXPECT_EQ(seen.stream, nullptr);
}

// Without a context of the caller's, kernels run in the device's primary context, which needs the
// driver: without one the run fails with the driver's message, not a crash.
TEST(CudaBookkeeping, WithoutADriverThePrimaryContextIsRefused) {
  if (void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(driver);
    GTEST_SKIP() << "this machine has an NVIDIA driver: the refusal is not what happens here";
  }
  dev = FakeDevice();
  seen = Seen();
  DescBuilder b = cuda_model(true);
  LoadedDesc m(b.get());
  ASSERT_NE(m.session, nullptr);
  onnxc_session *s = m.session;
  int64_t n = 4;
  std::vector<float> x = input(n);
  onnxc_tensor in{ONNXC_DTYPE_FLOAT, 1, &n, x.data()};
  ASSERT_EQ(onnxc_session_set_input(s, 0, &in), ONNXC_OK);
  EXPECT_EQ(onnxc_session_run(s), ONNXC_ERR_KERNEL_FAILED);
  EXPECT_NE(seen.acquire_rc, 0);
  EXPECT_NE(std::string(onnxc_session_last_error(s)).find("failed: Halide error -1 (generic_error): a CUDA library's kernel was compiled "
                                                          "for CUDA, but no NVIDIA driver is installed here"),
            std::string::npos)
      << onnxc_session_last_error(s);
}

// Profiling a CUDA library: the runtime waits for the device after every kernel step and before the
// step's end time, and only while a profiler is set; a failing wait is the run's error, with its step.
struct SyncLog {
  int syncs = 0, fail_at = -1;
  std::vector<int> syncs_before_report;  // per profiled step: waits done when it was reported
} sync_log;

int fake_device_sync(void *, void *buffer) {
  if (buffer != nullptr) return -1;  // the runtime passes no buffer
  return ++sync_log.syncs == sync_log.fail_at ? -42 : 0;
}

void record_step(void *, const onnxc_step_profile *) { sync_log.syncs_before_report.push_back(sync_log.syncs); }

TEST(CudaBookkeeping, ProfilerWaitsForTheDeviceAfterEachStep) {
  dev = FakeDevice();
  sync_log = SyncLog();
  DescBuilder b = cuda_model();
  b.d.device_sync = fake_device_sync;
  LoadedDesc m(b.get());
  ASSERT_NE(m.session, nullptr);
  onnxc_session *s = m.session;

  run(s, 4);
  EXPECT_EQ(sync_log.syncs, 0) << "no waiting without a profiler (nor without a stream of the caller's)";
  ASSERT_EQ(onnxc_session_set_profiler(s, record_step, nullptr), ONNXC_OK);
  run(s, 4);
  EXPECT_EQ(sync_log.syncs, 4) << "one wait per kernel step";
  EXPECT_EQ(sync_log.syncs_before_report, (std::vector<int>{1, 2, 3, 4})) << "each step reported after its own wait";

  sync_log.fail_at = 5;  // the first step of the next run
  int64_t n = 4;
  std::vector<float> x(4, 1.0f);
  onnxc_tensor in{ONNXC_DTYPE_FLOAT, 1, &n, x.data()};
  ASSERT_EQ(onnxc_session_set_input(s, 0, &in), ONNXC_OK);
  EXPECT_EQ(onnxc_session_run(s), ONNXC_ERR_KERNEL_FAILED);
  EXPECT_NE(std::string(onnxc_session_last_error(s)).find("waiting for the GPU after step 0 ('fake_double') failed: CUDA error -42"),
            std::string::npos)
      << onnxc_session_last_error(s);
}

}  // namespace

namespace {

// The device calls check what they are given as the host calls do, with messages naming what is wrong.
TEST(CudaBookkeeping, DeviceCallsCheckTheirArguments) {
  dev = FakeDevice();
  DescBuilder b = cuda_model();
  LoadedDesc m(b.get());
  ASSERT_NE(m.session, nullptr);
  onnxc_session *s = m.session;
  int64_t n = 4;
  uint64_t caller = dev.alloc(16);
  onnxc_tensor in{ONNXC_DTYPE_FLOAT, 1, &n, reinterpret_cast<void *>(caller)};
  EXPECT_EQ(onnxc_session_set_input_device(s, 3, &in), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(onnxc_session_last_error(s), "input index 3 is out of range: model 'fake_cuda' has 1 input");
  EXPECT_EQ(onnxc_session_set_input_device(s, 0, nullptr), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(onnxc_session_last_error(s), "input 'x' (index 0): tensor is NULL");
  onnxc_tensor ints{ONNXC_DTYPE_INT32, 1, &n, reinterpret_cast<void *>(caller)};
  EXPECT_EQ(onnxc_session_set_input_device(s, 0, &ints), ONNXC_ERR_DTYPE_MISMATCH);
  onnxc_tensor null_data{ONNXC_DTYPE_FLOAT, 1, &n, nullptr};
  EXPECT_EQ(onnxc_session_set_input_device(s, 0, &null_data), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(onnxc_session_last_error(s), "input 'x' (index 0): data is NULL but the tensor has 4 elements");
  onnxc_tensor out{};
  EXPECT_EQ(onnxc_session_get_output_device(s, 0, &out), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(onnxc_session_last_error(s),
               "output 'y' (index 0) is not available: the last onnxc_session_run failed or none has run");
  EXPECT_EQ(onnxc_session_get_output_device(s, 2, &out), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(onnxc_session_last_error(s), "output index 2 is out of range: model 'fake_cuda' has 2 outputs");
  EXPECT_EQ(onnxc_session_get_output_device(s, 0, nullptr), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(onnxc_session_last_error(s), "onnxc_session_get_output_device: out is NULL");
  int stream = 0;
  EXPECT_EQ(onnxc_session_set_cuda_stream(s, nullptr, &stream), ONNXC_ERR_UNSUPPORTED)
      << "a descriptor without the context/stream setters cannot take a stream";
  EXPECT_EQ(onnxc_session_set_cuda_stream(s, nullptr, nullptr), ONNXC_OK) << "the default needs none";
}

}  // namespace
