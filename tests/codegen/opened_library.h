// A compiled library opened through the runtime's C API with one session, for the codegen tests that
// run what they compile (built with the runtime: HAVE_ONNXC_RUNTIME). Each test adds its own way of
// feeding inputs and reading outputs.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "onnxc/runtime.h"

struct OpenedLibrary {
  explicit OpenedLibrary(const std::string& so) {
    EXPECT_EQ(onnxc_model_open(so.c_str(), &model), ONNXC_OK) << onnxc_last_error();
    if (model) {
      EXPECT_EQ(onnxc_session_create(model, nullptr, &s), ONNXC_OK) << onnxc_last_error();
    }
  }
  ~OpenedLibrary() {
    onnxc_session_free(s);
    onnxc_model_free(model);
  }
  OpenedLibrary(const OpenedLibrary&) = delete;
  OpenedLibrary& operator=(const OpenedLibrary&) = delete;
  onnxc_model* model = nullptr;
  onnxc_session* s = nullptr;
};
