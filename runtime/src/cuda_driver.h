/* The NVIDIA driver a CUDA library needs, found before the first kernel runs: a clear error when
 * the library is opened instead of Halide's "CUDA API not found" at the first step. */
#pragma once

#include "onnxc/runtime.h"

/* Loads the driver library (libcuda.so.1, else libcuda.so) into the global symbol scope, where
 * Halide's CUDA runtime finds it (it looks in the process first and itself opens only the
 * unversioned name, which driver installs often lack), initializes it and checks that it sees a
 * device. ONNXC_OK, or ONNXC_ERR_LOAD_FAILED with a message naming the model and what is missing.
 * Cheap after the first success. */
onnxc_status onnxc_cuda_driver_ready(const char *model_name);
