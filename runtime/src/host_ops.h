/* Host ops: steps the runtime runs itself, in plain C, because their output sizes depend on input data
 * (NonZero, Compress, Unique, NonMaxSuppression). Each op computes its result, binds its data dims
 * with onnxc_host_bind (which shapes and places its outputs and everything else those dims determine),
 * then writes its outputs. The table below is the one place that knows each op's argument list. */
#ifndef ONNXC_RUNTIME_HOST_OPS_H
#define ONNXC_RUNTIME_HOST_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onnxc/runtime.h"

#define ONNXC_HOST_MAX_TENSORS 8
#define ONNXC_HOST_MAX_SCALARS 4

/* One tensor argument as a host op sees it: dense row-major bytes. dims and numel change when the op
 * binds (for its outputs). */
typedef struct onnxc_host_tensor {
  void *data;
  int32_t dtype;
  int32_t rank;
  const int64_t *dims; /* rank entries, ONNX order */
  uint64_t numel;
} onnxc_host_tensor;

typedef struct onnxc_host_call {
  onnxc_session *session;
  uint32_t step;
  onnxc_host_tensor t[ONNXC_HOST_MAX_TENSORS]; /* inputs, then outputs */
  int64_t scalar[ONNXC_HOST_MAX_SCALARS];
} onnxc_host_call;

typedef struct onnxc_host_op_info {
  const char *name; /* the ONNX op */
  int32_t n_inputs, n_outputs, n_scalars;
  int32_t n_binds; /* -1: one per dim of its first output (values in dim order) */
  /* Load-time check of dtypes and ranks (dims are checked at run time). tensors: the step's tensor
   * args. Writes why into why[cap] and returns false when the descriptor is wrong for the op. */
  bool (*check)(const onnxc_model_desc *d, const int32_t *tensors, char *why, size_t cap);
  onnxc_status (*run)(onnxc_host_call *c);
} onnxc_host_op_info;

/* NULL for an op id this runtime does not know. */
const onnxc_host_op_info *onnxc_host_op_lookup(int32_t op);

/* Table entries defined beside their ops: host_unique.c, host_reduce.c, host_tfidf.c,
 * host_value.c, host_string.c. */
extern const onnxc_host_op_info onnxc_host_unique;
extern const onnxc_host_op_info onnxc_host_reduce_sum;
extern const onnxc_host_op_info onnxc_host_tfidf;
extern const onnxc_host_op_info onnxc_host_value_size;
extern const onnxc_host_op_info onnxc_host_string_normalizer;
extern const onnxc_host_op_info onnxc_host_string_cast;
/* host_sequence.c: the value host ops (sequences and optionals); NULL for another id. */
const onnxc_host_op_info *onnxc_host_value_op_lookup(int32_t op);

/* bind_data.c: binds the step's data dims to values[n_binds] (checking dims the descriptor already
 * knows), evaluates and places everything they determine, and refreshes c->t. */
onnxc_status onnxc_host_bind(onnxc_host_call *c, const int64_t *values);

/* bind_data.c: a shape-mismatch error for output `out` of the call: its dims are not `want`. */
onnxc_status onnxc_host_check_dims(const onnxc_host_call *c, int32_t out, const int64_t *want, int32_t rank);

/* Element helpers shared by the ops. */
bool onnxc_host_is_float(int32_t dtype);
/* True for the dtypes onnxc_host_compare orders (numbers and bool; not float16, bfloat16 or strings). */
bool onnxc_host_comparable(int32_t dtype);
/* Strict ordering of two elements of `dtype` (NaN after every number, NaNs equal); -1, 0, 1. */
int onnxc_host_compare(int32_t dtype, const void *a, const void *b);

#endif
