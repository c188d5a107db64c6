/* Running a plan: point every tensor's halide_buffer_t at its bytes (input, weight or arena) with the
 * plan's dims, run each step through its kind's entry (model->kinds); for CUDA libraries
 * cuda_session.c gives root buffers their device memory before and copies outputs back after. */
/* clock_gettime(CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID) under -std=c11 without extensions. */
#define _POSIX_C_SOURCE 200112L

#include <string.h>
#include <time.h>

#include "execute.h"

#include "cuda_session.h"
#include "kernel_errors.h"
#include "kv_cache.h"
#include "plan.h"
#include "step_host.h"

/* Host pointers: inputs at the caller's data, weights in the blob, arena roots at their offsets, views at
 * their root. An empty tensor still gets a non-NULL pointer: Halide reads a NULL host as a bounds query. */
static void point_buffers(onnxc_session *s, const onnxc_plan *p) {
  const onnxc_model *m = s->model;
  const onnxc_model_desc *d = m->desc;
  for (uint32_t t = 0; t < d->n_tensors; t++) {
    const onnxc_tensor_desc *td = &d->tensors[t];
    uint8_t *host = s->arena;
    if (td->kind == ONNXC_TENSOR_WEIGHT && d->weights) host = (uint8_t *)(uintptr_t)onnxc_weights_at(&m->weights, td->weight_offset);
    if (onnxc_is_arena_kind(td->kind) && m->tensor_step[t] < 0 && td->value == ONNXC_VALUE_TENSOR) host = s->arena + p->offset[t];
    s->buffers[t].host = host;
  }
  for (uint32_t i = 0; i < d->n_inputs; i++) { /* a device input has no host bytes (cuda_session.c wraps it) */
    if (s->input_data[i]) s->buffers[m->inputs[i].tensor].host = s->input_on_device[i] ? NULL : s->input_data[i];
  }
  for (uint32_t t = 0; t < d->n_tensors; t++) {
    if (m->root[t] != (int32_t)t) s->buffers[t].host = s->buffers[m->root[t]].host;
  }
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

/* While profiling a CUDA library: waits until the GPU has finished what step k queued, so that the
 * step's time is its GPU time (kernels return once their launches are queued). */
static onnxc_status wait_for_device(onnxc_session *s, uint32_t k, const char *label) {
  onnxc_kernel_call_begin();
  int rc = s->model->desc->device_sync(NULL, NULL);
  const char *msg = onnxc_kernel_call_end();
  if (rc == 0) return ONNXC_OK;
  return onnxc_fail(ONNXC_ERR_KERNEL_FAILED, "waiting for the GPU after step %u ('%s') failed: CUDA error %d%s%s", k, label,
                    rc, *msg ? ": " : "", msg);
}

/* Steps in order, except where a step that MOVES goes on elsewhere; `prev` tells a LOOP step whether
 * it is entered afresh or from its NEXT. Each step costs one look-up in the kinds table. */
static onnxc_status run_steps(onnxc_session *s, const onnxc_plan *p) {
  const onnxc_model_desc *d = s->model->desc;
  const onnxc_step_kind_info *kinds = s->model->kinds;
  onnxc_host_states_reset(s);
  int64_t prev = -1;
  for (uint32_t k = 0, next = 1; k < d->n_steps; prev = k, k = next, next = k + 1) {
    const onnxc_step_kind_info *kind = &kinds[d->steps[k].kind];
    if ((kind->traits & ONNXC_STEP_SKIPS_EMPTY) && nothing_to_write(s, k)) continue;
    bool timed = s->profiler && (kind->traits & ONNXC_STEP_COMPUTES);
    uint64_t t0[2] = {0, 0}, t1[2];
    if (timed) t0[0] = clock_ns(CLOCK_MONOTONIC), t0[1] = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    onnxc_status st = kind->run(s, p, k, prev, &next);
    if (st != ONNXC_OK) return st;
    if (timed && d->uses_cuda && d->device_sync) {
      st = wait_for_device(s, k, kind->label(d, k));
      if (st != ONNXC_OK) return st;
    }
    if (timed) {
      t1[1] = clock_ns(CLOCK_PROCESS_CPUTIME_ID), t1[0] = clock_ns(CLOCK_MONOTONIC);
      report_step(s, k, kind->label(d, k), t0, t1);
    }
  }
  return ONNXC_OK;
}

onnxc_status onnxc_execute(onnxc_session *s, const onnxc_plan *p) {
  const onnxc_model *m = s->model;
  const onnxc_model_desc *d = m->desc;
  memcpy(s->run_dims, p->dims, (size_t)m->dim_offset[d->n_tensors] * sizeof *s->run_dims);
  memcpy(s->run_bytes, p->bytes, (size_t)d->n_tensors * sizeof *s->run_bytes);
  for (uint32_t t = 0; t < d->n_tensors; t++) {
    onnxc_shape_buffer(s, t);
    if (!d->uses_cuda) s->buffers[t].flags = 0;
  }
  point_buffers(s, p);
  onnxc_cuda_scope scope;
  if (d->uses_cuda) onnxc_cuda_enter(s->cuda_context, s->cuda_stream, &scope);
  onnxc_status st = d->uses_cuda ? onnxc_cuda_prepare_run(s, p) : ONNXC_OK;
  if (st == ONNXC_OK) st = onnxc_cache_place(s);
  if (st == ONNXC_OK) {
    memcpy(s->scalars, p->scalars, (size_t)m->arg_offset[d->n_steps] * sizeof *s->scalars);
    int32_t threads = s->options.num_threads ? s->options.num_threads : d->default_num_threads;
    if (d->set_num_threads) d->set_num_threads(threads);
    st = run_steps(s, p);
  }
  if (d->uses_cuda) {
    onnxc_status done = onnxc_cuda_finish_run(s, p, st == ONNXC_OK);
    if (st == ONNXC_OK) st = done;
    onnxc_cuda_leave(&scope);
  }
  return st;
}
