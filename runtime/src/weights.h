/* Where a loaded library's weights are read from while it runs. A library's weights blob lies in its
 * file's read-only pages, which the kernels read through the page cache; a private anonymous copy
 * (huge pages where the kernel gives them) ran the 0.43 B decoder's float32 prefill 9-15% faster in
 * CPU time and its decode steps ~23% faster (2026-11-27, AMD EPYC Zen 5, loaded machine; with or
 * without huge pages). The file's pages are unmapped from the process as they are copied, so the
 * copy costs no second resident blob. A copy makes resident what a run never reads, though: the rows
 * of an embedding table no token gathers (+125 MiB on that decoder). So a version 8 library says which
 * prefix of its blob to copy (weights_copy_size): the weights that are only ever gathered from lie
 * after it and stay in the file's pages, where only the pages of gathered rows become resident. A
 * version 7 library's blob is copied whole. Large copy prefixes of opened libraries are copied; a
 * program's static descriptor (onnxc_model_from_desc) and CUDA models keep their blobs in place.
 *   ONNXC_WEIGHTS=mapped  never copy (processes sharing one library then share its pages)
 *   ONNXC_WEIGHTS=copy    copy whatever the size (tests) */
#ifndef ONNXC_RUNTIME_WEIGHTS_H
#define ONNXC_RUNTIME_WEIGHTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onnxc/model_abi.h"

/* Copy prefixes from this size on are copied by default. */
#define ONNXC_WEIGHTS_COPY_MIN_BYTES ((uint64_t)16 << 20)

typedef struct onnxc_weights {
  const uint8_t *bytes; /* the blob in the library: desc->weights */
  const uint8_t *copy;  /* the copy of its bytes [0, copied), NULL when all in place */
  uint64_t copied;
  void *map;            /* the copy's mapping, NULL when in place */
  size_t map_bytes;
} onnxc_weights;

/* Where the kernels read the weight at `offset` of the blob (a weight lies wholly in the copy or
 * wholly after it: model_validate.c checks). */
static inline const uint8_t *onnxc_weights_at(const onnxc_weights *w, uint64_t offset) {
  return offset < w->copied ? w->copy + offset : w->bytes + offset;
}

/* The prefix of desc's blob a runtime may copy (all of it for a version 7 library). */
uint64_t onnxc_weights_copy_size(const onnxc_model_desc *desc);

/* Chooses and fills w for desc's blob; `from_library`: the blob lies in an opened library's read-only
 * pages (only those are unmapped after copying). Falls back to the blob in place when memory for a
 * copy is refused. */
void onnxc_weights_place(const onnxc_model_desc *desc, bool from_library, onnxc_weights *w);
void onnxc_weights_release(onnxc_weights *w);

#endif
