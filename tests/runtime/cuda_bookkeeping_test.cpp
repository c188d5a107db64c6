// The CUDA path without a GPU: fake kernels and fake copy_to_host/device_free hooks keep "device memory"
// in a map, so the test sees what the runtime does with device handles and dirty bits. Checked: inputs are
// uploaded every run, a view reads its base's device allocation, outputs (also through a view) are copied
// back to the host, allocations are reused while sizes stay and freed when they change or the session ends.
#include <gtest/gtest.h>

#include <HalideRuntime.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "desc_builder.h"
#include "onnxc/runtime.h"

namespace {

struct FakeDevice {
  std::map<uint64_t, std::vector<uint8_t>> memory;
  uint64_t next = 1;
  int mallocs = 0, frees = 0, uploads = 0, downloads = 0;
  bool bad_input = false;
} dev;

const int fake_interface_storage = 0;
const halide_device_interface_t *fake_interface() {
  return reinterpret_cast<const halide_device_interface_t *>(&fake_interface_storage);
}

size_t bytes(const halide_buffer_t *b) { return static_cast<size_t>(b->dim[0].extent) * 4; }

void ensure_device(halide_buffer_t *b) {
  if (b->device) return;
  b->device = dev.next++;
  b->device_interface = fake_interface();
  dev.memory[b->device].resize(bytes(b));
  dev.mallocs++;
}

// out = 2 * in, "on the device", as a Halide GPU pipeline would: upload a host-dirty input, write the
// output's device allocation and mark it device-dirty.
int fake_double(void **args) {
  auto *in = static_cast<halide_buffer_t *>(args[0]);
  auto *out = static_cast<halide_buffer_t *>(args[1]);
  if (!in->device && !(in->flags & halide_buffer_flag_host_dirty)) dev.bad_input = true;
  ensure_device(in);
  if (in->flags & halide_buffer_flag_host_dirty) {
    std::memcpy(dev.memory[in->device].data(), in->host, bytes(in));
    in->flags &= ~uint64_t(halide_buffer_flag_host_dirty);
    dev.uploads++;
  }
  ensure_device(out);
  const float *src = reinterpret_cast<const float *>(dev.memory[in->device].data());
  float *dst = reinterpret_cast<float *>(dev.memory[out->device].data());
  for (int i = 0; i < in->dim[0].extent; i++) dst[i] = 2 * src[i];
  out->flags = halide_buffer_flag_device_dirty;
  return 0;
}

int fake_copy_to_host(void *, void *buffer) {
  auto *b = static_cast<halide_buffer_t *>(buffer);
  std::memcpy(b->host, dev.memory.at(b->device).data(), bytes(b));
  b->flags &= ~uint64_t(halide_buffer_flag_device_dirty);
  dev.downloads++;
  return 0;
}

int fake_device_free(void *, void *buffer) {
  auto *b = static_cast<halide_buffer_t *>(buffer);
  dev.memory.erase(b->device);
  b->device = 0;
  dev.frees++;
  return 0;
}

// x [n] -> a = 2x (step 0) -> y = 2 * av (step 1, av a view of a). Outputs: y and ao (another view of a).
enum { X, A, AV, Y, AO };
DescBuilder cuda_model() {
  DescBuilder b("fake_cuda");
  b.d.target = "host-cuda";
  b.d.uses_cuda = 1;
  b.d.copy_to_host = fake_copy_to_host;
  b.d.device_free = fake_device_free;
  int32_t n = b.symbol("n");
  b.input("x", ONNXC_DTYPE_FLOAT, {n});  // X, then the rest in enum order
  b.intermediate("a", ONNXC_DTYPE_FLOAT, {n});
  b.view("av", ONNXC_DTYPE_FLOAT, {n}, A);
  b.output("y", ONNXC_DTYPE_FLOAT, {n});
  b.view("ao", ONNXC_DTYPE_FLOAT, {n}, A);
  b.outputs.push_back(AO);
  int32_t twice = b.kernel("fake_double", fake_double);
  b.call(twice, {X, A});
  b.call(twice, {AV, Y});
  return b;
}

void run(onnxc_session *s, int64_t n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) x[static_cast<size_t>(i)] = static_cast<float>(i) + 0.5f;
  onnxc_tensor in{ONNXC_DTYPE_FLOAT, 1, &n, x.data()};
  ASSERT_EQ(onnxc_session_set_input(s, 0, &in), ONNXC_OK) << onnxc_session_last_error(s);
  ASSERT_EQ(onnxc_session_run(s), ONNXC_OK) << onnxc_session_last_error(s);
  onnxc_tensor y, ao;
  ASSERT_EQ(onnxc_session_get_output(s, 0, &y), ONNXC_OK);
  ASSERT_EQ(onnxc_session_get_output(s, 1, &ao), ONNXC_OK);
  for (int64_t i = 0; i < n; i++) {
    EXPECT_FLOAT_EQ(static_cast<float *>(y.data)[i], 4 * x[static_cast<size_t>(i)]) << i;
    EXPECT_FLOAT_EQ(static_cast<float *>(ao.data)[i], 2 * x[static_cast<size_t>(i)]) << i;
  }
}

TEST(CudaBookkeeping, DeviceStateFollowsRootsAcrossRunsAndShapes) {
  dev = FakeDevice();
  DescBuilder b = cuda_model();
  onnxc_model *model = nullptr;
  ASSERT_EQ(onnxc_model_from_desc(b.get(), &model), ONNXC_OK) << onnxc_last_error();
  onnxc_session *s = nullptr;
  ASSERT_EQ(onnxc_session_create(model, nullptr, &s), ONNXC_OK);

  run(s, 4);
  EXPECT_FALSE(dev.bad_input) << "av must see a's device allocation, not an empty one";
  EXPECT_EQ(dev.mallocs, 3) << "x, a, y: the views share a's";
  EXPECT_EQ(dev.uploads, 1);
  EXPECT_EQ(dev.downloads, 2) << "y, and a for the output view ao";

  run(s, 4);  // same size: allocations reused, the new input uploaded
  EXPECT_EQ(dev.mallocs, 3);
  EXPECT_EQ(dev.frees, 0);
  EXPECT_EQ(dev.uploads, 2);
  EXPECT_EQ(dev.downloads, 4);

  run(s, 6);  // new size: every old allocation is dropped before the kernels see the buffers
  EXPECT_FALSE(dev.bad_input);
  EXPECT_EQ(dev.frees, 3);
  EXPECT_EQ(dev.mallocs, 6);

  onnxc_session_free(s);
  EXPECT_EQ(dev.frees, 6);
  EXPECT_TRUE(dev.memory.empty()) << "no device allocation outlives the session";
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
  EXPECT_EQ(sync_log.syncs, 0) << "no waiting without a profiler";
  ASSERT_EQ(onnxc_session_set_profiler(s, record_step, nullptr), ONNXC_OK);
  run(s, 4);
  EXPECT_EQ(sync_log.syncs, 2) << "one wait per kernel step";
  EXPECT_EQ(sync_log.syncs_before_report, (std::vector<int>{1, 2})) << "each step reported after its own wait";

  sync_log.fail_at = 3;  // the first step of the next run
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
