/* Loops at run time: the LOOP step (count iterations, test trip count and condition), NEXT (back to
 * its LOOP), and the scan host ops: SCAN_SLICE (one slice of a scan input per iteration), SCAN_APPEND
 * (gather each iteration's scan output) and SCAN_COLLECT (after the loop: bind the item count, stack the
 * items). Scan outputs are gathered in session-owned lists rather than written in place because the
 * iteration count is known only when the loop ends (a condition may end it early). */
#include "loops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "error.h"
#include "session.h"

enum { DT_BOOL = 9, DT_INT64 = 7 };

onnxc_loop_state *onnxc_loops_new(uint32_t n_steps) {
  size_t n = (size_t)n_steps + 1;
  onnxc_loop_state *l = calloc(1, sizeof *l);
  if (!l) return NULL;
  l->iter = calloc(n, sizeof *l->iter);
  l->items = calloc(n, sizeof *l->items);
  l->capacity = calloc(n, sizeof *l->capacity);
  l->count = calloc(n, sizeof *l->count);
  l->item_bytes = calloc(n, sizeof *l->item_bytes);
  if (l->iter && l->items && l->capacity && l->count && l->item_bytes) return l;
  onnxc_loops_free(l, 0);
  return NULL;
}

void onnxc_loops_free(onnxc_loop_state *l, uint32_t n_steps) {
  if (!l) return;
  for (uint32_t k = 0; l->items && k < n_steps; k++) free(l->items[k]);
  free(l->iter);
  free(l->items);
  free(l->capacity);
  free(l->count);
  free(l->item_bytes);
  free(l);
}

void onnxc_loops_reset(onnxc_loop_state *l, uint32_t n_steps) {
  for (uint32_t k = 0; k < n_steps; k++) l->count[k] = 0;
}

/* The first element of a one-element tensor t of `what`, or an error naming the step. */
static onnxc_status one_element(const onnxc_session *s, uint32_t k, int32_t t, size_t size, const char *what, void *out) {
  if (s->run_bytes[t] != size) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (loop) reads its %s from " ONNXC_TENSOR_FMT ", which has %llu bytes, not one element",
                      k, what, t, s->model->desc->tensors[t].name, (unsigned long long)s->run_bytes[t]);
  }
  memcpy(out, s->buffers[t].host, size);
  return ONNXC_OK;
}

onnxc_status onnxc_run_loop_step(onnxc_session *s, uint32_t k, int64_t prev, uint32_t *next) {
  const onnxc_model *m = s->model;
  const onnxc_step *step = &m->desc->steps[k];
  *next = (uint32_t)step->kernel;
  if (step->kind == ONNXC_STEP_NEXT) return ONNXC_OK;
  /* Only the loop's own NEXT comes back from a later step (checked at load). */
  int64_t i = s->loops->iter[k] = prev > (int64_t)k ? s->loops->iter[k] + 1 : 0;
  int32_t iter = step->args[0], trip = step->args[1], cond = step->args[2];
  if (s->run_bytes[iter] != sizeof i) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (loop) writes its iteration count to " ONNXC_TENSOR_FMT ", which is not one int64",
                      k, iter, m->desc->tensors[iter].name);
  }
  memcpy(s->buffers[iter].host, &i, sizeof i);
  int64_t limit = INT64_MAX; /* an empty trip tensor: no limit (ONNX Loop without M) */
  onnxc_status st = ONNXC_OK;
  if (trip < 0) limit = s->scalars[m->arg_offset[k] + 1];
  else if (s->run_bytes[trip] != 0) st = one_element(s, k, trip, sizeof limit, "trip count", &limit);
  uint8_t go = 0;
  if (st == ONNXC_OK) st = one_element(s, k, cond, 1, "condition", &go);
  if (st == ONNXC_OK && i < limit && go) *next = k + 1;
  return st;
}

/* ---- SCAN_SLICE {X, iter, Y, axis, reverse} ---- */

/* Product of dims [from, to). */
static uint64_t span(const int64_t *dims, int32_t from, int32_t to) {
  uint64_t n = 1;
  for (int32_t a = from; a < to; a++) n *= (uint64_t)dims[a];
  return n;
}

static bool check_scan_slice(const onnxc_model_desc *d, const int32_t *t, char *why, size_t cap) {
  const onnxc_tensor_desc *x = &d->tensors[t[0]], *it = &d->tensors[t[1]], *y = &d->tensors[t[2]];
  if (it->dtype != DT_INT64) return snprintf(why, cap, "the iteration count must be int64"), false;
  if (x->dtype != y->dtype || x->rank != y->rank + 1) {
    return snprintf(why, cap, "Y must have X's dtype and one dim fewer (X: rank %d, Y: rank %d)", x->rank, y->rank), false;
  }
  return true;
}

