/* The NVIDIA driver a CUDA library needs, found before the first kernel runs: a clear error when
 * the library is opened instead of Halide's "CUDA API not found" at the first step; and the context
 * kernels run in when the caller names none. */
#pragma once

#include <stdbool.h>

#include "onnxc/runtime.h"

/* Loads the driver library (libcuda.so.1, else libcuda.so) into the global symbol scope, where
 * Halide's CUDA runtime finds it (it looks in the process first and itself opens only the
 * unversioned name, which driver installs often lack), initializes it and checks that it sees a
 * device. ONNXC_OK, or ONNXC_ERR_LOAD_FAILED with a message naming the model (NULL: "a CUDA library's
 * kernel") and what is missing. Cheap after the first success. */
onnxc_status onnxc_cuda_driver_ready(const char *model_name);

/* The primary context of the device ($HL_GPU_DEVICE, else 0): the one the CUDA runtime API
 * (cudaMalloc, cudaStreamCreate) uses, so its pointers and streams work with onnxc's kernels. Retained
 * on first use with `create` (loading the driver if needed), kept for the process. Returns 0, or a
 * CUDA error code (-1 without a driver) after handing the message naming the failed call to
 * onnxc_kernel_error_handler; with create false, *context is NULL until it was made. */
int onnxc_cuda_primary_context(bool create, void **context);

/* Installs the runtime's context and stream handlers in a CUDA library's Halide runtime (the v7
 * setters; nothing when the descriptor has none). Once per model; the handlers give the context and
 * stream of the session calling on this thread, else the device's primary context and its default
 * stream. */
void onnxc_cuda_install_hooks(const onnxc_model_desc *d);

/* context and stream (NULL: the primary context, its default stream) are the ones Halide's handlers
 * give on this thread from enter until leave (scopes nest: leave restores what enter saved). */
typedef struct onnxc_cuda_scope {
  void *context, *stream;
} onnxc_cuda_scope;
void onnxc_cuda_enter(void *context, void *stream, onnxc_cuda_scope *saved);
void onnxc_cuda_leave(const onnxc_cuda_scope *saved);
