/* Host ops: steps the runtime runs itself, in plain C (data-dependent output sizes, strings, sequences).
 * This is all an op sees of the runtime: its arguments as dense tensors, and a narrow context (bind its
 * data dims, check an output's dims, read a value argument, its own per-step state, another step's args).
 * Adding an op: one file defining its onnxc_host_op_info and one entry in host_ops.c's table. */
#ifndef ONNXC_RUNTIME_HOST_OP_H
#define ONNXC_RUNTIME_HOST_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "error.h"
#include "onnxc/model_abi.h"
#include "value_store.h"

#define ONNXC_HOST_MAX_TENSORS 8
#define ONNXC_HOST_MAX_SCALARS 4

#define ONNXC_HOST_MAX_STRIDED_RANK 8

/* One tensor argument as a host op sees it: dense row-major bytes. dims and numel change when the op
 * binds (for its outputs). Only a KV cache the session keeps (CACHE_APPEND's past and present) may have
 * strides that are not dense: stride says them for ranks up to ONNXC_HOST_MAX_STRIDED_RANK. */
typedef struct onnxc_host_tensor {
  void *data;
  int32_t dtype;
  int32_t rank;
  const int64_t *dims; /* rank entries, ONNX order */
  uint64_t numel;
  int64_t stride[ONNXC_HOST_MAX_STRIDED_RANK]; /* elements, ONNX order (dense unless said above) */
} onnxc_host_tensor;

typedef struct onnxc_host_call onnxc_host_call;
typedef struct onnxc_host_op_info onnxc_host_op_info;

/* What the executor does for an op, behind the call (the op never sees the session). */
typedef struct onnxc_host_services {
  /* Binds the step's data dims to values[n_binds], shapes and places everything they determine, and
   * refreshes c->t. */
  onnxc_status (*bind)(onnxc_host_call *c, const int64_t *values);
  /* Tensor argument `arg` of an earlier step, as it stands now (ScanCollect reads its ScanAppend's). */
  onnxc_host_tensor (*step_arg)(const onnxc_host_call *c, uint32_t step, int32_t arg);
  /* The per-step state of another host step (NULL when its op keeps none). */
  void *(*step_state)(const onnxc_host_call *c, uint32_t step);
} onnxc_host_services;

struct onnxc_host_call {
  const onnxc_host_services *services;
  void *executor;                   /* the services' own, opaque to the op */
  const onnxc_host_op_info *op;
  const onnxc_model_desc *desc;     /* the descriptor: tensor names for messages */
  uint32_t step;
  void *state;                      /* op->state_bytes, zeroed when the session is created; NULL if 0 */
  onnxc_host_tensor t[ONNXC_HOST_MAX_TENSORS];     /* inputs, then outputs */
  onnxc_value_store *value[ONNXC_HOST_MAX_TENSORS]; /* the store behind each tensor argument */
  int64_t scalar[ONNXC_HOST_MAX_SCALARS];
};

struct onnxc_host_op_info {
  const char *name; /* the ONNX op */
  int32_t n_inputs, n_outputs, n_scalars;
  int32_t n_binds;   /* -1: one per dim of its first output (values in dim order) */
  bool takes_values; /* its arguments may be sequences or optionals (read through c->value) */
  /* Load-time check of dtypes and ranks (dims are checked at run time). tensors: the step's tensor
   * args. Writes why into why[cap] and returns false when the descriptor is wrong for the op. */
  bool (*check)(const onnxc_model_desc *d, const int32_t *tensors, char *why, size_t cap);
  onnxc_status (*run)(onnxc_host_call *c);
  /* Per-step state: state_bytes zeroed bytes per step running the op; reset before each run and
   * free_state (what the state owns) with the session. Either may be NULL. */
  size_t state_bytes;
  void (*reset_state)(void *state);
  void (*free_state)(void *state);
};

/* host_ops.c: the one table; NULL for an op id this runtime does not know. */
const onnxc_host_op_info *onnxc_host_op_lookup(int32_t op);

static inline onnxc_status onnxc_host_bind(onnxc_host_call *c, const int64_t *values) {
  return c->services->bind(c, values);
}

/* host_util.c: a shape-mismatch error for output `out` of the call unless its dims are `want`. */
onnxc_status onnxc_host_check_dims(const onnxc_host_call *c, int32_t out, const int64_t *want, int32_t rank);
/* host_util.c: the name of tensor argument i, for messages. */
const char *onnxc_host_arg_name(const onnxc_host_call *c, int32_t i);

/* host_string.c: ops that write strings keep them in their step state, one block replaced per run. */
typedef struct onnxc_host_strings {
  char *block;
} onnxc_host_strings;
void onnxc_host_free_strings(void *state);
/* The state fields of an op entry that writes strings. */
#define ONNXC_HOST_STRINGS_STATE sizeof(onnxc_host_strings), NULL, onnxc_host_free_strings
/* Writes n strings (src[i], len[i] bytes each) as the step's block (c->state is an onnxc_host_strings)
 * and points out[i] at them. */
onnxc_status onnxc_host_store_strings(onnxc_host_call *c, const char *const *src, const size_t *len, uint64_t n,
                                      const char **out);
/* Element i of a string tensor; a NULL element reads as the empty string. */
const char *onnxc_host_string(const onnxc_host_tensor *t, uint64_t i);

/* host_util.c: element helpers shared by the ops. */
bool onnxc_host_is_float(int32_t dtype);
/* True for the dtypes onnxc_host_compare orders (numbers and bool; not float16, bfloat16 or strings). */
bool onnxc_host_comparable(int32_t dtype);
/* Strict ordering of two elements of `dtype` (NaN after every number, NaNs equal); -1, 0, 1. */
int onnxc_host_compare(int32_t dtype, const void *a, const void *b);

/* Table entries defined beside their ops (host_*.c). */
extern const onnxc_host_op_info onnxc_host_nonzero, onnxc_host_compress, onnxc_host_nms, onnxc_host_unique,
    onnxc_host_reduce_sum, onnxc_host_reduce, onnxc_host_tfidf, onnxc_host_value_size, onnxc_host_string_normalizer,
    onnxc_host_string_cast, onnxc_host_string_concat, onnxc_host_string_equal, onnxc_host_string_split, onnxc_host_regex_full_match, onnxc_host_scan_slice, onnxc_host_scan_append,
    onnxc_host_scan_collect, onnxc_host_value_copy, onnxc_host_value_empty, onnxc_host_seq_insert,
    onnxc_host_seq_at, onnxc_host_seq_erase, onnxc_host_seq_length, onnxc_host_opt_wrap, onnxc_host_opt_has,
    onnxc_host_opt_get, onnxc_host_cache_append, onnxc_host_cache_scatter;

#endif