static onnxc_status run_scan_slice(onnxc_host_call *c) {
  const onnxc_host_tensor *x = &c->t[0], *y = &c->t[2];
  int32_t axis = (int32_t)c->scalar[0];
  int64_t i, n = x->dims[axis];
  if (c->t[1].numel != 1) return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (ScanSlice): the iteration count is not one element", c->step);
  memcpy(&i, c->t[1].data, sizeof i);
  int64_t at = c->scalar[1] ? n - 1 - i : i;
  if (at < 0 || at >= n) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (ScanSlice): iteration %lld is past the scan axis, of length %lld", c->step,
                      (long long)i, (long long)n);
  }
  int64_t want[ONNXC_MAX_RANK];
  for (int32_t a = 0, b = 0; a < x->rank; a++)
    if (a != axis) want[b++] = x->dims[a];
  onnxc_status st = onnxc_host_check_dims(c, 2, want, x->rank - 1);
  if (st != ONNXC_OK) return st;
  uint64_t outer = span(x->dims, 0, axis), inner = span(x->dims, axis + 1, x->rank) * onnxc_dtype_size(x->dtype);
  for (uint64_t o = 0; o < outer; o++)
    memcpy((uint8_t *)y->data + o * inner, (const uint8_t *)x->data + (o * (uint64_t)n + (uint64_t)at) * inner, inner);
  return ONNXC_OK;
}

const onnxc_host_op_info onnxc_host_scan_slice = {"ScanSlice", 2, 1, 2, 0, check_scan_slice, run_scan_slice};

/* ---- SCAN_APPEND {X} ---- */

static bool check_any(const onnxc_model_desc *d, const int32_t *t, char *why, size_t cap) {
  (void)d, (void)t, (void)why, (void)cap;
  return true;
}

static onnxc_status run_scan_append(onnxc_host_call *c) {
  onnxc_loop_state *l = c->session->loops;
  uint32_t k = c->step;
  uint64_t bytes = c->t[0].numel * onnxc_dtype_size(c->t[0].dtype), used = l->count[k] * l->item_bytes[k];
  if (l->count[k] == 0) l->item_bytes[k] = bytes;
  if (bytes != l->item_bytes[k]) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (ScanAppend): iteration %llu gives %llu bytes, the first gave %llu; a scan output's shape must not change across iterations",
                      k, (unsigned long long)l->count[k], (unsigned long long)bytes, (unsigned long long)l->item_bytes[k]);
  }
  uint64_t need;
  if (__builtin_add_overflow(used, bytes, &need) || need > (UINT64_MAX >> 1)) {
    return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "step %u (ScanAppend): the scan output outgrows the address space", k);
  }
  if (need > l->capacity[k]) {
    uint64_t cap = l->capacity[k] ? l->capacity[k] : 256;
    while (cap < need) cap *= 2; /* need <= 2^63: no overflow */
    uint8_t *grown = cap <= SIZE_MAX ? realloc(l->items[k], (size_t)cap) : NULL;
    if (!grown) return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "step %u (ScanAppend): cannot grow the scan output to %llu bytes", k, (unsigned long long)cap);
    l->items[k] = grown;
    l->capacity[k] = cap;
  }
  if (bytes) memcpy(l->items[k] + used, c->t[0].data, bytes);
  l->count[k]++;
  return ONNXC_OK;
}

const onnxc_host_op_info onnxc_host_scan_append = {"ScanAppend", 1, 0, 0, 0, check_any, run_scan_append};

/* ---- SCAN_COLLECT {Y, append step, axis, reverse} ---- */

static onnxc_status run_scan_collect(onnxc_host_call *c) {
  onnxc_session *s = c->session;
  onnxc_loop_state *l = s->loops;
  uint32_t a = (uint32_t)c->scalar[0]; /* checked at load: an earlier SCAN_APPEND step */
  int32_t axis = (int32_t)c->scalar[1], x = s->model->desc->steps[a].args[0];
  const onnxc_tensor_desc *xd = &s->model->desc->tensors[x];
  const int64_t *xdims = &s->run_dims[s->model->dim_offset[x]];
  int64_t count = (int64_t)l->count[a];
  l->count[a] = 0; /* the next loop (or the next run) gathers afresh */
  onnxc_status st = onnxc_host_bind(c, &count);
  if (st != ONNXC_OK) return st;
  int64_t want[ONNXC_MAX_RANK + 1];
  for (int32_t d = 0, b = 0; d <= xd->rank; d++) want[d] = d == axis ? count : xdims[b++];
  st = onnxc_host_check_dims(c, 0, want, xd->rank + 1);
  if (st != ONNXC_OK || count == 0) return st;
  uint64_t item = l->item_bytes[a], outer = span(xdims, 0, axis);
  if (item != s->run_bytes[x]) return onnxc_fail(ONNXC_ERR_INTERNAL, "step %u (ScanCollect): items of %llu bytes for a %llu-byte value", c->step, (unsigned long long)item, (unsigned long long)s->run_bytes[x]);
  uint64_t inner = outer ? item / outer : 0;
  for (int64_t j = 0; j < count; j++) {
    uint64_t at = (uint64_t)(c->scalar[2] ? count - 1 - j : j);
    for (uint64_t o = 0; o < outer; o++)
      memcpy((uint8_t *)c->t[0].data + (o * (uint64_t)count + at) * inner, l->items[a] + (uint64_t)j * item + o * inner, inner);
  }
  return ONNXC_OK;
}

const onnxc_host_op_info onnxc_host_scan_collect = {"ScanCollect", 0, 1, 3, 1, check_any, run_scan_collect};
