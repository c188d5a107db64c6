/* Greedy best-fit-by-size arena planning. O(n^2) in the number of buffers, which is a few hundred for a
 * transformer; plans are cached per input shape by the session. */
#include "memory_plan.h"

#include <stdbool.h>
#include <stdlib.h>

typedef struct placed {
  uint64_t offset, size; /* size rounded up to the alignment */
  int32_t first, last;
} placed;

typedef struct sort_key { /* qsort has no context argument: the key travels with the index */
  uint64_t size;
  int32_t first;
  size_t index;
} sort_key;

/* Largest first; ties: earlier first use, then lower index, so plans are deterministic. */
static int by_size_desc(const void *pa, const void *pb) {
  const sort_key *a = pa, *b = pb;
  if (a->size != b->size) return a->size > b->size ? -1 : 1;
  if (a->first != b->first) return a->first < b->first ? -1 : 1;
  return a->index < b->index ? -1 : (a->index > b->index ? 1 : 0);
}

static bool live_together(const placed *p, int32_t first, int32_t last) {
  return p->first <= last && first <= p->last;
}

/* The lowest offset of the smallest gap among the placed buffers live together with [first, last] that
 * holds `size`, else the end of the highest of them. `placed` is sorted by offset. */
static uint64_t best_fit(const placed *list, size_t n, uint64_t size, int32_t first, int32_t last) {
  uint64_t end = 0, best = 0, best_gap = UINT64_MAX;
  bool found = false;
  for (size_t i = 0; i < n; i++) {
    const placed *p = &list[i];
    if (!live_together(p, first, last)) continue;
    if (p->offset > end) {
      uint64_t gap = p->offset - end;
      if (gap >= size && gap < best_gap) {
        best = end;
        best_gap = gap;
        found = true;
      }
    }
    if (p->offset + p->size > end) end = p->offset + p->size;
  }
  return found ? best : end;
}

onnxc_status onnxc_plan_memory(const onnxc_buffer_request *req, size_t n, uint64_t alignment,
                               uint64_t *offsets, uint64_t *arena_size) {
  *arena_size = 0;
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return ONNXC_ERR_INVALID_ARGUMENT;
  sort_key *order = malloc((n ? n : 1) * sizeof *order);
  placed *list = malloc((n ? n : 1) * sizeof *list);
  if (!order || !list) {
    free(order);
    free(list);
    return ONNXC_ERR_OUT_OF_MEMORY;
  }
  size_t n_order = 0;
  onnxc_status status = ONNXC_OK;
  for (size_t i = 0; i < n; i++) {
    offsets[i] = 0;
    if (req[i].size == 0 || req[i].first_step < 0) continue;
    if (req[i].last_step < req[i].first_step) status = ONNXC_ERR_INVALID_ARGUMENT;
    if (req[i].size > UINT64_MAX - alignment) status = ONNXC_ERR_SHAPE_MISMATCH;
    order[n_order++] = (sort_key){req[i].size, req[i].first_step, i};
  }
  qsort(order, n_order, sizeof *order, by_size_desc);

  size_t n_placed = 0;
  uint64_t total = 0;
  for (size_t k = 0; k < n_order && status == ONNXC_OK; k++) {
    const onnxc_buffer_request *r = &req[order[k].index];
    uint64_t size = (r->size + alignment - 1) & ~(alignment - 1);
    uint64_t offset = best_fit(list, n_placed, size, r->first_step, r->last_step);
    if (offset > UINT64_MAX - size) {
      status = ONNXC_ERR_SHAPE_MISMATCH;
      break;
    }
    offsets[order[k].index] = offset;
    if (offset + size > total) total = offset + size;
    size_t at = n_placed++; /* keep the list sorted by offset: insertion */
    while (at > 0 && list[at - 1].offset > offset) {
      list[at] = list[at - 1];
      at--;
    }
    list[at] = (placed){offset, size, r->first_step, r->last_step};
  }
  free(order);
  free(list);
  if (status == ONNXC_OK) *arena_size = total;
  return status;
}
