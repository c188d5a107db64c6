/* The KV cache steps. CACHE_APPEND: present = past ++ new along `axis`. When present and past share
 * their first byte and their strides (a session keeping its cache lays both out in one buffer with
 * capacity along the axis, kv_cache.c), past's rows are already in place and only new's are written:
 * a decode step moves one row per head, not the whole cache. Otherwise past is copied first.
 * CACHE_SCATTER (ONNX TensorScatter): present is past (its length is the cache's capacity) with the
 * update's rows written from write_indices[b] on; in place (present is past's buffer) only those rows
 * move. */
#include <stdio.h>
#include <string.h>

#include "host_op.h"

static bool check_cache_append(const onnxc_model_desc *d, const int32_t *t, char *why, size_t cap) {
  const onnxc_tensor_desc *past = &d->tensors[t[0]], *add = &d->tensors[t[1]], *out = &d->tensors[t[2]];
  if (past->dtype != add->dtype || past->dtype != out->dtype || past->dtype == 8) {
    snprintf(why, cap, "past, new and present must have one numeric dtype");
    return false;
  }
  if (past->rank != out->rank || past->rank < 1 || past->rank > ONNXC_HOST_MAX_STRIDED_RANK) {
    snprintf(why, cap, "past and present must have one rank, 1 to %d", ONNXC_HOST_MAX_STRIDED_RANK);
    return false;
  }
  return true;
}

/* Copies a [dims] block from src to dst, both strided (elements; the last stride 1 on both). */
static void copy_block(uint8_t *dst, const int64_t *dst_stride, const uint8_t *src, const int64_t *src_stride,
                       const int64_t *dims, int32_t rank, size_t esize) {
  if (rank == 1) {
    memcpy(dst, src, (size_t)dims[0] * esize);
    return;
  }
  for (int64_t i = 0; i < dims[0]; i++) {
    copy_block(dst + (size_t)(i * dst_stride[0]) * esize, dst_stride + 1, src + (size_t)(i * src_stride[0]) * esize,
               src_stride + 1, dims + 1, rank - 1, esize);
  }
}

static bool same_layout(const onnxc_host_tensor *a, const onnxc_host_tensor *b) {
  if (a->data != b->data || a->rank != b->rank) return false;
  for (int32_t i = 0; i < a->rank; i++) {
    if (a->dims[i] > 1 && b->dims[i] > 1 && a->stride[i] != b->stride[i]) return false;
  }
  return true;
}

/* A stacked cache's link (layer >= 0): past [L, .., P, ..] (or the previous link's [L, .., P + n, ..]
 * when not `grow`), new [.., n, ..] is layer `layer`'s rows, written at positions P + n - n.. of that
 * layer; the other layers' rows come from past, or from the links that follow. */
static onnxc_status run_cache_append_layer(onnxc_host_call *c, int64_t axis, int64_t layer, bool grow, size_t esize) {
  const onnxc_host_tensor *past = &c->t[0], *add = &c->t[1], *out = &c->t[2];
  int32_t r = past->rank;
  if (add->rank != r - 1 || axis < 1 || layer >= past->dims[0]) {
    return onnxc_fail(ONNXC_ERR_INTERNAL, "step %u (CacheAppend): layer %lld, axis %lld do not fit ranks %d and %d", c->step,
                      (long long)layer, (long long)axis, r, add->rank);
  }
  int64_t n = add->dims[axis - 1];
  for (int32_t i = 0; i < r; i++) {
    int64_t want = i == axis ? past->dims[i] + (grow ? n : 0) : past->dims[i];
    if (out->dims[i] != want || (i > 0 && i != axis && add->dims[i - 1] != past->dims[i])) {
      return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (CacheAppend '%s', layer %lld): past, new and present do not fit along dim %d",
                        c->step, onnxc_host_arg_name(c, 2), (long long)layer, i);
    }
  }
  if (out->numel == 0) return ONNXC_OK;
  if (!same_layout(past, out) && past->numel > 0) copy_block(out->data, out->stride, past->data, past->stride, past->dims, r, esize);
  if (add->numel > 0) {
    uint8_t *dst = (uint8_t *)out->data + (size_t)(layer * out->stride[0] + (out->dims[axis] - n) * out->stride[axis]) * esize;
    copy_block(dst, out->stride + 1, add->data, add->stride, add->dims, r - 1, esize);
  }
  return ONNXC_OK;
}

