/* A CUDA session's device state (see cuda_session.h): the device arena, the caller's device inputs
 * and context/stream, Halide's own allocations, and the copies of outputs to the host. */
#include "cuda_session.h"

#include "cuda_driver.h"
#include "kernel_errors.h"

/* ---- device handles of root buffers ---------------------------------------------------------------- */

/* A failed call into the library's CUDA runtime: its name, what it was for, Halide's code and message. */
static onnxc_status call_failed(onnxc_status status, const char *call, const char *what, const char *name, int rc,
                                const char *msg) {
  return onnxc_fail(status, "%s failed for %s '%s': Halide error %d (%s)%s%s", call, what, name, rc, onnxc_halide_error_name(rc),
                    *msg ? ": " : "", msg);
}

static const char *tensor_name(const onnxc_session *s, uint32_t t) { return s->model->desc->tensors[t].name; }

static void forget_device(onnxc_session *s, uint32_t t) {
  halide_buffer_t *b = &s->buffers[t];
  b->device = 0;
  b->device_interface = NULL;
  b->flags = 0;
  s->device_bytes[t] = 0;
  s->device_wrapped[t] = false;
}

/* Frees Halide's own allocation of root t. Halide's CUDA runtime keeps a freed allocation for reuse
 * (halide_reuse_device_allocations) under the size the buffer describes when it is freed, and the
 * session reshapes its buffers to the new run's dims before this is called: freeing `b` as it is
 * would file the old, smaller allocation under the new size, and the next halide_device_malloc of
 * that size would take it (then cuMemcpyHtoD past its end: CUDA_ERROR_INVALID_VALUE). So the free
 * describes the allocation as it was made: device_bytes[t] bytes, the size of the run that made it. */
static int free_own_allocation(onnxc_session *s, uint32_t t) {
  const onnxc_model_desc *d = s->model->desc;
  halide_buffer_t *b = &s->buffers[t];
  uint64_t n = s->device_bytes[t];
  if (n == 0 || n > INT32_MAX) return d->device_free(NULL, b);
  halide_dimension_t dim = {0, (int32_t)n, 1, 0};
  halide_buffer_t made = {0};
  made.device = b->device;
  made.device_interface = b->device_interface;
  made.type.code = halide_type_uint;
  made.type.bits = 8;
  made.type.lanes = 1;
  made.dimensions = 1;
  made.dim = &dim;
  int rc = d->device_free(NULL, &made);
  if (rc == 0) {
    b->device = 0;
    b->device_interface = NULL;
  }
  return rc;
}

/* Lets go of root t's device handle: detaches a wrapped range, frees Halide's own allocation. */
static onnxc_status drop_device(onnxc_session *s, uint32_t t) {
  const onnxc_model_desc *d = s->model->desc;
  halide_buffer_t *b = &s->buffers[t];
  if (!b->device) {
    forget_device(s, t);
    return ONNXC_OK;
  }
  bool wrapped = s->device_wrapped[t];
  onnxc_kernel_call_begin();
  int rc = wrapped ? d->detach_native(NULL, b) : free_own_allocation(s, t);
  const char *msg = onnxc_kernel_call_end();
  forget_device(s, t);
  if (rc == 0) return ONNXC_OK;
  return call_failed(ONNXC_ERR_KERNEL_FAILED, wrapped ? "halide_device_detach_native" : "halide_device_free", "tensor",
                     tensor_name(s, t), rc, msg);
}

/* Root t's device handle becomes `address` (a range of the arena or a caller's pointer), not owned. */
static onnxc_status wrap_device(onnxc_session *s, uint32_t t, uint64_t address) {
  const onnxc_model_desc *d = s->model->desc;
  onnxc_status st = drop_device(s, t);
  if (st != ONNXC_OK) return st;
  onnxc_kernel_call_begin();
  int rc = d->wrap_native(NULL, &s->buffers[t], address, d->device_interface());
  const char *msg = onnxc_kernel_call_end();
  if (rc != 0) return call_failed(ONNXC_ERR_KERNEL_FAILED, "halide_device_wrap_native", "tensor", tensor_name(s, t), rc, msg);
  s->device_wrapped[t] = true;
  s->buffers[t].flags = 0; /* the device bytes are the current ones */
  return ONNXC_OK;
}

/* ---- the device arena ------------------------------------------------------------------------------ */

static onnxc_status free_device_arena(onnxc_session *s) {
  halide_buffer_t *a = &s->device_arena;
  if (!a->device) return ONNXC_OK;
  onnxc_kernel_call_begin();
  int rc = s->model->desc->device_free(NULL, a);
  const char *msg = onnxc_kernel_call_end();
  a->device = 0;
  a->device_interface = NULL;
  s->device_arena_bytes = 0;
  if (rc == 0) return ONNXC_OK;
  return call_failed(ONNXC_ERR_KERNEL_FAILED, "halide_device_free", "the device arena of model", s->model->desc->name, rc, msg);
}

