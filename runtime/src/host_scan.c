/* The scan host ops of a Loop or Scan (ABI v4): SCAN_SLICE (one slice of a scan input per iteration),
 * SCAN_APPEND (gather each iteration's scan output in its step state) and SCAN_COLLECT (after the loop:
 * bind the item count, stack the items of its SCAN_APPEND step). Scan outputs are gathered rather than
 * written in place because the iteration count is known only when the loop ends (a condition may end
 * it early). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_op.h"

enum { DT_INT64 = 7 };

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

static bool is_flag(int64_t v) { return v == 0 || v == 1; }

static bool check_scan_slice_step(const onnxc_host_check *c, char *why, size_t cap) {
  int32_t rank = c->desc->tensors[c->desc->steps[c->step].args[0]].rank;
  int64_t axis, reverse;
  if (!onnxc_host_const_arg(c, 3, &axis) || axis < 0 || axis >= rank || !onnxc_host_const_arg(c, 4, &reverse) || !is_flag(reverse))
    return snprintf(why, cap, "the axis must be a constant in [0, %d) and the reverse flag a constant 0 or 1", rank), false;
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

const onnxc_host_op_info onnxc_host_scan_slice = {.name = "ScanSlice", .n_inputs = 2, .n_outputs = 1, .n_scalars = 2,
    .n_binds = 0, .check = check_scan_slice, .check_step = check_scan_slice_step, .run = run_scan_slice};

/* ---- SCAN_APPEND {X} ---- */

static bool check_any(const onnxc_model_desc *d, const int32_t *t, char *why, size_t cap) {
  (void)d, (void)t, (void)why, (void)cap;
  return true;
}

/* A ScanAppend step's state: the items gathered since the last collect, in one growing buffer kept
 * across runs. */
typedef struct scan_items {
  uint8_t *items;
  uint64_t capacity;   /* bytes allocated */
  uint64_t count;      /* items gathered */
  uint64_t item_bytes; /* bytes of one item (the first append's) */
} scan_items;

/* Before a run: nothing gathered (a run that failed may have left some). */
static void reset_scan_items(void *state) { ((scan_items *)state)->count = 0; }

static void free_scan_items(void *state) { free(((scan_items *)state)->items); }

static onnxc_status run_scan_append(onnxc_host_call *c) {
  scan_items *l = c->state;
  uint32_t k = c->step;
  uint64_t bytes = c->t[0].numel * onnxc_dtype_size(c->t[0].dtype), used = l->count * l->item_bytes;
  if (l->count == 0) l->item_bytes = bytes;
  if (bytes != l->item_bytes) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (ScanAppend): iteration %llu gives %llu bytes, the first gave %llu; a scan output's shape must not change across iterations",
                      k, (unsigned long long)l->count, (unsigned long long)bytes, (unsigned long long)l->item_bytes);
  }
  uint64_t need;
  if (__builtin_add_overflow(used, bytes, &need) || need > (UINT64_MAX >> 1)) {
    return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "step %u (ScanAppend): the scan output outgrows the address space", k);
  }
  if (need > l->capacity) {
    uint64_t cap = l->capacity ? l->capacity : 256;
    while (cap < need) cap *= 2; /* need <= 2^63: no overflow */
    uint8_t *grown = cap <= SIZE_MAX ? realloc(l->items, (size_t)cap) : NULL;
    if (!grown) return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "step %u (ScanAppend): cannot grow the scan output to %llu bytes", k, (unsigned long long)cap);
    l->items = grown;
    l->capacity = cap;
  }
  if (bytes) memcpy(l->items + used, c->t[0].data, bytes);
  l->count++;
  return ONNXC_OK;
}

const onnxc_host_op_info onnxc_host_scan_append = {.name = "ScanAppend", .n_inputs = 1, .n_outputs = 0, .n_scalars = 0,
    .n_binds = 0, .check = check_any, .run = run_scan_append, .state_bytes = sizeof(scan_items),
    .reset_state = reset_scan_items, .free_state = free_scan_items};

/* ---- SCAN_COLLECT {Y, append step, axis, reverse} ---- */

static bool check_scan_collect_step(const onnxc_host_check *c, char *why, size_t cap) {
  const onnxc_model_desc *d = c->desc;
  int64_t a, axis, reverse;
  bool append = onnxc_host_const_arg(c, 1, &a) && a >= 0 && a < (int64_t)c->step && d->steps[a].kind == ONNXC_STEP_HOST &&
                d->steps[a].kernel == ONNXC_HOST_SCAN_APPEND;
  if (!append) return snprintf(why, cap, "its append step must be an earlier ScanAppend step, named by a constant"), false;
  const onnxc_tensor_desc *x = &d->tensors[d->steps[a].args[0]], *y = &d->tensors[d->steps[c->step].args[0]];
  if (x->dtype != y->dtype || y->rank != x->rank + 1) return snprintf(why, cap, "Y must have the appended X's dtype and one dim more"), false;
  if (!onnxc_host_const_arg(c, 2, &axis) || axis < 0 || axis > x->rank || !onnxc_host_const_arg(c, 3, &reverse) || !is_flag(reverse))
    return snprintf(why, cap, "the axis must be a constant in [0, %d] and the reverse flag a constant 0 or 1", x->rank), false;
  return true;
}

static onnxc_status run_scan_collect(onnxc_host_call *c) {
  uint32_t a = (uint32_t)c->scalar[0]; /* checked at load: an earlier SCAN_APPEND step */
  scan_items *l = c->services->step_state(c, a);
  int32_t axis = (int32_t)c->scalar[1];
  onnxc_host_tensor x = c->services->step_arg(c, a, 0);
  const int64_t *xdims = x.dims;
  uint64_t x_bytes = x.numel * onnxc_dtype_size(x.dtype);
  int64_t count = (int64_t)l->count;
  l->count = 0; /* the next loop (or the next run) gathers afresh */
  onnxc_status st = onnxc_host_bind(c, &count);
  if (st != ONNXC_OK) return st;
  int64_t want[ONNXC_MAX_RANK + 1];
  for (int32_t d = 0, b = 0; d <= x.rank; d++) want[d] = d == axis ? count : xdims[b++];
  st = onnxc_host_check_dims(c, 0, want, x.rank + 1);
  if (st != ONNXC_OK || count == 0) return st;
  uint64_t item = l->item_bytes, outer = span(xdims, 0, axis);
  if (item != x_bytes) return onnxc_fail(ONNXC_ERR_INTERNAL, "step %u (ScanCollect): items of %llu bytes for a %llu-byte value", c->step, (unsigned long long)item, (unsigned long long)x_bytes);
  uint64_t inner = outer ? item / outer : 0;
  for (int64_t j = 0; j < count; j++) {
    uint64_t at = (uint64_t)(c->scalar[2] ? count - 1 - j : j);
    for (uint64_t o = 0; o < outer; o++)
      memcpy((uint8_t *)c->t[0].data + (o * (uint64_t)count + at) * inner, l->items + (uint64_t)j * item + o * inner, inner);
  }
  return ONNXC_OK;
}

const onnxc_host_op_info onnxc_host_scan_collect = {.name = "ScanCollect", .n_inputs = 0, .n_outputs = 1,
    .n_scalars = 3, .n_binds = 1, .check = check_any, .check_step = check_scan_collect_step, .run = run_scan_collect};
