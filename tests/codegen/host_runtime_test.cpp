// The library's own thread-pool and scratch-memory hooks (codegen/emit/host_runtime_c.cpp), through
// the runtime: one depthwise convolution over run-time image sizes (a parallel loop over channel
// tasks, a scratch plane allocated per channel) run by sessions of 1, 2 and 3 threads in turn, at
// image sizes that grow and shrink, so the serial loop, the pool's per-thread tasks and the pool
// itself each run, and kept scratch blocks are handed to requests of other sizes. Every result is
// checked against the definition and must be the same bits at every thread count.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <random>
#include <thread>
#include <vector>

#include "onnxc/runtime.h"
#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

#ifdef HAVE_ONNXC_RUNTIME
constexpr int64_t kChannels = 40;

// y[c, i, j] = max(0, b[c] + Σ_{r, q} x[c, i + r − 1, j + q − 1] · w[c, r, q]), zero outside the image.
std::vector<float> depthwise_relu(const std::vector<float>& x, const std::vector<float>& w,
                                  const std::vector<float>& b, int64_t h, int64_t wd) {
  std::vector<float> y(x.size());
  for (int64_t c = 0; c < kChannels; ++c)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < wd; ++j) {
        double s = b[c];
        for (int64_t r = 0; r < 3; ++r)
          for (int64_t q = 0; q < 3; ++q) {
            int64_t yi = i + r - 1, xj = j + q - 1;
            if (yi >= 0 && yi < h && xj >= 0 && xj < wd)
              s += static_cast<double>(x[(c * h + yi) * wd + xj]) * w[(c * 3 + r) * 3 + q];
          }
        y[(c * h + i) * wd + j] = std::max(static_cast<float>(s), 0.f);
      }
  return y;
}

// The depthwise 3×3 convolution + ReLU of run-time image size the tests run, with weights `wv`, `bv`.
ir::Model depthwise_model(const std::vector<float>& wv, const std::vector<float>& bv) {
  ModelBuilder mb(13);
  Dim h = Dim::symbol("h"), w = Dim::symbol("w");
  auto* x = mb.input("x", DType::Float32, {1, kChannels, h, w});
  ir::Node* c = mb.node("Conv", {x, mb.const_f32("w", {kChannels, 1, 3, 3}, wv), mb.const_f32("b", {kChannels}, bv)},
                        {{"y", ir::Type::tensor(DType::Float32, ir::Shape{1, kChannels, h, w})}});
  c->set_attr_ints("kernel_shape", {3, 3});
  c->set_attr_ints("pads", {1, 1, 1, 1});
  c->set_attr_int("group", kChannels);
  mb.output(mb.op("Relu", {c->output()}, "r", DType::Float32, ir::Shape{1, kChannels, h, w}));
  return std::move(mb.model());
}

TEST(HostRuntime, ThreadCountsAndKeptScratchGiveTheSameBits) {
  auto wv = uniform(kChannels * 9, 5), bv = uniform(kChannels, 9);
  auto lib = compile(depthwise_model(wv, bv), "host_runtime");

  onnxc_model* model = nullptr;
  ASSERT_EQ(onnxc_model_open(lib.so_path.c_str(), &model), ONNXC_OK) << onnxc_last_error();
  const int32_t threads[] = {1, 2, 3};
  onnxc_session* sessions[3] = {};
  for (int i = 0; i < 3; ++i) {
    onnxc_session_options o;
    onnxc_session_options_default(&o);
    o.num_threads = threads[i];
    ASSERT_EQ(onnxc_session_create(model, &o, &sessions[i]), ONNXC_OK) << onnxc_last_error();
  }
  // 30×33: planes of 32×35 floats (kept blocks); 5×7: smaller than a kept block; 61×40: larger.
  for (auto [hh, ww] : {std::pair<int64_t, int64_t>{30, 33}, {5, 7}, {61, 40}, {30, 33}, {12, 50}}) {
    auto xv = uniform(static_cast<size_t>(kChannels * hh * ww), static_cast<uint32_t>(hh * 100 + ww));
    const auto expect = depthwise_relu(xv, wv, bv, hh, ww);
    std::vector<float> first;
    for (int i = 0; i < 3; ++i) {
      int64_t dims[] = {1, kChannels, hh, ww};
      onnxc_tensor in{ONNXC_DTYPE_FLOAT, 4, dims, xv.data()};
      ASSERT_EQ(onnxc_session_set_input(sessions[i], 0, &in), ONNXC_OK) << onnxc_session_last_error(sessions[i]);
      ASSERT_EQ(onnxc_session_run(sessions[i]), ONNXC_OK) << onnxc_session_last_error(sessions[i]);
      onnxc_tensor out;
      ASSERT_EQ(onnxc_session_get_output(sessions[i], 0, &out), ONNXC_OK);
      const float* y = static_cast<const float*>(out.data);
      std::vector<float> got(y, y + expect.size());
      EXPECT_TRUE(all_close(got, expect, 1e-5, 1e-6)) << threads[i] << " threads, " << hh << "x" << ww;
      if (i == 0) first = got;
      EXPECT_EQ(std::memcmp(got.data(), first.data(), got.size() * sizeof(float)), 0)
          << threads[i] << " threads differ from 1 thread at " << hh << "x" << ww;
    }
  }
  for (onnxc_session* s : sessions) onnxc_session_free(s);
  onnxc_model_free(model);
}

