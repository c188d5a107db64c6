/* CACHE_APPEND: a KV cache step, present = past ++ new along `axis`. When present and past share
 * their first byte and their strides (a session keeping its cache lays both out in one buffer with
 * capacity along the axis, kv_cache.c), past's rows are already in place and only new's are written:
 * a decode step moves one row per head, not the whole cache. Otherwise past is copied first. */
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

static onnxc_status run_cache_append(onnxc_host_call *c) {
  const onnxc_host_tensor *past = &c->t[0], *add = &c->t[1], *out = &c->t[2];
  int32_t r = past->rank;
  int64_t axis = c->scalar[0], heads = c->scalar[1];
  if (axis < 0 || axis >= r || (heads > 0 && (r != 4 || axis != 2 || add->rank != 3)) || (heads <= 0 && add->rank != r)) {
    return onnxc_fail(ONNXC_ERR_INTERNAL, "step %u (CacheAppend): axis %lld or heads %lld do not fit ranks %d and %d",
                      c->step, (long long)axis, (long long)heads, r, add->rank);
  }
  size_t esize = onnxc_dtype_size(out->dtype);
  if (out->stride[r - 1] != 1 || past->stride[r - 1] != 1 || add->stride[add->rank - 1] != 1) {
    return onnxc_fail(ONNXC_ERR_INTERNAL, "step %u (CacheAppend): rows must be dense", c->step);
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

const onnxc_host_op_info onnxc_host_cache_append = {"CacheAppend", 2, 1, 2, 0, false, check_cache_append,
                                                    run_cache_append, 0, NULL, NULL};
