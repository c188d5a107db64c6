// The CUDA path without a GPU: fake kernels and fake Halide device hooks (copy_to_host, device_malloc,
// wrap/detach, device_free) keep "device memory" in one flat pool, so the test sees what the runtime
// does with device handles, dirty bits and the device arena. Nothing here stands in for the NVIDIA
// driver: the hooks are the descriptor's calls into a library's Halide runtime. Checked: every arena
// tensor is a range of one device allocation at its plan offset, and two tensors live in a common step
// never share bytes (symbolic shapes, several sizes); views read their root's range; inputs are
// uploaded every run (or wrapped when the caller gives device pointers); outputs are copied back, or
// left on the device and copied when read; the arena grows, never shrinks; nothing outlives the session.
#include <gtest/gtest.h>

#include <HalideRuntime.h>
#include <dlfcn.h>

#include <cstddef>
#include <cstring>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "desc_builder.h"
#include "onnxc/runtime.h"

namespace {

constexpr uint64_t kBase = 0x10000;  // device addresses start here; address a is pool[a - kBase]

// Rounds n up to its 4 most significant bits, as Halide's CUDA runtime sizes the allocations it keeps.
uint64_t quantized(uint64_t n) {
  int shift = 0;
  while ((n >> shift) >= 16) shift++;
  return ((n + (uint64_t(1) << shift) - 1) >> shift) << shift;
}

struct FakeDevice {
  std::vector<uint8_t> pool = std::vector<uint8_t>(1 << 20);
  uint64_t next = kBase;
  std::map<uint64_t, uint64_t> allocations;  // address -> bytes: what device_malloc made, live
  // Freed allocations kept for reuse as Halide's CUDA runtime keeps them (halide_reuse_device_allocations
  // is on in every CUDA library): filed under the quantized size the buffer described when it was freed,
  // holding `bytes` of real memory; a later malloc of a size within 7/8 of `filed` takes one.
  struct Kept {
    uint64_t address, filed, bytes;
  };
  std::vector<Kept> kept;
  std::vector<uint64_t> arena_sizes;  // bytes of each 2-D uint8 allocation (the device arena)
  uint64_t arena = 0;                 // the address of the last one
  int mallocs = 0, frees = 0, uploads = 0, downloads = 0, wraps = 0, detaches = 0;
  bool bad_read = false;
  bool overflow = false;  // a copy or kernel touched bytes past the end of the allocation it used
  // Per kernel call: the device addresses of its input and output.
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  uint8_t *at(uint64_t address) { return &pool.at(address - kBase); }
  uint64_t alloc(uint64_t bytes) {
    uint64_t a = next;
    next += (bytes + 255) / 256 * 256 + 256;
    allocations[a] = bytes;
    mallocs++;
    return a;
  }
  // A device allocation of (at least) `bytes`, a kept one when one is filed under a fitting size.
  uint64_t malloc_like_halide(uint64_t bytes) {
    const uint64_t size = quantized(bytes);
    for (size_t i = 0; i < kept.size(); i++) {
      if (size <= kept[i].filed && size >= kept[i].filed / 8 * 7) {
        const Kept k = kept[i];
        kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(i));
        allocations[k.address] = k.bytes;
        return k.address;
      }
    }
    return alloc(size);
  }
  // Notes an access of `bytes` at `address` that runs past the end of the allocation holding it.
  void touch(uint64_t address, uint64_t bytes) {
    auto it = allocations.upper_bound(address);
    if (it == allocations.begin() || address + bytes > std::prev(it)->first + std::prev(it)->second) overflow = true;
  }
} dev;

const int fake_interface_storage = 0;
const void *fake_interface() { return &fake_interface_storage; }

uint64_t bytes(const halide_buffer_t *b) {
  uint64_t n = 1;
  for (int i = 0; i < b->dimensions; i++) n *= static_cast<uint64_t>(b->dim[i].extent);
  return n * b->type.bytes();
}

