/* CUDA libraries: a session's device state around its runs (cuda_session.c). Kernels see device
 * buffers; this file decides which memory those are: one device arena per session holding every
 * arena tensor at its plan offset (the offsets the host arena uses), the caller's device pointers for
 * inputs bound with onnxc_session_set_input_device, and Halide's own allocations for the rest (inputs
 * given on the host, weights). Its calls into the library run with the session's CUDA context and
 * stream made current (onnxc_cuda_enter). */
#ifndef ONNXC_RUNTIME_CUDA_SESSION_H
#define ONNXC_RUNTIME_CUDA_SESSION_H

#include "cuda_driver.h"
#include "session_state.h"

/* Before a run's first step: grows the device arena to the plan's arena size and wraps each arena
 * root at its offset; wraps the caller's device inputs and marks host inputs for upload; weights
 * upload once. A failing CUDA call is the run's error, naming the call. */
onnxc_status onnxc_cuda_prepare_run(onnxc_session *s, const onnxc_plan *p);
/* After the steps: notes the allocations Halide made; unless outputs stay on the device, copies
 * every output to the host (and waits for the caller's stream, when there is one). */
onnxc_status onnxc_cuda_finish_run(onnxc_session *s, const onnxc_plan *p, bool copy_outputs);
/* Output `o` of the last run readable on the host: copied now if only the device has it. */
onnxc_status onnxc_cuda_output_to_host(onnxc_session *s, uint32_t o);
/* The device address of tensor t's bytes after the last run (its root's), 0 if it has none. */
uint64_t onnxc_cuda_device_address(const onnxc_session *s, int32_t t);
/* Detaches the arena and caller ranges, frees Halide's allocations and the arena. */
void onnxc_release_device_buffers(onnxc_session *s);

#endif