/* One device allocation of `bytes` (a multiple of ONNXC_ARENA_ALIGNMENT), replacing a smaller one.
 * Nothing may be wrapped in the old one. */
static onnxc_status reserve_device_arena(onnxc_session *s, uint64_t bytes) {
  if (bytes == 0 || (bytes <= s->device_arena_bytes && s->device_arena.device)) return ONNXC_OK;
  const onnxc_model_desc *d = s->model->desc;
  onnxc_status st = free_device_arena(s);
  if (st != ONNXC_OK) return st;
  uint64_t rows = (bytes + ONNXC_ARENA_ALIGNMENT - 1) / ONNXC_ARENA_ALIGNMENT;
  if (rows > INT32_MAX) {
    return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "the %llu-byte device arena of model '%s' is too large for one Halide buffer",
                      (unsigned long long)bytes, d->name);
  }
  halide_buffer_t *a = &s->device_arena;
  *a = (halide_buffer_t){0};
  a->type.code = halide_type_uint;
  a->type.bits = 8;
  a->type.lanes = 1;
  a->dimensions = 2;
  a->dim = s->device_arena_dims;
  a->dim[0] = (halide_dimension_t){0, ONNXC_ARENA_ALIGNMENT, 1, 0};
  a->dim[1] = (halide_dimension_t){0, (int32_t)rows, ONNXC_ARENA_ALIGNMENT, 0};
  onnxc_kernel_call_begin();
  int rc = d->device_malloc(NULL, a, d->device_interface());
  const char *msg = onnxc_kernel_call_end();
  if (rc != 0) {
    a->device = 0;
    a->device_interface = NULL;
    return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "cannot allocate the %llu-byte device arena of model '%s': halide_device_malloc failed: "
                      "Halide error %d (%s)%s%s", (unsigned long long)rows * ONNXC_ARENA_ALIGNMENT, d->name, rc,
                      onnxc_halide_error_name(rc), *msg ? ": " : "", msg);
  }
  s->device_arena_bytes = rows * ONNXC_ARENA_ALIGNMENT;
  return ONNXC_OK;
}

/* Tensors the plan places in the arena (plan.c's place(): a CUDA library has no host steps or caches). */
static bool in_arena(const onnxc_session *s, const onnxc_plan *p, uint32_t t) {
  const onnxc_model *m = s->model;
  const onnxc_tensor_desc *td = &m->desc->tensors[t];
  return m->root[t] == (int32_t)t && onnxc_is_arena_kind(td->kind) && m->tensor_step[t] < 0 &&
         td->value == ONNXC_VALUE_TENSOR && p->bytes[t] > 0;
}

/* ---- around a run ---------------------------------------------------------------------------------- */

onnxc_status onnxc_cuda_prepare_run(onnxc_session *s, const onnxc_plan *p) {
  const onnxc_model *m = s->model;
  const onnxc_model_desc *d = m->desc;
  onnxc_status st = ONNXC_OK;
  /* Last run's wraps go first: the arena may move, and caller pointers were for that run only. */
  for (uint32_t t = 0; t < d->n_tensors && st == ONNXC_OK; t++) {
    if (m->root[t] != (int32_t)t) { /* views borrow their root's device state around each step */
      s->buffers[t].device = 0;
      s->buffers[t].device_interface = NULL;
      s->buffers[t].flags = 0;
    } else if (s->device_wrapped[t]) {
      st = drop_device(s, t);
    }
  }
  if (st == ONNXC_OK) st = reserve_device_arena(s, p->arena_bytes);
  for (uint32_t t = 0; t < d->n_tensors && st == ONNXC_OK; t++) {
    if (m->root[t] != (int32_t)t) continue;
    halide_buffer_t *b = &s->buffers[t];
    int32_t kind = d->tensors[t].kind;
    if (in_arena(s, p, t)) {
      st = wrap_device(s, t, s->device_arena.device + p->offset[t]);
      continue;
    }
    /* Halide's own allocation, kept while its size is unchanged (Halide reuses one that exists, whatever
     * its size). */
    if (b->device && s->device_bytes[t] != p->bytes[t]) st = drop_device(s, t);
    if (kind == ONNXC_TENSOR_WEIGHT && !b->device) b->flags = halide_buffer_flag_host_dirty;
    if (onnxc_is_arena_kind(kind)) b->flags = 0;
  }
  for (uint32_t i = 0; i < d->n_inputs && st == ONNXC_OK; i++) {
    uint32_t t = (uint32_t)m->inputs[i].tensor;
    if (s->input_on_device[i] && p->bytes[t] > 0) {
      st = wrap_device(s, t, (uint64_t)(uintptr_t)s->input_data[i]);
    } else {
      s->buffers[t].flags = halide_buffer_flag_host_dirty; /* new on the host: uploaded by the first kernel */
    }
  }
  return st;
}