int fake_device_malloc(void *, void *buffer, const void *interface) {
  auto *b = static_cast<halide_buffer_t *>(buffer);
  if (b->device) return 0;
  b->device = dev.malloc_like_halide(bytes(b));
  b->device_interface = static_cast<const halide_device_interface_t *>(interface);
  if (b->dimensions == 2 && b->type.bits == 8) {
    dev.arena_sizes.push_back(bytes(b));
    dev.arena = b->device;
  }
  return 0;
}

int fake_wrap(void *, void *buffer, uint64_t handle, const void *interface) {
  auto *b = static_cast<halide_buffer_t *>(buffer);
  if (b->device) return halide_error_code_device_wrap_native_failed;  // as Halide: wrap only an empty handle
  b->device = handle;
  b->device_interface = static_cast<const halide_device_interface_t *>(interface);
  dev.wraps++;
  return 0;
}

int fake_detach(void *, void *buffer) {
  static_cast<halide_buffer_t *>(buffer)->device = 0;
  dev.detaches++;
  return 0;
}

int fake_device_free(void *, void *buffer) {
  auto *b = static_cast<halide_buffer_t *>(buffer);
  auto it = dev.allocations.find(b->device);
  if (it == dev.allocations.end()) {
    dev.bad_read = true;  // freeing what device_malloc never made
  } else {
    dev.kept.push_back({it->first, quantized(bytes(b)), it->second});
    dev.allocations.erase(it);
  }
  b->device = 0;
  dev.frees++;
  return 0;
}

int fake_copy_to_host(void *, void *buffer) {
  auto *b = static_cast<halide_buffer_t *>(buffer);
  dev.touch(b->device, bytes(b));
  std::memcpy(b->host, dev.at(b->device), bytes(b));
  b->flags &= ~uint64_t(halide_buffer_flag_device_dirty);
  dev.downloads++;
  return 0;
}

// What a Halide GPU pipeline does with a buffer it reads: upload it when host-dirty (allocating first
// if it has no device memory); read without a device handle or upload is a bug of the runtime.
void make_readable(halide_buffer_t *in) {
  if (!in->device && !(in->flags & halide_buffer_flag_host_dirty)) dev.bad_read = true;
  if (!in->device) fake_device_malloc(nullptr, in, fake_interface());
  if (in->flags & halide_buffer_flag_host_dirty) {
    dev.touch(in->device, bytes(in));
    std::memcpy(dev.at(in->device), in->host, bytes(in));
    in->flags &= ~uint64_t(halide_buffer_flag_host_dirty);
    dev.uploads++;
  }
}

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

// A CUDA descriptor whose device hooks are the fake device's.
void use_fake_device(DescBuilder &b) {
  b.d.target = "host-cuda";
  b.d.uses_cuda = 1;
  b.d.copy_to_host = fake_copy_to_host;
  b.d.device_free = fake_device_free;
  b.d.device_malloc = fake_device_malloc;
  b.d.wrap_native = fake_wrap;
  b.d.detach_native = fake_detach;
  b.d.device_interface = fake_interface;
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
  onnxc_model *model = nullptr;
  ASSERT_EQ(onnxc_model_from_desc(b.get(), &model), ONNXC_OK) << onnxc_last_error();
  EXPECT_EQ(onnxc_model_device(model), ONNXC_DEVICE_CUDA);
  onnxc_session *s = nullptr;
  ASSERT_EQ(onnxc_session_create(model, nullptr, &s), ONNXC_OK);

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

  onnxc_session_free(s);
  EXPECT_TRUE(dev.allocations.empty()) << "no device allocation outlives the session";
  EXPECT_EQ(dev.wraps, dev.detaches) << "every wrapped range let go";
  EXPECT_FALSE(dev.bad_read);
  onnxc_model_free(model);
}

