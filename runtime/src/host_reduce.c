/* ReduceSum with its axes given at run time as a host op: which axes are reduced, and so the output's
 * dims, depend on the axes tensor's data. Sums accumulate in double (float types) or int64 (integers). */
#include <stdio.h>
#include <string.h>

#include "host_op.h"

static bool check_reduce_sum(const onnxc_model_desc *d, const int32_t *t, char *why, size_t cap) {
  int32_t dt = d->tensors[t[0]].dtype;
  if (dt != 1 && dt != 11 && dt != 6 && dt != 7) {
    snprintf(why, cap, "input dtype %s is not supported (float, double, int32, int64)", onnxc_dtype_name(dt));
    return false;
  }
  if (d->tensors[t[1]].dtype != 7 || d->tensors[t[1]].rank != 1) {
    snprintf(why, cap, "axes must be int64 of rank 1");
    return false;
  }
  if (d->tensors[t[2]].dtype != dt) {
    snprintf(why, cap, "output dtype differs from the input's");
    return false;
  }
  return true;
}

static double load_f(int32_t dt, const uint8_t *p) {
  if (dt == 1) {
    float v;
    memcpy(&v, p, sizeof v);
    return v;
  }
  double v;
  memcpy(&v, p, sizeof v);
  return v;
}

static int64_t load_i(int32_t dt, const uint8_t *p) {
  if (dt == 6) {
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
  }
  int64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static void store(int32_t dt, uint8_t *p, double f, int64_t i) {
  if (dt == 1) {
    float v = (float)f;
    memcpy(p, &v, sizeof v);
  } else if (dt == 11) {
    memcpy(p, &f, sizeof f);
  } else if (dt == 6) {
    int32_t v = (int32_t)(uint32_t)(uint64_t)i; /* wraps, as int32 addition does */
    memcpy(p, &v, sizeof v);
  } else {
    memcpy(p, &i, sizeof i);
  }
}

/* Output element of input element `i`: drop (or zero) the reduced axes. */
static uint64_t out_index(const onnxc_host_tensor *x, const bool *reduced, uint64_t i) {
  uint64_t out = 0, scale = 1;
  for (int32_t a = x->rank - 1; a >= 0; a--) {
    uint64_t coord = i % (uint64_t)x->dims[a];
    i /= (uint64_t)x->dims[a];
    if (reduced[a]) continue;
    out += coord * scale;
    scale *= (uint64_t)x->dims[a];
  }
  return out;
}

static onnxc_status run_reduce_sum(onnxc_host_call *c) {
  const onnxc_host_tensor *x = &c->t[0], *axes = &c->t[1];
  bool keep = c->scalar[0] != 0, noop = c->scalar[1] != 0;
  bool reduced[ONNXC_MAX_RANK] = {false};
  const int64_t *ax = axes->data;
  for (uint64_t k = 0; k < axes->numel; k++) {
    int64_t a = ax[k] < 0 ? ax[k] + x->rank : ax[k];
    if (a < 0 || a >= x->rank) {
      return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "step %u (ReduceSum): axis %lld is out of range for rank %d", c->step,
                        (long long)ax[k], x->rank);
    }
    reduced[a] = true;
  }
  for (int32_t a = 0; a < x->rank && axes->numel == 0 && !noop; a++) reduced[a] = true;
  int64_t dims[ONNXC_MAX_RANK] = {0};
  int32_t rank = 0;
  for (int32_t a = 0; a < x->rank; a++) {
    if (!reduced[a]) dims[rank++] = x->dims[a];
    else if (keep) dims[rank++] = 1;
  }
  onnxc_status st = onnxc_host_bind(c, dims);
  if (st == ONNXC_OK) st = onnxc_host_check_dims(c, 2, dims, rank);
  if (st != ONNXC_OK) return st;
  const onnxc_host_tensor *y = &c->t[2];
  size_t size = onnxc_dtype_size(x->dtype);
  bool fl = onnxc_host_is_float(x->dtype);
  memset(y->data, 0, (size_t)y->numel * size);
  const uint8_t *src = x->data;
  uint8_t *dst = y->data;
  for (uint64_t i = 0; i < x->numel; i++) {
    uint8_t *o = dst + out_index(x, reduced, i) * size;
    if (fl) store(x->dtype, o, load_f(x->dtype, o) + load_f(x->dtype, src + i * size), 0);
    else store(x->dtype, o, 0, (int64_t)((uint64_t)load_i(x->dtype, o) + (uint64_t)load_i(x->dtype, src + i * size)));
  }
  return ONNXC_OK;
}

/* Binds one symbol per output dim (n_binds -1: the output's rank). */
const onnxc_host_op_info onnxc_host_reduce_sum = {"ReduceSum", 2, 1, 2, -1, false, check_reduce_sum, run_reduce_sum, 0, NULL, NULL};
