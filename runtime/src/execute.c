/* Running a plan: point every tensor's halide_buffer_t at its bytes (input, weight or arena) with the
 * plan's dims, call each step's kernel, and for CUDA libraries keep device state on root buffers. */
/* clock_gettime(CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID) under -std=c11 without extensions. */
#define _POSIX_C_SOURCE 200112L

#include <string.h>
#include <time.h>

#include "dtype.h"
#include "host_ops.h"
#include "kernel_errors.h"
#include "loops.h"
#include "session.h"

/* Dims and type of tensor t, dense row-major: Halide's dim 0 is the last ONNX axis. */
void onnxc_shape_buffer(onnxc_session *s, uint32_t t) {
  const onnxc_model *m = s->model;
  const onnxc_tensor_desc *td = &m->desc->tensors[t];
  const onnxc_dtype_info *info = onnxc_dtype_lookup(td->dtype);
  halide_buffer_t *b = &s->buffers[t];
  const int64_t *dims = &s->run_dims[m->dim_offset[t]];
  b->type.code = info->halide_code; /* a uint8_t field in C */
  b->type.bits = info->halide_bits;
  b->type.lanes = 1;
  b->dimensions = td->rank;
  b->dim = &s->dims[m->dim_offset[t]];
  int64_t stride = 1; /* plan.c checked every extent and stride fits in int32 */
  for (int32_t i = 0; i < td->rank; i++) {
    int64_t extent = dims[td->rank - 1 - i];
    b->dim[i] = (halide_dimension_t){0, (int32_t)extent, (int32_t)stride, 0};
    stride *= extent;
  }
}

/* Host pointers: inputs at the caller's data, weights in the blob, arena roots at their offsets, views at
 * their root. An empty tensor still gets a non-NULL pointer: Halide reads a NULL host as a bounds query. */
static void point_buffers(onnxc_session *s, const onnxc_plan *p) {
  const onnxc_model *m = s->model;
  const onnxc_model_desc *d = m->desc;
  for (uint32_t t = 0; t < d->n_tensors; t++) {
    const onnxc_tensor_desc *td = &d->tensors[t];
    uint8_t *host = s->arena;
    if (td->kind == ONNXC_TENSOR_WEIGHT && d->weights) host = (uint8_t *)(uintptr_t)(d->weights + td->weight_offset);
    if (onnxc_is_arena_kind(td->kind) && m->tensor_step[t] < 0 && td->value == ONNXC_VALUE_TENSOR) host = s->arena + p->offset[t];
    s->buffers[t].host = host;
  }
  for (uint32_t i = 0; i < d->n_inputs; i++) {
    if (s->input_data[i]) s->buffers[m->inputs[i].tensor].host = s->input_data[i];
  }
  for (uint32_t t = 0; t < d->n_tensors; t++) {
    if (m->root[t] != (int32_t)t) s->buffers[t].host = s->buffers[m->root[t]].host;
  }
}

static void free_device(onnxc_session *s, uint32_t t) {
  halide_buffer_t *b = &s->buffers[t];
  if (b->device) s->model->desc->device_free(NULL, b);
  b->device = 0;
  b->device_interface = NULL;
  b->flags = 0;
  s->device_bytes[t] = 0;
}

/* Before a CUDA run: a root whose size changed drops its device allocation (Halide reuses one that
 * exists, whatever its size); inputs are new on the host; arena contents are dead; weights upload once. */
static void prepare_device_state(onnxc_session *s, const onnxc_plan *p) {
  const onnxc_model *m = s->model;
  for (uint32_t t = 0; t < m->desc->n_tensors; t++) {
    halide_buffer_t *b = &s->buffers[t];
    int32_t kind = m->desc->tensors[t].kind;
    if (m->root[t] != (int32_t)t) { /* views borrow their root's device state around each step */
      b->device = 0;
      b->device_interface = NULL;
      b->flags = 0;
      continue;
    }
    if (b->device && s->device_bytes[t] != p->bytes[t]) free_device(s, t);
    if (kind == ONNXC_TENSOR_INPUT) b->flags = halide_buffer_flag_host_dirty;
    if (kind == ONNXC_TENSOR_WEIGHT && !b->device) b->flags = halide_buffer_flag_host_dirty;
    if (onnxc_is_arena_kind(kind)) b->flags = 0;
  }
}

/* A view and its root are one allocation: before a step the view takes the root's device handle and
 * dirty bits, after it the root takes back what the kernel did through the view. */
static void views_in(onnxc_session *s, const onnxc_step *step) {
  for (int32_t i = 0; i < step->n_args; i++) {
    int32_t t = step->args[i];
    if (t < 0 || s->model->root[t] == t) continue;
    halide_buffer_t *v = &s->buffers[t], *r = &s->buffers[s->model->root[t]];
    v->device = r->device;
    v->device_interface = r->device_interface;
    v->flags = r->flags;
  }
}