/* Waits for the caller's stream (copies to pageable host memory are not ordered with the host). */
static onnxc_status wait_for_stream(onnxc_session *s, const char *why) {
  const onnxc_model_desc *d = s->model->desc;
  if (!s->cuda_stream || !d->device_sync) return ONNXC_OK;
  onnxc_kernel_call_begin();
  int rc = d->device_sync(NULL, NULL);
  const char *msg = onnxc_kernel_call_end();
  if (rc == 0) return ONNXC_OK;
  return onnxc_fail(ONNXC_ERR_KERNEL_FAILED, "halide_cuda_device_sync (cuStreamSynchronize on the session's stream) failed %s: "
                    "Halide error %d (%s)%s%s", why, rc, onnxc_halide_error_name(rc), *msg ? ": " : "", msg);
}

static onnxc_status copy_to_host(onnxc_session *s, uint32_t o) {
  const onnxc_model *m = s->model;
  int32_t r = m->root[m->outputs[o].tensor];
  halide_buffer_t *b = &s->buffers[r];
  if (!b->device || !(b->flags & halide_buffer_flag_device_dirty)) return ONNXC_OK;
  onnxc_kernel_call_begin();
  int rc = m->desc->copy_to_host(NULL, b);
  const char *msg = onnxc_kernel_call_end();
  if (rc == 0) return ONNXC_OK;
  return onnxc_fail(ONNXC_ERR_KERNEL_FAILED, "copying output '%s' to the host failed: halide_copy_to_host: Halide error %d (%s)%s%s",
                    m->desc->tensors[m->outputs[o].tensor].name, rc, onnxc_halide_error_name(rc), *msg ? ": " : "", msg);
}

onnxc_status onnxc_cuda_finish_run(onnxc_session *s, const onnxc_plan *p, bool copy_outputs) {
  const onnxc_model *m = s->model;
  for (uint32_t t = 0; t < m->desc->n_tensors; t++) {
    if (m->root[t] == (int32_t)t && s->buffers[t].device && !s->device_wrapped[t]) s->device_bytes[t] = p->bytes[t];
  }
  if (!copy_outputs || s->outputs_on_device) return ONNXC_OK;
  onnxc_status st = ONNXC_OK;
  for (uint32_t o = 0; o < m->desc->n_outputs && st == ONNXC_OK; o++) st = copy_to_host(s, o);
  if (st == ONNXC_OK) st = wait_for_stream(s, "after copying the outputs to the host");
  return st;
}

onnxc_status onnxc_cuda_output_to_host(onnxc_session *s, uint32_t o) {
  const onnxc_model *m = s->model;
  int32_t r = m->root[m->outputs[o].tensor];
  if (!s->buffers[r].host) {
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "output '%s' (index %u) is an input bound as a device pointer: read it with onnxc_session_get_output_device",
                      m->desc->tensors[m->outputs[o].tensor].name, o);
  }
  if (!(s->buffers[r].flags & halide_buffer_flag_device_dirty)) return ONNXC_OK;
  onnxc_cuda_scope scope;
  onnxc_cuda_enter(s->cuda_context, s->cuda_stream, &scope);
  onnxc_status st = copy_to_host(s, o);
  if (st == ONNXC_OK) st = wait_for_stream(s, "after copying an output to the host");
  onnxc_cuda_leave(&scope);
  return st;
}

uint64_t onnxc_cuda_device_address(const onnxc_session *s, int32_t t) { return s->buffers[s->model->root[t]].device; }

void onnxc_release_device_buffers(onnxc_session *s) {
  const onnxc_model *m = s->model;
  if (!m->desc->uses_cuda) return;
  onnxc_cuda_scope scope;
  onnxc_cuda_enter(s->cuda_context, s->cuda_stream, &scope);
  for (uint32_t t = 0; t < m->desc->n_tensors; t++) {
    if (m->root[t] != (int32_t)t) s->buffers[t].device = 0; /* a view never owns its handle */
  }
  for (uint32_t t = 0; t < m->desc->n_tensors; t++) {
    if (m->root[t] == (int32_t)t) (void)drop_device(s, t); /* session teardown: nobody to report to */
  }
  (void)free_device_arena(s);
  onnxc_cuda_leave(&scope);
}