// A kernel that fails while the pool runs it: Dropout with a run-time training_mode and ratio checks
// in its elements' loop (split into parallel tasks over 256 rows) that the run is deterministic. At
// 2 and 3 threads, more tasks than threads, each failing, the run must return an error status with
// the kernel's message, not hang, and the same session must then run the deterministic case. (At 2
// threads the failing check is reached from onnxc_loop_worker in two workers at once, seen in gdb.)
TEST(HostRuntime, AFailingParallelLoopReportsItsErrorAtEveryThreadCount) {
  ModelBuilder mb(13);
  const int64_t rows = 256, cols = 1024;
  auto* x = mb.input("x", DType::Float32, {rows, cols});
  auto* ratio = mb.input("ratio", DType::Float32, {});
  auto* training = mb.input("training", DType::Bool, {});
  mb.output(mb.op("Dropout", {x, ratio, training}, "y", DType::Float32, {rows, cols}));
  auto lib = compile(mb.model(), "pool_error");
  onnxc_model* model = nullptr;
  ASSERT_EQ(onnxc_model_open(lib.so_path.c_str(), &model), ONNXC_OK) << onnxc_last_error();
  auto xv = uniform(static_cast<size_t>(rows * cols), 3);
  for (int32_t threads : {2, 3, 1}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    onnxc_session_options o;
    onnxc_session_options_default(&o);
    o.num_threads = threads;
    onnxc_session* s = nullptr;
    ASSERT_EQ(onnxc_session_create(model, &o, &s), ONNXC_OK) << onnxc_last_error();
    for (bool train : {true, false, true, false}) {
      int64_t dims[] = {rows, cols};
      onnxc_tensor in{ONNXC_DTYPE_FLOAT, 2, dims, xv.data()};
      ASSERT_EQ(onnxc_session_set_input(s, 0, &in), ONNXC_OK) << onnxc_session_last_error(s);
      float r = 0.5f;
      uint8_t t = train ? 1 : 0;
      onnxc_tensor rt{ONNXC_DTYPE_FLOAT, 0, nullptr, &r}, tt{ONNXC_DTYPE_BOOL, 0, nullptr, &t};
      ASSERT_EQ(onnxc_session_set_input(s, 1, &rt), ONNXC_OK) << onnxc_session_last_error(s);
      ASSERT_EQ(onnxc_session_set_input(s, 2, &tt), ONNXC_OK) << onnxc_session_last_error(s);
      onnxc_status st = onnxc_session_run(s);
      if (train) {
        EXPECT_NE(st, ONNXC_OK);
        EXPECT_NE(std::string(onnxc_session_last_error(s)).find("Dropout in training mode"), std::string::npos)
            << onnxc_session_last_error(s);
        continue;
      }
      ASSERT_EQ(st, ONNXC_OK) << onnxc_session_last_error(s);
      onnxc_tensor out;
      ASSERT_EQ(onnxc_session_get_output(s, 0, &out), ONNXC_OK);
      EXPECT_EQ(std::memcmp(out.data, xv.data(), xv.size() * sizeof(float)), 0);
    }
    onnxc_session_free(s);
  }
  onnxc_model_free(model);
}