static bool is_arg(const onnxc_step *step, int32_t t) {
  for (int32_t i = 0; i < step->n_args; i++) {
    if (step->args[i] == t) return true;
  }
  return false;
}

static void views_out(onnxc_session *s, const onnxc_step *step, const onnxc_plan *p) {
  for (int32_t i = 0; i < step->n_args; i++) {
    int32_t t = step->args[i];
    if (t < 0 || s->model->root[t] == t) continue;
    int32_t root = s->model->root[t];
    halide_buffer_t *v = &s->buffers[t], *r = &s->buffers[root];
    if (!r->device && v->device) s->device_bytes[root] = p->bytes[root];
    if (!r->device) {
      r->device = v->device;
      r->device_interface = v->device_interface;
    }
    /* The root passed to the same step keeps its own bits too (a redundant copy later, never a stale one). */
    r->flags = is_arg(step, root) ? (r->flags | v->flags) : v->flags;
  }
}

static onnxc_status copy_outputs_to_host(onnxc_session *s) {
  const onnxc_model *m = s->model;
  for (uint32_t o = 0; o < m->desc->n_outputs; o++) {
    int32_t r = m->root[m->outputs[o].tensor];
    halide_buffer_t *b = &s->buffers[r];
    if (!b->device || !(b->flags & halide_buffer_flag_device_dirty)) continue;
    onnxc_kernel_call_begin();
    int rc = m->desc->copy_to_host(NULL, b);
    const char *msg = onnxc_kernel_call_end();
    if (rc != 0) {
      return onnxc_fail(ONNXC_ERR_KERNEL_FAILED, "copying output '%s' to the host failed: Halide error %d (%s)%s%s",
                        m->desc->tensors[m->outputs[o].tensor].name, rc, onnxc_halide_error_name(rc), *msg ? ": " : "", msg);
    }
  }
  return ONNXC_OK;
}

static uint64_t clock_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Tells the session's profiler about step k, run from t0 to t1 ({monotonic, process CPU} ns): its
 * nodes, flops and bytes touched
 * (each distinct tensor argument once). */
static void report_step(onnxc_session *s, uint32_t k, const char *name, const uint64_t t0[2], const uint64_t t1[2]) {
  const onnxc_model_desc *d = s->model->desc;
  const onnxc_step *step = &d->steps[k];
  onnxc_step_profile r = {k, name, "", t0[0], t1[0], t1[1] - t0[1], -1.0, 0};
  if (d->step_info) {
    if (d->step_info[k].nodes) r.nodes = d->step_info[k].nodes;
    int64_t f;
    if (d->step_info[k].flops >= 0 &&
        onnxc_expr_eval(&s->model->exprs, (uint32_t)d->step_info[k].flops, s->symbols, &f) == ONNXC_EXPR_RESULT_OK)
      r.flops = (double)f;
  }
  for (int32_t i = 0; i < step->n_args; i++) {
    int32_t t = step->args[i];
    bool seen = false;
    for (int32_t j = 0; j < i && !seen; j++) seen = step->args[j] == t;
    if (t >= 0 && !seen) r.bytes += s->run_bytes[t];
  }
  s->profiler(s->profiler_user, &r);
}

/* A kernel step writes the arena tensors it is the first step to touch; it has nothing to do when every
 * one of them is empty (with none, it always runs). Decided per run: sizes bound from data vary. */
static bool nothing_to_write(const onnxc_session *s, uint32_t k) {
  const onnxc_model *m = s->model;
  const onnxc_step *step = &m->desc->steps[k];
  int written = 0, empty = 0;
  for (int32_t i = 0; i < step->n_args; i++) {
    int32_t arg = step->args[i];
    if (arg < 0) continue;
    int32_t r = m->root[arg];
    if (onnxc_is_arena_kind(m->desc->tensors[r].kind) && m->first_use[r] == (int32_t)k) {
      written++;
      empty += s->run_bytes[arg] == 0;
    }
  }
  return written > 0 && written == empty;
}

static onnxc_status run_kernel_step(onnxc_session *s, const onnxc_plan *p, uint32_t k) {
  const onnxc_model *m = s->model;
  const onnxc_model_desc *d = m->desc;
  const onnxc_step *step = &d->steps[k];
  const onnxc_kernel_desc *kernel = &d->kernels[step->kernel];
  if (d->uses_cuda) views_in(s, step);
  onnxc_kernel_call_begin();
  int rc = kernel->fn(&s->args[m->arg_offset[k]]);
  const char *msg = onnxc_kernel_call_end();
  if (d->uses_cuda) views_out(s, step, p);
  if (rc != 0) {
    return onnxc_fail(ONNXC_ERR_KERNEL_FAILED, "step %u (kernel '%s') failed: Halide error %d (%s)%s%s", k, kernel->name,
                      rc, onnxc_halide_error_name(rc), *msg ? ": " : "", msg);
  }
  return ONNXC_OK;
}

