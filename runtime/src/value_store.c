/* The store of run-time sequences and optionals: owned copies of their tensors (see value_store.h). */
#include "value_store.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

onnxc_value_store *onnxc_values_create(uint32_t n_tensors) {
  return calloc(n_tensors ? n_tensors : 1, sizeof(onnxc_value_store));
}

void onnxc_values_free(onnxc_value_store *v, uint32_t n_tensors) {
  for (uint32_t t = 0; v && t < n_tensors; t++) {
    onnxc_value_clear(&v[t]);
    free(v[t].items);
    free(v[t].views);
  }
  free(v);
}

void onnxc_value_clear(onnxc_value_store *v) {
  for (uint32_t i = 0; i < v->count; i++) free(v->items[i].data);
  v->count = 0;
  v->present = false;
}

onnxc_status onnxc_value_insert(onnxc_value_store *v, uint32_t at, int32_t dtype, int32_t rank, const int64_t *dims,
                                const void *data, uint64_t bytes) {
  if (rank < 0 || rank > ONNXC_MAX_RANK) return onnxc_fail(ONNXC_ERR_UNSUPPORTED, "a tensor of rank %d in a sequence (0..%d supported)", rank, ONNXC_MAX_RANK);
  if (v->count == v->cap) {
    uint32_t cap = v->cap ? 2 * v->cap : 4;
    onnxc_item *items = realloc(v->items, cap * sizeof *items);
    if (!items) return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "cannot grow a sequence to %u tensors", cap);
    v->items = items;
    v->cap = cap;
  }
  onnxc_item item = {dtype, rank, {0}, NULL, bytes};
  if (rank > 0) memcpy(item.dims, dims, (size_t)rank * sizeof *dims);
  if (bytes > 0) {
    item.data = bytes <= SIZE_MAX ? malloc((size_t)bytes) : NULL;
    if (!item.data) return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "cannot allocate %llu bytes for a sequence item", (unsigned long long)bytes);
    memcpy(item.data, data, (size_t)bytes);
  }
  memmove(&v->items[at + 1], &v->items[at], (v->count - at) * sizeof *v->items);
  v->items[at] = item;
  v->count++;
  v->present = true;
  return ONNXC_OK;
}

onnxc_status onnxc_value_copy(onnxc_value_store *dst, const onnxc_value_store *src) {
  onnxc_value_clear(dst);
  for (uint32_t i = 0; i < src->count; i++) {
    const onnxc_item *it = &src->items[i];
    onnxc_status st = onnxc_value_insert(dst, i, it->dtype, it->rank, it->dims, it->data, it->bytes);
    if (st != ONNXC_OK) return st;
  }
  dst->present = src->present;
  return ONNXC_OK;
}

void onnxc_value_erase(onnxc_value_store *v, uint32_t at) {
  free(v->items[at].data);
  memmove(&v->items[at], &v->items[at + 1], (v->count - at - 1) * sizeof *v->items);
  v->count--;
}