// The sequence that failed on an H100 (bench/gpu/device_io.c: batch 1 seq 7, then batch 3 seq 64):
// small, large, small. The input given on the host has Halide's own allocation; when its size changes
// the session frees it, and Halide keeps it for reuse under the size its buffer describes. Freed under
// the new run's (larger) shape, the small allocation was taken for the large input, whose upload then
// ran past its end (cuMemcpyHtoD: CUDA_ERROR_INVALID_VALUE).
TEST(CudaBookkeeping, InputAllocationsFollowTheShapeSmallLargeSmall) {
  dev = FakeDevice();
  DescBuilder b = cuda_model();
  onnxc_model *model = nullptr;
  ASSERT_EQ(onnxc_model_from_desc(b.get(), &model), ONNXC_OK) << onnxc_last_error();
  onnxc_session *s = nullptr;
  ASSERT_EQ(onnxc_session_create(model, nullptr, &s), ONNXC_OK);
  for (int64_t n : {7, 3 * 64, 7, 3 * 64}) {
    SCOPED_TRACE(n);
    run(s, n);
    expect_arena_layout(n);
    EXPECT_FALSE(dev.overflow) << "an upload, a kernel or a download ran past the end of its device allocation";
    EXPECT_FALSE(dev.bad_read);
  }
  EXPECT_EQ(dev.arena_sizes.size(), 2u) << "the arena grew once and never shrank";
  onnxc_session_free(s);
  EXPECT_TRUE(dev.allocations.empty()) << "no device allocation outlives the session";
  onnxc_model_free(model);
}

// Device inputs and outputs: a caller's device pointer is wrapped (never uploaded, never freed), outputs
// left on the device are not copied until read, and their device addresses are the arena's ranges.
TEST(CudaBookkeeping, DeviceInputsAndOutputsSkipTheCopies) {
  dev = FakeDevice();
  DescBuilder b = cuda_model();
  onnxc_model *model = nullptr;
  ASSERT_EQ(onnxc_model_from_desc(b.get(), &model), ONNXC_OK) << onnxc_last_error();
  onnxc_session *s = nullptr;
  ASSERT_EQ(onnxc_session_create(model, nullptr, &s), ONNXC_OK);

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

  onnxc_session_free(s);
  EXPECT_EQ(dev.allocations.count(caller), 1u) << "the caller's memory is the caller's";
  dev.allocations.erase(caller);
  EXPECT_TRUE(dev.allocations.empty());
  onnxc_model_free(model);
}

// The session's context and stream are what the library's Halide runtime gets while the session runs.
TEST(CudaBookkeeping, KernelsSeeTheSessionsContextAndStream) {
  dev = FakeDevice();
  seen = Seen();
  DescBuilder b = cuda_model(true);
  onnxc_model *model = nullptr;
  ASSERT_EQ(onnxc_model_from_desc(b.get(), &model), ONNXC_OK) << onnxc_last_error();
  ASSERT_NE(acquire_handler, nullptr) << "the runtime installed its handlers";
  onnxc_session *s = nullptr;
  ASSERT_EQ(onnxc_session_create(model, nullptr, &s), ONNXC_OK);
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
  onnxc_session_free(s);
  onnxc_model_free(model);
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
  onnxc_model *model = nullptr;
  ASSERT_EQ(onnxc_model_from_desc(b.get(), &model), ONNXC_OK) << onnxc_last_error();
  onnxc_session *s = nullptr;
  ASSERT_EQ(onnxc_session_create(model, nullptr, &s), ONNXC_OK);
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
  onnxc_session_free(s);
  onnxc_model_free(model);
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
  onnxc_model *model = nullptr;
  ASSERT_EQ(onnxc_model_from_desc(b.get(), &model), ONNXC_OK) << onnxc_last_error();
  onnxc_session *s = nullptr;
  ASSERT_EQ(onnxc_session_create(model, nullptr, &s), ONNXC_OK);

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
  onnxc_session_free(s);
  onnxc_model_free(model);
}

}  // namespace

namespace {

// The device calls check what they are given as the host calls do, with messages naming what is wrong.
TEST(CudaBookkeeping, DeviceCallsCheckTheirArguments) {
  dev = FakeDevice();
  DescBuilder b = cuda_model();
  onnxc_model *model = nullptr;
  ASSERT_EQ(onnxc_model_from_desc(b.get(), &model), ONNXC_OK) << onnxc_last_error();
  onnxc_session *s = nullptr;
  ASSERT_EQ(onnxc_session_create(model, nullptr, &s), ONNXC_OK);
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
  onnxc_session_free(s);
  onnxc_model_free(model);
}

}  // namespace