static onnxc_status run_cache_append(onnxc_host_call *c) {
  const onnxc_host_tensor *past = &c->t[0], *add = &c->t[1], *out = &c->t[2];
  int32_t r = past->rank;
  int64_t axis = c->scalar[0], heads = c->scalar[1], layer = c->scalar[2];
  size_t esize = onnxc_dtype_size(out->dtype);
  if (out->stride[r - 1] != 1 || past->stride[r - 1] != 1 || add->stride[add->rank - 1] != 1) {
    return onnxc_fail(ONNXC_ERR_INTERNAL, "step %u (CacheAppend): rows must be dense", c->step);
  }
  if (layer >= 0) return run_cache_append_layer(c, axis, layer, c->scalar[3] != 0, esize);
  if (axis < 0 || axis >= r || (heads > 0 && (r != 4 || axis != 2 || add->rank != 3)) || (heads <= 0 && add->rank != r)) {
    return onnxc_fail(ONNXC_ERR_INTERNAL, "step %u (CacheAppend): axis %lld or heads %lld do not fit ranks %d and %d",
                      c->step, (long long)axis, (long long)heads, r, add->rank);
  }
  /* new as a block of present's shape: [b, H, s, d] read from [b, s, H * d] when heads is set. */
  int64_t dims[ONNXC_HOST_MAX_STRIDED_RANK], src_stride[ONNXC_HOST_MAX_STRIDED_RANK];
  if (heads > 0) {
    int64_t d = add->dims[2] / heads;
    dims[0] = add->dims[0], dims[1] = heads, dims[2] = add->dims[1], dims[3] = d;
    src_stride[0] = add->stride[0], src_stride[1] = d, src_stride[2] = add->stride[1], src_stride[3] = 1;
  } else {
    memcpy(dims, add->dims, (size_t)r * sizeof *dims);
    memcpy(src_stride, add->stride, (size_t)r * sizeof *src_stride);
  }
  int64_t p = past->dims[axis];
  for (int32_t i = 0; i < r; i++) {
    int64_t want = i == axis ? p + dims[i] : dims[i];
    if (out->dims[i] != want || (i != axis && past->dims[i] != dims[i])) {
      return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (CacheAppend '%s'): past, new and present do not fit along dim %d",
                        c->step, onnxc_host_arg_name(c, 2), i);
    }
  }
  if (out->numel == 0) return ONNXC_OK;
  if (!same_layout(past, out) && past->numel > 0) {
    copy_block(out->data, out->stride, past->data, past->stride, past->dims, r, esize);
  }
  if (add->numel > 0) {
    uint8_t *dst = (uint8_t *)out->data + (size_t)(p * out->stride[axis]) * esize;
    copy_block(dst, out->stride, add->data, src_stride, dims, r, esize);
  }
  return ONNXC_OK;
}

/* args {past, update, write_indices (int64 [b]; 0 elements: all 0), present, axis, circular}. Update rows
 * whose position falls outside the cache are left out (linear mode), as the kernel form does. */
static bool check_cache_scatter(const onnxc_model_desc *d, const int32_t *t, char *why, size_t cap) {
  if (!check_cache_append(d, (const int32_t[]){t[0], t[1], t[3]}, why, cap)) return false;
  if (d->tensors[t[2]].dtype != 7 || d->tensors[t[2]].rank != 1 || d->tensors[t[1]].rank != d->tensors[t[0]].rank) {
    snprintf(why, cap, "write_indices must be int64 [batch] and the update have past's rank");
    return false;
  }
  return true;
}

static onnxc_status run_cache_scatter(onnxc_host_call *c) {
  const onnxc_host_tensor *past = &c->t[0], *upd = &c->t[1], *idx = &c->t[2], *out = &c->t[3];
  int32_t r = past->rank;
  int64_t axis = c->scalar[0];
  bool circular = c->scalar[1] != 0;
  if (axis < 1 || axis >= r) return onnxc_fail(ONNXC_ERR_INTERNAL, "step %u (CacheScatter): axis %lld", c->step, (long long)axis);
  for (int32_t i = 0; i < r; i++) {
    if (out->dims[i] != past->dims[i] || (i != axis && upd->dims[i] != past->dims[i])) {
      return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (TensorScatter '%s'): past, update and present do not fit along dim %d",
                        c->step, onnxc_host_arg_name(c, 3), i);
    }
  }
  if (idx->numel != 0 && idx->numel != (uint64_t)past->dims[0]) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (TensorScatter): write_indices has %llu entries for a batch of %lld",
                      c->step, (unsigned long long)idx->numel, (long long)past->dims[0]);
  }
  size_t esize = onnxc_dtype_size(out->dtype);
  if (out->numel == 0) return ONNXC_OK;
  if (!same_layout(past, out)) copy_block(out->data, out->stride, past->data, past->stride, past->dims, r, esize);
  int64_t len = past->dims[axis], dims[ONNXC_HOST_MAX_STRIDED_RANK];
  memcpy(dims, upd->dims, (size_t)r * sizeof *dims);
  dims[0] = 1, dims[axis] = 1;  /* one batch entry, one position at a time */
  for (int64_t b = 0; b < past->dims[0]; b++) {
    int64_t start = idx->numel ? ((const int64_t *)idx->data)[b] : 0;
    for (int64_t j = 0; j < upd->dims[axis]; j++) {
      int64_t pos = start + j;
      if (circular && len > 0) pos = ((pos % len) + len) % len;
      if (pos < 0 || pos >= len) continue;
      uint8_t *dst = (uint8_t *)out->data + (size_t)(b * out->stride[0] + pos * out->stride[axis]) * esize;
      const uint8_t *src = (const uint8_t *)upd->data + (size_t)(b * upd->stride[0] + j * upd->stride[axis]) * esize;
      copy_block(dst, out->stride, src, upd->stride, dims, r, esize);
    }
  }
  return ONNXC_OK;
}

/* {past, update, write_indices, present, axis, circular} */
static const onnxc_host_cache_args kScatterCache = {.past = 0, .present = 3, .axis = 4, .own_capacity = true};
const onnxc_host_op_info onnxc_host_cache_scatter = {.name = "CacheScatter", .n_inputs = 3, .n_outputs = 1,
    .n_scalars = 2, .n_binds = 0, .check = check_cache_scatter, .run = run_cache_scatter, .cache = &kScatterCache};

/* {past, new, present, axis, heads, layer, grow} */
static const onnxc_host_cache_args kAppendCache = {.past = 0, .present = 2, .axis = 3, .own_capacity = false};
const onnxc_host_op_info onnxc_host_cache_append = {.name = "CacheAppend", .n_inputs = 2, .n_outputs = 1,
    .n_scalars = 4, .n_binds = 0, .check = check_cache_append, .run = run_cache_append, .cache = &kAppendCache};
