/* Offsets for buffers in one arena, given each buffer's size and the span of steps it is live in.
 * Knows nothing of graphs or tensors. Model: ggml-alloc, hannk's allocation_planner, TFLite's
 * greedy-by-size planner. */
#ifndef ONNXC_RUNTIME_MEMORY_PLAN_H
#define ONNXC_RUNTIME_MEMORY_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "onnxc/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct onnxc_buffer_request {
  uint64_t size;      /* bytes; 0 needs no memory (offset 0) */
  int32_t first_step; /* first step the buffer is live in; < 0: never live, needs no memory */
  int32_t last_step;  /* last step it is live in, inclusive (>= first_step) */
} onnxc_buffer_request;

/* Assigns offsets[i] to every buffer so that two buffers live in a common step never overlap; every
 * offset is a multiple of `alignment` (a power of two) and every buffer occupies its size rounded up to
 * it. Greedy best-fit: the largest buffer is placed first, each into the smallest gap between buffers it
 * overlaps in time that fits, else above them. *arena_size is the bytes the arena needs.
 * Returns ONNXC_OK, ONNXC_ERR_INVALID_ARGUMENT (bad alignment or a last_step before first_step),
 * ONNXC_ERR_SHAPE_MISMATCH (sizes overflow uint64) or ONNXC_ERR_OUT_OF_MEMORY (scratch space). Sets no
 * error message: the caller knows what the buffers are. */
onnxc_status onnxc_plan_memory(const onnxc_buffer_request *requests, size_t n, uint64_t alignment,
                               uint64_t *offsets, uint64_t *arena_size);

#ifdef __cplusplus
}
#endif

#endif