/* The step after control step k: its target, or k + 1 when a branch's condition holds. */
static onnxc_status next_after_control(onnxc_session *s, uint32_t k, uint32_t *next) {
  const onnxc_step *step = &s->model->desc->steps[k];
  *next = (uint32_t)step->kernel;
  if (step->kind == ONNXC_STEP_JUMP) return ONNXC_OK;
  int32_t cond = step->args[0];
  if (s->run_bytes[cond] == 0) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (branch) reads its condition " ONNXC_TENSOR_FMT ", which is empty", k,
                      cond, s->model->desc->tensors[cond].name);
  }
  if (*(const uint8_t *)s->buffers[cond].host) *next = k + 1;
  return ONNXC_OK;
}

/* Steps in order, except where control steps move on elsewhere; `prev` tells a LOOP step whether it is
 * entered afresh or from its NEXT. */
static onnxc_status run_steps(onnxc_session *s, const onnxc_plan *p) {
  const onnxc_model_desc *d = s->model->desc;
  onnxc_loops_reset(s->loops, d->n_steps);
  int64_t prev = -1;
  for (uint32_t k = 0, next = 1; k < d->n_steps; prev = k, k = next, next = k + 1) {
    const onnxc_step *step = &d->steps[k];
    if (step->kind == ONNXC_STEP_BRANCH || step->kind == ONNXC_STEP_JUMP || step->kind == ONNXC_STEP_LOOP ||
        step->kind == ONNXC_STEP_NEXT) {
      onnxc_status st = step->kind >= ONNXC_STEP_LOOP ? onnxc_run_loop_step(s, k, prev, &next) : next_after_control(s, k, &next);
      if (st != ONNXC_OK) return st;
      continue;
    }
    bool host = step->kind == ONNXC_STEP_HOST;
    if (!host && nothing_to_write(s, k)) continue;
    uint64_t t0[2] = {0, 0}, t1[2];
    if (s->profiler) t0[0] = clock_ns(CLOCK_MONOTONIC), t0[1] = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    onnxc_status st = host ? onnxc_run_host_step(s, k) : run_kernel_step(s, p, k);
    if (st != ONNXC_OK) return st;
    if (s->profiler) {
      t1[1] = clock_ns(CLOCK_PROCESS_CPUTIME_ID), t1[0] = clock_ns(CLOCK_MONOTONIC);
      report_step(s, k, host ? onnxc_host_op_lookup(step->kernel)->name : d->kernels[step->kernel].name, t0, t1);
    }
  }
  return ONNXC_OK;
}

onnxc_status onnxc_execute(onnxc_session *s, const onnxc_plan *p) {
  const onnxc_model *m = s->model;
  const onnxc_model_desc *d = m->desc;
  if (d->uses_cuda) prepare_device_state(s, p);
  memcpy(s->run_dims, p->dims, (size_t)m->dim_offset[d->n_tensors] * sizeof *s->run_dims);
  memcpy(s->run_bytes, p->bytes, (size_t)d->n_tensors * sizeof *s->run_bytes);
  for (uint32_t t = 0; t < d->n_tensors; t++) {
    onnxc_shape_buffer(s, t);
    if (!d->uses_cuda) s->buffers[t].flags = 0;
  }
  point_buffers(s, p);
  memcpy(s->scalars, p->scalars, (size_t)m->arg_offset[d->n_steps] * sizeof *s->scalars);
  int32_t threads = s->options.num_threads ? s->options.num_threads : d->default_num_threads;
  if (d->set_num_threads) d->set_num_threads(threads);
  onnxc_status st = run_steps(s, p);
  if (d->uses_cuda) {
    for (uint32_t t = 0; t < d->n_tensors; t++) {
      if (m->root[t] == (int32_t)t && s->buffers[t].device) s->device_bytes[t] = p->bytes[t];
    }
    if (st == ONNXC_OK) st = copy_outputs_to_host(s);
  }
  return st;
}

void onnxc_release_device_buffers(onnxc_session *s) {
  const onnxc_model *m = s->model;
  if (!m->desc->uses_cuda) return;
  for (uint32_t t = 0; t < m->desc->n_tensors; t++) {
    if (m->root[t] != (int32_t)t) s->buffers[t].device = 0; /* a view never owns its handle */
  }
  for (uint32_t t = 0; t < m->desc->n_tensors; t++) {
    if (m->root[t] == (int32_t)t) free_device(s, t);
  }
}
