/* Unique as a host op: the distinct elements of X (or distinct slices along an axis), sorted ascending
 * or in order of first occurrence, with first-occurrence indices, the inverse map and counts. A stable
 * merge sort of slice indices groups equal slices; slices compare element by element. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_op.h"

/* Slice s of X: elements (o * len + s) * inner + i for o < outer, i < inner (len slices). */
typedef struct slices {
  const uint8_t *data;
  int32_t dtype;
  size_t size;
  uint64_t outer, len, inner;
} slices;

static int compare_slices(const slices *x, int64_t a, int64_t b) {
  for (uint64_t o = 0; o < x->outer; o++) {
    for (uint64_t i = 0; i < x->inner; i++) {
      const uint8_t *pa = x->data + ((o * x->len + (uint64_t)a) * x->inner + i) * x->size;
      const uint8_t *pb = x->data + ((o * x->len + (uint64_t)b) * x->inner + i) * x->size;
      int c = onnxc_host_compare(x->dtype, pa, pb);
      if (c) return c;
    }
  }
  return 0;
}

/* Stable bottom-up merge sort of idx[n] by key(i) via cmp; tmp holds n entries. */
static void sort_stable(int64_t *idx, int64_t *tmp, int64_t n, int (*cmp)(const void *, int64_t, int64_t), const void *ctx) {
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = cmp(ctx, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
      while (i < mid) tmp[k++] = idx[i++];
      while (j < hi) tmp[k++] = idx[j++];
    }
    memcpy(idx, tmp, (size_t)n * sizeof *idx);
  }
}

static int by_slice(const void *ctx, int64_t a, int64_t b) { return compare_slices(ctx, a, b); }
static int by_value(const void *ctx, int64_t a, int64_t b) {
  const int64_t *first = ctx;
  return first[a] < first[b] ? -1 : first[a] > first[b];
}

static bool check_unique(const onnxc_model_desc *d, const int32_t *t, char *why, size_t cap) {
  int32_t dt = d->tensors[t[0]].dtype;
  if (!onnxc_host_comparable(dt)) {
    snprintf(why, cap, "input dtype %s is not supported", onnxc_dtype_name(dt));
    return false;
  }
  if (d->tensors[t[1]].dtype != dt) {
    snprintf(why, cap, "output dtype differs from the input's");
    return false;
  }
  for (int i = 2; i < 5; i++) {
    if (d->tensors[t[i]].dtype != 7 || d->tensors[t[i]].rank != 1) {
      snprintf(why, cap, "indices, inverse_indices and counts must be int64 of rank 1");
      return false;
    }
  }
  return true;
}

/* Writes the outputs once the unique count is bound. first/count/pos are per group (sorted order). */
static onnxc_status write_unique(onnxc_host_call *c, const slices *x, int64_t axis, const int64_t *order,
                                 const int64_t *group, const int64_t *first, const int64_t *count, const int64_t *pos,
                                 int64_t u) {
  const onnxc_host_tensor *in = &c->t[0];
  int64_t want[ONNXC_MAX_RANK];
  int32_t rank = axis >= 0 ? in->rank : 1;
  for (int32_t a = 0; a < rank; a++) want[a] = axis < 0 || a == axis ? u : in->dims[a];
  onnxc_status st = onnxc_host_check_dims(c, 1, want, rank);
  int64_t n = (int64_t)x->len;
  if (st == ONNXC_OK) st = onnxc_host_check_dims(c, 2, &u, 1);
  if (st == ONNXC_OK) st = onnxc_host_check_dims(c, 3, &n, 1);
  if (st == ONNXC_OK) st = onnxc_host_check_dims(c, 4, &u, 1);
  if (st != ONNXC_OK) return st;
  uint8_t *y = c->t[1].data;
  int64_t *indices = c->t[2].data, *inverse = c->t[3].data, *counts = c->t[4].data;
  size_t row = x->inner * x->size;
  for (int64_t g = 0; g < u; g++) {
    int64_t p = pos[g];
    indices[p] = first[g];
    counts[p] = count[g];
    for (uint64_t o = 0; o < x->outer; o++) {
      memcpy(y + (o * (uint64_t)u + (uint64_t)p) * row, x->data + (o * x->len + (uint64_t)first[g]) * row, row);
    }
  }
  for (int64_t i = 0; i < n; i++) inverse[order[i]] = pos[group[i]];
  return ONNXC_OK;
}

static onnxc_status run_unique(onnxc_host_call *c) {
  const onnxc_host_tensor *in = &c->t[0];
  int64_t axis = c->scalar[0];
  if (axis < -1 || axis >= in->rank) {
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "step %u (Unique): axis %lld is out of range for rank %d", c->step,
                      (long long)axis, in->rank);
  }
  slices x = {in->data, in->dtype, onnxc_dtype_size(in->dtype), 1, in->numel, 1};
  if (axis >= 0) {
    x.len = (uint64_t)in->dims[axis];
    for (int32_t a = 0; a < axis; a++) x.outer *= (uint64_t)in->dims[a];
    for (int32_t a = (int32_t)axis + 1; a < in->rank; a++) x.inner *= (uint64_t)in->dims[a];
  }
  int64_t n = (int64_t)x.len;
  size_t cells = (size_t)n + 1;
  int64_t *order = malloc(cells * sizeof *order), *tmp = malloc(cells * sizeof *tmp);
  int64_t *group = malloc(cells * sizeof *group), *first = malloc(cells * sizeof *first);
  int64_t *count = malloc(cells * sizeof *count), *pos = malloc(cells * sizeof *pos);
  onnxc_status st = ONNXC_OK;
  if (!order || !tmp || !group || !first || !count || !pos) {
    st = onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "step %u (Unique): out of memory", c->step);
  }
  int64_t u = 0;
  if (st == ONNXC_OK) {
    for (int64_t i = 0; i < n; i++) order[i] = i;
    sort_stable(order, tmp, n, by_slice, &x);
    for (int64_t i = 0; i < n; i++) { /* runs of equal slices; stable, so a run starts at its first occurrence */
      if (i == 0 || compare_slices(&x, order[i - 1], order[i]) != 0) first[u] = order[i], count[u++] = 0;
      group[i] = u - 1;
      count[u - 1]++;
    }
    for (int64_t g = 0; g < u; g++) pos[g] = g;
    if (c->scalar[1] == 0) { /* not sorted: groups in order of first occurrence */
      sort_stable(pos, tmp, u, by_value, first);
      for (int64_t r = 0; r < u; r++) tmp[pos[r]] = r;
      memcpy(pos, tmp, (size_t)u * sizeof *pos);
    }
    st = onnxc_host_bind(c, &u);
  }
  if (st == ONNXC_OK) st = write_unique(c, &x, axis, order, group, first, count, pos, u);
  free(order), free(tmp), free(group), free(first), free(count), free(pos);
  return st;
}

const onnxc_host_op_info onnxc_host_unique = {.name = "Unique", .n_inputs = 1, .n_outputs = 4, .n_scalars = 2,
    .n_binds = 1, .check = check_unique, .run = run_unique};
