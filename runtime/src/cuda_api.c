/* The C API for CUDA libraries: the caller's context and stream, device inputs and outputs (runtime.h,
 * "CUDA: device memory and the caller's stream"). The device state itself is cuda_session.c's. */
#include <string.h>

#include "cuda_session.h"

int32_t onnxc_model_device(const onnxc_model *model) {
  return model && model->desc->uses_cuda ? ONNXC_DEVICE_CUDA : ONNXC_DEVICE_CPU;
}

/* The session exists and runs a CUDA library; else a message naming the call. */
static onnxc_status need_cuda(const onnxc_session *s, const char *call) {
  if (!s) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "%s: session is NULL", call);
  const onnxc_model_desc *d = s->model->desc;
  if (!d->uses_cuda) {
    return onnxc_fail(ONNXC_ERR_UNSUPPORTED, "%s: model '%s' was compiled for the CPU (target %s); device pointers and CUDA "
                      "streams need a library compiled with `onnxc compile --target cuda`", call, d->name, d->target);
  }
  return ONNXC_OK;
}

static onnxc_status set_stream(onnxc_session *s, void *context, void *stream) {
  const onnxc_model_desc *d = s->model->desc;
  if ((context || stream) && (!d->set_cuda_acquire_context || !d->set_cuda_get_stream)) {
    return onnxc_fail(ONNXC_ERR_UNSUPPORTED, "onnxc_session_set_cuda_stream: model '%s' does not let the runtime choose its CUDA "
                      "context and stream (its descriptor has no halide_set_cuda_acquire_context/halide_set_cuda_get_stream)",
                      d->name);
  }
  if (context != s->cuda_context) { /* the device memory belongs to the old context */
    onnxc_release_device_buffers(s);
    s->outputs = NULL;
  }
  s->cuda_context = context;
  s->cuda_stream = stream;
  return ONNXC_OK;
}

onnxc_status onnxc_session_set_cuda_stream(onnxc_session *s, void *context, void *stream) {
  onnxc_status st = need_cuda(s, "onnxc_session_set_cuda_stream");
  if (st == ONNXC_OK) st = set_stream(s, context, stream);
  return s ? onnxc_keep_error(s->error, st) : st;
}

onnxc_status onnxc_session_set_input_device(onnxc_session *s, size_t index, const onnxc_tensor *tensor) {
  onnxc_status st = need_cuda(s, "onnxc_session_set_input_device");
  if (st == ONNXC_OK) st = onnxc_bind_input(s, index, tensor, true);
  return s ? onnxc_keep_error(s->error, st) : st;
}

onnxc_status onnxc_session_set_outputs_on_device(onnxc_session *s, int32_t on) {
  onnxc_status st = need_cuda(s, "onnxc_session_set_outputs_on_device");
  if (st == ONNXC_OK) s->outputs_on_device = on != 0;
  return s ? onnxc_keep_error(s->error, st) : st;
}

static onnxc_status get_output_device(onnxc_session *s, size_t index, onnxc_tensor *out) {
  onnxc_status st = onnxc_output_tensor(s, index, out, "onnxc_session_get_output_device");
  if (st != ONNXC_OK) return st;
  int32_t t = s->model->outputs[index].tensor;
  uint64_t address = onnxc_cuda_device_address(s, t);
  out->data = (void *)(uintptr_t)address;
  if (address || s->run_bytes[t] == 0) return ONNXC_OK;
  memset(out, 0, sizeof *out);
  return onnxc_fail(ONNXC_ERR_UNSUPPORTED, "output '%s' (index %zu) has no copy on the GPU (a constant or a host input no kernel "
                    "read): read it with onnxc_session_get_output", s->model->desc->tensors[t].name, index);
}

onnxc_status onnxc_session_get_output_device(onnxc_session *s, size_t index, onnxc_tensor *out) {
  if (out) memset(out, 0, sizeof *out);
  onnxc_status st = need_cuda(s, "onnxc_session_get_output_device");
  if (st == ONNXC_OK) st = get_output_device(s, index, out);
  return s ? onnxc_keep_error(s->error, st) : st;
}
