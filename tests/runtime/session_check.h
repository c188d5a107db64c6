// Test helpers shared by the session tests: owning handles, tensors, and one checked run of the
// tiny model against its reference.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "onnxc/runtime.h"
#include "tiny_reference.h"

struct ModelPtr {
  onnxc_model *m = nullptr;
  ~ModelPtr() { onnxc_model_free(m); }
};
struct SessionPtr {
  onnxc_session *s = nullptr;
  ~SessionPtr() { onnxc_session_free(s); }
};

inline onnxc_tensor tensor(int32_t dtype, const std::vector<int64_t> &dims, const void *data) {
  return {dtype, static_cast<int32_t>(dims.size()), dims.data(), const_cast<void *>(data)};
}

inline std::vector<int64_t> dims_of(const onnxc_tensor &t) { return std::vector<int64_t>(t.dims, t.dims + t.rank); }

template <typename T>
std::vector<T> values_of(const onnxc_tensor &t) {
  size_t n = 1;
  for (int32_t a = 0; a < t.rank; a++) n *= static_cast<size_t>(t.dims[a]);
  const T *p = static_cast<const T *>(t.data);
  return std::vector<T>(p, p + n);
}

inline void expect_near(const std::vector<float> &got, const std::vector<float> &want, const char *what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++) {
    ASSERT_NEAR(got[i], want[i], 1e-4f * (1.0f + std::abs(want[i]))) << what << "[" << i << "]";
  }
}

// Binds a case's inputs, runs, and checks all four outputs.
inline void run_and_check(onnxc_session *s, const TinyCase &c) {
  onnxc_tensor x = tensor(ONNXC_DTYPE_FLOAT, c.x_dims, c.x.data());
  onnxc_tensor m = tensor(ONNXC_DTYPE_FLOAT, c.m_dims, c.m.data());
  ASSERT_EQ(onnxc_session_set_input(s, 0, &x), ONNXC_OK) << onnxc_session_last_error(s);
  ASSERT_EQ(onnxc_session_set_input_by_name(s, "m", &m), ONNXC_OK) << onnxc_session_last_error(s);
  ASSERT_EQ(onnxc_session_run(s), ONNXC_OK) << onnxc_session_last_error(s);

  onnxc_tensor y, z, p, hflat;
  ASSERT_EQ(onnxc_session_get_output(s, 0, &y), ONNXC_OK);
  ASSERT_EQ(onnxc_session_get_output_by_name(s, "z", &z), ONNXC_OK);
  ASSERT_EQ(onnxc_session_get_output(s, 2, &p), ONNXC_OK);
  ASSERT_EQ(onnxc_session_get_output_by_name(s, "hflat", &hflat), ONNXC_OK);
  EXPECT_EQ(y.dtype, ONNXC_DTYPE_FLOAT);
  EXPECT_EQ(p.dtype, ONNXC_DTYPE_BOOL);
  EXPECT_EQ(dims_of(y), (std::vector<int64_t>{c.batch, c.seq, 8}));
  EXPECT_EQ(dims_of(z), (std::vector<int64_t>{c.batch, c.seq}));
  EXPECT_EQ(dims_of(p), (std::vector<int64_t>{c.batch, c.seq}));
  EXPECT_EQ(dims_of(hflat), (std::vector<int64_t>{c.batch, c.seq * 8}));
  EXPECT_NE(y.data, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(y.data) % 64, 0u) << "arena tensors are 64-byte aligned";
  expect_near(values_of<float>(y), c.y, "y");
  expect_near(values_of<float>(z), c.z, "z");
  expect_near(values_of<float>(hflat), c.hflat, "hflat");
  EXPECT_EQ(values_of<uint8_t>(p), c.p);
}

