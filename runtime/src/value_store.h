/* Run-time sequences and optionals (ABI v5): the storage for every value entry of the descriptor
 * (tensors[t].value != TENSOR). Each holds its tensors as owned copies, so a value outlives the arena
 * bytes it was made from. A plain data structure: values_api.c is the C API over it, host_sequence.c
 * the ops. */
#ifndef ONNXC_RUNTIME_VALUE_STORE_H
#define ONNXC_RUNTIME_VALUE_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "dtype.h"
#include "onnxc/runtime.h"

/* One tensor of a value: dims and data owned (data may be NULL when bytes is 0). */
typedef struct onnxc_item {
  int32_t dtype, rank;
  int64_t dims[ONNXC_MAX_RANK];
  void *data;
  uint64_t bytes;
} onnxc_item;

typedef struct onnxc_value_store {
  bool present;          /* optionals: false = empty; sequences: always true once written */
  uint32_t count, cap;
  onnxc_item *items;
  onnxc_tensor *views;   /* count entries, rebuilt by onnxc_session_get_output_value */
} onnxc_value_store;

/* The session's stores (NULL when out of memory), one per tensor id. */
onnxc_value_store *onnxc_values_create(uint32_t n_tensors);
void onnxc_values_free(onnxc_value_store *v, uint32_t n_tensors);

/* Empties a store (present = false, count = 0), keeping its capacity. */
void onnxc_value_clear(onnxc_value_store *v);
/* Inserts a copy of rank/dims/data (bytes) at position `at` (0..count). */
onnxc_status onnxc_value_insert(onnxc_value_store *v, uint32_t at, int32_t dtype, int32_t rank, const int64_t *dims,
                                const void *data, uint64_t bytes);
/* dst = a copy of src (dst cleared first; src and dst distinct). */
onnxc_status onnxc_value_copy(onnxc_value_store *dst, const onnxc_value_store *src);
/* Removes item `at`. */
void onnxc_value_erase(onnxc_value_store *v, uint32_t at);

#endif