// The library's own pool (codegen/emit/host_runtime_c.cpp): workers that spin between loops
// (ONNXC_SPIN_US=2000), workers that sleep at once (0), and Halide's pool instead
// (ONNXC_HALIDE_POOL=1, the way back). Per library: many small runs at 3, 2 and 3 threads again
// (seats for fewer workers than exist), two threads running sessions of the same library at once
// (one owns the pool, the other's loops go to Halide's), each result the bits of the 1-thread
// session; then the library is unloaded while its workers spin or sleep, opened again and run once
// more, which must neither hang nor crash.
TEST(HostRuntime, OwnPoolSpinsSleepsSharesAndStopsOnUnload) {
  auto wv = uniform(kChannels * 9, 5), bv = uniform(kChannels, 9);
  const std::vector<std::pair<int64_t, int64_t>> sizes = {{3, 4}, {9, 17}, {1, 1}, {30, 33}, {2, 40}};
  for (const char* spin : {"2000", "0", "halide"}) {
    SCOPED_TRACE(std::string("ONNXC_SPIN_US=") + spin);
    const bool halide = std::string(spin) == "halide";
    setenv("ONNXC_SPIN_US", halide ? "100" : spin, 1);
    setenv("ONNXC_HALIDE_POOL", halide ? "1" : "0", 1);
    auto lib = compile(depthwise_model(wv, bv), std::string("pool_spin_") + spin);
    for (int open = 0; open < 2; ++open) {
      onnxc_model* model = nullptr;
      ASSERT_EQ(onnxc_model_open(lib.so_path.c_str(), &model), ONNXC_OK) << onnxc_last_error();
      auto session = [&](int32_t threads) {
        onnxc_session_options o;
        onnxc_session_options_default(&o);
        o.num_threads = threads;
        onnxc_session* s = nullptr;
        EXPECT_EQ(onnxc_session_create(model, &o, &s), ONNXC_OK) << onnxc_last_error();
        return s;
      };
      // Runs `s` on image i (of `sizes`, cyclically); the output's bits.
      auto run = [&](onnxc_session* s, size_t i) {
        i %= sizes.size();
        auto [hh, ww] = sizes[i];
        auto xv = uniform(static_cast<size_t>(kChannels * hh * ww), static_cast<uint32_t>(i));
        int64_t dims[] = {1, kChannels, hh, ww};
        onnxc_tensor in{ONNXC_DTYPE_FLOAT, 4, dims, xv.data()};
        std::vector<float> got;
        if (onnxc_session_set_input(s, 0, &in) != ONNXC_OK || onnxc_session_run(s) != ONNXC_OK) return got;
        onnxc_tensor out;
        if (onnxc_session_get_output(s, 0, &out) != ONNXC_OK) return got;
        const float* y = static_cast<const float*>(out.data);
        return std::vector<float>(y, y + xv.size());
      };
      onnxc_session* one = session(1);
      std::vector<std::vector<float>> expect;
      for (size_t i = 0; i < sizes.size(); ++i) expect.push_back(run(one, i));
      for (int32_t threads : {3, 2, 3}) {
        onnxc_session* s = session(threads);
        for (size_t i = 0; i < 4 * sizes.size(); ++i)
          ASSERT_EQ(run(s, i), expect[i % sizes.size()]) << threads << " threads, run " << i;
        onnxc_session_free(s);
      }
      std::vector<std::vector<float>> got[2];
      onnxc_session* two[2] = {session(3), session(2)};
      std::vector<std::thread> callers;
      for (int c = 0; c < 2; ++c)
        callers.emplace_back([&, c] {
          for (size_t i = 0; i < 3 * sizes.size(); ++i) got[c].push_back(run(two[c], i));
        });
      for (auto& t : callers) t.join();
      for (int c = 0; c < 2; ++c)
        for (size_t i = 0; i < got[c].size(); ++i)
          EXPECT_EQ(got[c][i], expect[i % sizes.size()]) << "concurrent caller " << c << ", run " << i;
      for (onnxc_session* s : two) onnxc_session_free(s);
      onnxc_session_free(one);
      onnxc_model_free(model);  // unloads the library: its workers must stop
    }
  }
  unsetenv("ONNXC_SPIN_US");
  unsetenv("ONNXC_HALIDE_POOL");
}
#endif

}  // namespace
}  // namespace onnxc::test
