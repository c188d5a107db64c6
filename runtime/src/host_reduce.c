/* Reductions whose axes are given at run time as a host op: which axes are reduced, and so the output's
 * dims, depend on the axes tensor's data. REDUCE_SUM is ReduceSum; REDUCE takes the reduction as a
 * scalar (enum reduce_kind, the order of codegen/host_steps.cpp's table). Float types accumulate in
 * double; integers in int64 (Sum, SumSquare, L1, Prod, Max, Min) or double (the others, truncated). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_op.h"

enum reduce_kind { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LOGSUMEXP, R_SUMSQUARE, R_COUNT };
static const char *const kReduceNames[R_COUNT] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                                  "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                                                  "ReduceSumSquare"};

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

/* The reduction's start value, one step, and its finish over `count` elements (in double). */
static double fold_start(int kind) {
  if (kind == R_PROD) return 1;
  if (kind == R_MAX) return -INFINITY;
  if (kind == R_MIN) return INFINITY;
  return 0;
}

static double fold(int kind, double acc, double v) {
  switch (kind) {
    case R_MAX: return isnan(acc) || isnan(v) ? NAN : (v > acc ? v : acc);
    case R_MIN: return isnan(acc) || isnan(v) ? NAN : (v < acc ? v : acc);
    case R_PROD: return acc * v;
    case R_L1: return acc + fabs(v);
    case R_L2: case R_SUMSQUARE: return acc + v * v;
    case R_LOGSUMEXP: return acc + exp(v);
    default: return acc + v;
  }
}

static double finish(int kind, double acc, uint64_t count) {
  switch (kind) {
    case R_MEAN: return acc / (double)count;
    case R_L2: return sqrt(acc);
    case R_LOGSUM: case R_LOGSUMEXP: return log(acc);
    default: return acc;
  }
}

static int64_t fold_int(int kind, int64_t acc, int64_t v) {
  switch (kind) {
    case R_MAX: return v > acc ? v : acc;
    case R_MIN: return v < acc ? v : acc;
    case R_PROD: return (int64_t)((uint64_t)acc * (uint64_t)v);
    case R_L1: return (int64_t)((uint64_t)acc + (uint64_t)(v < 0 ? -(uint64_t)v : (uint64_t)v));
    case R_SUMSQUARE: return (int64_t)((uint64_t)acc + (uint64_t)v * (uint64_t)v);
    default: return (int64_t)((uint64_t)acc + (uint64_t)v);
  }
}

static bool int_exact(int kind) {
  return kind == R_SUM || kind == R_MAX || kind == R_MIN || kind == R_PROD || kind == R_L1 || kind == R_SUMSQUARE;
}

static onnxc_status reduce_by_data(onnxc_host_call *c, bool keep, bool noop, int kind) {
  const onnxc_host_tensor *x = &c->t[0], *axes = &c->t[1];
  const char *name = kReduceNames[kind];
  bool reduced[ONNXC_MAX_RANK] = {false};
  const int64_t *ax = axes->data;
  for (uint64_t k = 0; k < axes->numel; k++) {
    int64_t a = ax[k] < 0 ? ax[k] + x->rank : ax[k];
    if (a < 0 || a >= x->rank) {
      return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "step %u (%s): axis %lld is out of range for rank %d", c->step, name,
                        (long long)ax[k], x->rank);
    }
    reduced[a] = true;
  }
  for (int32_t a = 0; a < x->rank && axes->numel == 0 && !noop; a++) reduced[a] = true;
  int64_t dims[ONNXC_MAX_RANK] = {0};
  int32_t rank = 0;
  uint64_t count = 1;
  for (int32_t a = 0; a < x->rank; a++) {
    if (!reduced[a]) dims[rank++] = x->dims[a];
    else {
      count *= (uint64_t)x->dims[a];
      if (keep) dims[rank++] = 1;
    }
  }
  onnxc_status st = onnxc_host_bind(c, dims);
  if (st == ONNXC_OK) st = onnxc_host_check_dims(c, 2, dims, rank);
  if (st != ONNXC_OK) return st;
  const onnxc_host_tensor *y = &c->t[2];
  size_t size = onnxc_dtype_size(x->dtype);
  bool fl = onnxc_host_is_float(x->dtype) || !int_exact(kind);
  /* Integers are read and folded as int64 (their start: the identity, or the type's extreme for Max/Min,
   * which is what an empty reduction gives). */
  bool i32 = x->dtype == 6;
  int64_t istart = kind == R_PROD ? 1 : kind == R_MAX ? (i32 ? INT32_MIN : INT64_MIN) : kind == R_MIN ? (i32 ? INT32_MAX : INT64_MAX) : 0;
  const uint8_t *src = x->data;
  uint8_t *dst = y->data;
  /* The output holds the accumulators in its own type only when exact; use a scratch copy in double or int64. */
  uint64_t n = y->numel;
  double *accd = fl ? malloc((size_t)(n ? n : 1) * sizeof *accd) : NULL;
  int64_t *acci = fl ? NULL : malloc((size_t)(n ? n : 1) * sizeof *acci);
  if (!accd && !acci) return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "step %u (%s): out of memory", c->step, name);
  for (uint64_t i = 0; i < n; i++) {
    if (fl) accd[i] = fold_start(kind);
    else acci[i] = istart;
  }
  bool in_float = onnxc_host_is_float(x->dtype);
  for (uint64_t i = 0; i < x->numel; i++) {
    uint64_t o = out_index(x, reduced, i);
    const uint8_t *p = src + i * size;
    if (fl) accd[o] = fold(kind, accd[o], in_float ? load_f(x->dtype, p) : (double)load_i(x->dtype, p));
    else acci[o] = fold_int(kind, acci[o], load_i(x->dtype, p));
  }
  for (uint64_t i = 0; i < n; i++) {
    if (!fl) store(x->dtype, dst + i * size, 0, acci[i]);
    else if (in_float) store(x->dtype, dst + i * size, finish(kind, accd[i], count), 0);
    else store(x->dtype, dst + i * size, 0, (int64_t)finish(kind, accd[i], count));
  }
  free(accd);
  free(acci);
  return ONNXC_OK;
}

static onnxc_status run_reduce_sum(onnxc_host_call *c) {
  return reduce_by_data(c, c->scalar[0] != 0, c->scalar[1] != 0, R_SUM);
}

static onnxc_status run_reduce(onnxc_host_call *c) {
  if (c->scalar[2] < 0 || c->scalar[2] >= R_COUNT)
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "step %u: reduction kind %lld is unknown", c->step, (long long)c->scalar[2]);
  return reduce_by_data(c, c->scalar[0] != 0, c->scalar[1] != 0, (int)c->scalar[2]);
}

/* Binds one symbol per output dim (n_binds -1: the output's rank). */
const onnxc_host_op_info onnxc_host_reduce_sum = {.name = "ReduceSum", .n_inputs = 2, .n_outputs = 1, .n_scalars = 2,
    .n_binds = -1, .check = check_reduce_sum, .run = run_reduce_sum};
const onnxc_host_op_info onnxc_host_reduce = {.name = "Reduce", .n_inputs = 2, .n_outputs = 1, .n_scalars = 3,
    .n_binds = -1, .check = check_reduce_sum, .run = run_reduce};
