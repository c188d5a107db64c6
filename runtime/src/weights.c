/* The weights blob's placement (weights.h). */
#if defined(__linux__)
#define _GNU_SOURCE /* MADV_HUGEPAGE */
#endif
#include "weights.h"

#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

typedef enum { PLACE_AUTO, PLACE_MAPPED, PLACE_COPY } placement;

static placement placement_from_env(void) {
  const char *v = getenv("ONNXC_WEIGHTS");
  if (v && strcmp(v, "mapped") == 0) return PLACE_MAPPED;
  if (v && strcmp(v, "copy") == 0) return PLACE_COPY;
  return PLACE_AUTO;
}

#if defined(__linux__)
/* Copies in chunks and hands each chunk's source pages back (the whole pages inside the blob: its
 * first and last page may hold other read-only data of the library, left mapped), so the process
 * never holds both. Dropped pages of a private read-only file mapping read the file again if touched,
 * so this changes no byte anyone reads. */
static void copy_dropping_source(uint8_t *dst, const uint8_t *src, size_t n) {
  const size_t chunk = (size_t)16 << 20;
  const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  for (size_t at = 0; at < n; at += chunk) {
    size_t len = n - at < chunk ? n - at : chunk;
    memcpy(dst + at, src + at, len);
    uintptr_t lo = ((uintptr_t)(src + at) + page - 1) & ~(page - 1), hi = ((uintptr_t)(src + at + len)) & ~(page - 1);
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
  }
}
#endif

uint64_t onnxc_weights_copy_size(const onnxc_model_desc *desc) {
  return desc->abi_version >= 8 ? desc->weights_copy_size : desc->weights_size;
}

void onnxc_weights_place(const onnxc_model_desc *desc, bool from_library, onnxc_weights *w) {
  memset(w, 0, sizeof *w);
  w->bytes = desc->weights;
#if defined(__linux__)
  placement p = placement_from_env();
  const uint64_t prefix = onnxc_weights_copy_size(desc);
  if (!desc->weights || prefix == 0 || !from_library || desc->uses_cuda || p == PLACE_MAPPED) return;
  if (p == PLACE_AUTO && prefix < ONNXC_WEIGHTS_COPY_MIN_BYTES) return;
  if (prefix > SIZE_MAX / 2) return;
  /* 2 MiB-aligned, so that the kernel can back it with huge pages (THP "madvise" or "always"). */
  const size_t huge = (size_t)2 << 20, n = (size_t)prefix;
  size_t bytes = (n + huge - 1) / huge * huge + huge;
  void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) return;
  uint8_t *at = (uint8_t *)(((uintptr_t)map + huge - 1) & ~(uintptr_t)(huge - 1));
  madvise(at, bytes - (size_t)(at - (uint8_t *)map), MADV_HUGEPAGE);
  copy_dropping_source(at, desc->weights, n);
  mprotect(map, bytes, PROT_READ); /* as read-only as the library's pages were */
  w->copy = at;
  w->copied = n;
  w->map = map;
  w->map_bytes = bytes;
#else
  (void)from_library;
  (void)placement_from_env;
#endif
}

void onnxc_weights_release(onnxc_weights *w) {
#if defined(__linux__)
  if (w->map) munmap(w->map, w->map_bytes);
#endif
  memset(w, 0, sizeof *w);
}