namespace {

// A graph whose tensors have sizes of several forms of two symbols, so that the planner packs them
// differently at each shape. Every kernel records the device ranges it read and wrote; after each run
// the ranges of tensors live in a common step must be disjoint, the view must read its base's range,
// and the outputs must equal a reference computed here (overlapping ranges would corrupt them).
struct Call {
  std::vector<uint64_t> in;
  uint64_t out, out_bytes;
};
std::vector<Call> calls;

float *floats(halide_buffer_t *b) {
  make_readable(b);
  return reinterpret_cast<float *>(dev.at(b->device));
}

// out[i] = 2 in0[i % |in0|] + in1[i % |in1|] + 1 (no in1 for the unary kernel).
int mix(halide_buffer_t *in0, halide_buffer_t *in1, halide_buffer_t *out) {
  const float *a = floats(in0), *b = in1 ? floats(in1) : nullptr;
  if (!out->device) fake_device_malloc(nullptr, out, fake_interface());
  auto *y = reinterpret_cast<float *>(dev.at(out->device));
  int na = in0->dim[0].extent, nb = in1 ? in1->dim[0].extent : 1;
  for (int i = 0; i < out->dim[0].extent; i++) y[i] = 2 * a[i % na] + (b ? b[i % nb] : 0.0f) + 1;
  out->flags = halide_buffer_flag_device_dirty;
  calls.push_back({{in0->device, in1 ? in1->device : 0}, out->device, bytes(out)});
  return 0;
}
int unary(void **args) {
  return mix(static_cast<halide_buffer_t *>(args[0]), nullptr, static_cast<halide_buffer_t *>(args[1]));
}
int binary(void **args) {
  return mix(static_cast<halide_buffer_t *>(args[0]), static_cast<halide_buffer_t *>(args[1]),
             static_cast<halide_buffer_t *>(args[2]));
}

std::vector<float> mix_ref(const std::vector<float> &a, const std::vector<float> *b, size_t n) {
  std::vector<float> y(n);
  for (size_t i = 0; i < n; i++) y[i] = 2 * a[i % a.size()] + (b ? (*b)[i % b->size()] : 0.0f) + 1;
  return y;
}

TEST(CudaBookkeeping, LiveTensorsNeverShareDeviceBytesAtAnyShape) {
  dev = FakeDevice();
  DescBuilder g("fake_cuda_plan");
  use_fake_device(g);
  int32_t n = g.symbol("n"), m = g.symbol("m");
  int32_t two_n_1 = g.add_expr({ONNXC_EXPR_SYM, 0, ONNXC_EXPR_CONST, 2, ONNXC_EXPR_MUL, ONNXC_EXPR_CONST, 1, ONNXC_EXPR_ADD});
  int32_t n_m = g.add_expr({ONNXC_EXPR_SYM, 0, ONNXC_EXPR_SYM, 1, ONNXC_EXPR_MUL});
  enum { GX, GW, GA, GB, GC, GD, GDV, GE, GY, GDO };
  g.input("x", ONNXC_DTYPE_FLOAT, {n});
  g.input("w", ONNXC_DTYPE_FLOAT, {m});
  g.intermediate("a", ONNXC_DTYPE_FLOAT, {n});
  g.intermediate("b", ONNXC_DTYPE_FLOAT, {two_n_1});
  g.intermediate("c", ONNXC_DTYPE_FLOAT, {n_m});
  g.intermediate("d", ONNXC_DTYPE_FLOAT, {two_n_1});
  g.view("dv", ONNXC_DTYPE_FLOAT, {n}, GD);
  g.intermediate("e", ONNXC_DTYPE_FLOAT, {two_n_1});
  g.output("y", ONNXC_DTYPE_FLOAT, {n_m});
  g.view("do", ONNXC_DTYPE_FLOAT, {n}, GD);
  g.outputs.push_back(GDO);
  int32_t u = g.kernel("unary", unary), bi = g.kernel("binary", binary);
  g.call(u, {GX, GA});         // 0: a = f(x)
  g.call(bi, {GA, GW, GB});    // 1: b = f(a, w)
  g.call(bi, {GB, GX, GC});    // 2: c = f(b, x)
  g.call(bi, {GC, GA, GD});    // 3: d = f(c, a)
  g.call(u, {GDV, GE});        // 4: e = f(dv)
  g.call(bi, {GE, GC, GY});    // 5: y = f(e, c)
  // Live steps of each arena root (outputs, and d through the output view, to the end: 6).
  const std::map<int, std::pair<int, int>> live = {{GA, {0, 3}}, {GB, {1, 2}}, {GC, {2, 5}},
                                                    {GD, {3, 6}}, {GE, {4, 5}}, {GY, {5, 6}}};
  const int writer[] = {-1, -1, 0, 1, 2, 3, -1, 4, 5};  // the step writing each root

  onnxc_model *model = nullptr;
  ASSERT_EQ(onnxc_model_from_desc(g.get(), &model), ONNXC_OK) << onnxc_last_error();
  onnxc_session *s = nullptr;
  ASSERT_EQ(onnxc_session_create(model, nullptr, &s), ONNXC_OK);
  for (auto [nv, mv] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 5}, {17, 2}, {64, 64}, {5, 3}, {40, 1}}) {
    SCOPED_TRACE("n=" + std::to_string(nv) + " m=" + std::to_string(mv));
    std::vector<float> x(static_cast<size_t>(nv)), w(static_cast<size_t>(mv));
    for (size_t i = 0; i < x.size(); i++) x[i] = 0.25f * static_cast<float>(i % 9) - 1;
    for (size_t i = 0; i < w.size(); i++) w[i] = 0.5f * static_cast<float>(i % 5);
    onnxc_tensor tx{ONNXC_DTYPE_FLOAT, 1, &nv, x.data()}, tw{ONNXC_DTYPE_FLOAT, 1, &mv, w.data()};
    ASSERT_EQ(onnxc_session_set_input(s, 0, &tx), ONNXC_OK);
    ASSERT_EQ(onnxc_session_set_input(s, 1, &tw), ONNXC_OK);
    calls.clear();
    ASSERT_EQ(onnxc_session_run(s), ONNXC_OK) << onnxc_session_last_error(s);
    ASSERT_EQ(calls.size(), 6u);

    size_t N = static_cast<size_t>(nv), NM = static_cast<size_t>(nv * mv), B = 2 * N + 1;
    auto a = mix_ref(x, nullptr, N), b = mix_ref(a, &w, B), c = mix_ref(b, &x, NM), d = mix_ref(c, &a, B);
    auto e = mix_ref(std::vector<float>(d.begin(), d.begin() + static_cast<long>(N)), nullptr, B), y = mix_ref(e, &c, NM);
    onnxc_tensor ty, tdo;
    ASSERT_EQ(onnxc_session_get_output(s, 0, &ty), ONNXC_OK);
    ASSERT_EQ(onnxc_session_get_output(s, 1, &tdo), ONNXC_OK);
    for (size_t i = 0; i < NM; i++) ASSERT_FLOAT_EQ(static_cast<float *>(ty.data)[i], y[i]) << i;
    for (size_t i = 0; i < N; i++) ASSERT_FLOAT_EQ(static_cast<float *>(tdo.data)[i], d[i]) << i;

    EXPECT_EQ(calls[4].in[0], calls[3].out) << "the view dv reads d's range";
    for (const auto &[p, lp] : live) {
      for (const auto &[q, lq] : live) {
        if (p >= q || lp.second < lq.first || lq.second < lp.first) continue;
        const Call &cp = calls[static_cast<size_t>(writer[p])], &cq = calls[static_cast<size_t>(writer[q])];
        EXPECT_TRUE(cp.out + cp.out_bytes <= cq.out || cq.out + cq.out_bytes <= cp.out)
            << "tensors " << p << " and " << q << " are live together but share device bytes";
      }
    }
  }
  EXPECT_FALSE(dev.bad_read);
  EXPECT_LE(dev.arena_sizes.size(), 4u) << "the arena grows only with a larger plan";
  onnxc_session_free(s);
  EXPECT_TRUE(dev.allocations.empty());
  onnxc_model_free(model);
}

}  // namespace
