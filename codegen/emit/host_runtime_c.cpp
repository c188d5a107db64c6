// The part of the generated plan C that replaces two hooks of the library's own Halide runtime: the
// thread pool's par_for and the allocator kernels use for their scratch buffers.
//
// par_for: Halide's pool takes its mutex for every loop and again for every iteration it hands out,
// also when the library runs on one thread (1.9-3.4% of EfficientNet-B0's CPU time at 1 thread).
// When the last run asked for one thread, or a loop has a single iteration, the iterations run in a
// plain loop on the calling thread, in order, stopping at the first that fails (what the pool does
// with one thread). A loop of more iterations than threads is given to the pool as one task per
// thread, each taking iterations from an atomic counter (as dynamic as the pool's own hand-out, one
// lock per thread instead of per iteration); the first error stops the hand-out and is returned.
//
// malloc/free: kernels allocate their padded inputs and tiles on every call (a depthwise kernel once
// per channel). Freed blocks of 1 KiB and more (smaller ones are glibc's thread cache's) are kept in
// a few slots (at most kKeptBytes in all) and handed to the next request they fit without wasting
// more than half; the slots are taken and filled with atomic exchanges, so no lock is held and any
// thread may free what another allocated. Each block carries its size in a header of kHead bytes in
// front of what the kernel sees, which keeps Halide's alignment.
#include "codegen/emit/plan.h"

namespace onnxc::codegen {

const char* host_runtime_c() {
  return R"onnxc_c(
/* Thread pool and scratch memory hooks of this library's Halide runtime (codegen/emit/host_runtime_c.cpp). */
typedef int (*onnxc_task_fn)(void *, int, uint8_t *);
typedef int (*onnxc_par_for_fn)(void *, onnxc_task_fn, int, int, uint8_t *);
typedef void *(*onnxc_malloc_fn)(void *, size_t);
typedef void (*onnxc_free_fn)(void *, void *);
extern int halide_default_do_par_for(void *, onnxc_task_fn, int, int, uint8_t *);
extern onnxc_par_for_fn halide_set_custom_do_par_for(onnxc_par_for_fn);
extern void *halide_default_malloc(void *, size_t);
extern void halide_default_free(void *, void *);
extern onnxc_malloc_fn halide_set_custom_malloc(onnxc_malloc_fn);
extern onnxc_free_fn halide_set_custom_free(onnxc_free_fn);

static int onnxc_threads; /* the pool's size for the last run (halide_set_num_threads, 0 resolved) */

static int onnxc_set_num_threads(int n) {
  int old = halide_set_num_threads(n);
  int now = n ? n : halide_set_num_threads(n); /* Halide resolves 0 to its default; the second call reports it */
  __atomic_store_n(&onnxc_threads, now, __ATOMIC_RELAXED);
  return old;
}

/* A loop shared by the pool's workers: each takes the next iteration from `next`. */
struct onnxc_loop {
  onnxc_task_fn f;
  uint8_t *closure;
  int min, size, next, failed;
};

static int onnxc_loop_worker(void *uc, int worker, uint8_t *arg) {
  struct onnxc_loop *l = (struct onnxc_loop *)arg;
  (void)worker;
  for (;;) {
    int i = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);
    if (i >= l->size || __atomic_load_n(&l->failed, __ATOMIC_RELAXED)) return 0;
    int r = l->f(uc, l->min + i, l->closure);
    if (r) {
      __atomic_store_n(&l->failed, 1, __ATOMIC_RELAXED);
      return r;
    }
  }
}

static int onnxc_do_par_for(void *uc, onnxc_task_fn f, int min, int size, uint8_t *closure) {
  int threads = __atomic_load_n(&onnxc_threads, __ATOMIC_RELAXED);
  if (size > 1 && threads != 1) {
    if (threads < 1 || size <= threads) return halide_default_do_par_for(uc, f, min, size, closure);
    struct onnxc_loop l = {f, closure, min, size, 0, 0};
    return halide_default_do_par_for(uc, onnxc_loop_worker, 0, threads, (uint8_t *)&l);
  }
  for (int i = 0; i < size; i++) {
    int r = f(uc, min + i, closure);
    if (r) return r;
  }
  return 0;
}

enum { kSlots = 16, kHead = 128, kMinKept = 1024 };
static const size_t kKeptBytes = (size_t)256 << 20;
static void *onnxc_slot[kSlots];     /* a kept block (its header), or NULL */
static size_t onnxc_slot_size[kSlots]; /* a hint of its size, checked against the header */
static size_t onnxc_kept;             /* bytes in the slots */

static size_t onnxc_block_size(void *b) { return *(size_t *)b; }

static void onnxc_release(void *uc, void *b) {
  size_t n = onnxc_block_size(b);
  if (n >= kMinKept && n <= kKeptBytes) {
    for (int i = 0; i < kSlots; i++) {
      void *empty = NULL;
      if (__atomic_load_n(&onnxc_slot[i], __ATOMIC_RELAXED)) continue;
      if (__atomic_add_fetch(&onnxc_kept, n, __ATOMIC_RELAXED) > kKeptBytes) {
        __atomic_sub_fetch(&onnxc_kept, n, __ATOMIC_RELAXED);
        break;
      }
      if (__atomic_compare_exchange_n(&onnxc_slot[i], &empty, b, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
        __atomic_store_n(&onnxc_slot_size[i], n, __ATOMIC_RELAXED);
        return;
      }
      __atomic_sub_fetch(&onnxc_kept, n, __ATOMIC_RELAXED);
    }
  }
  halide_default_free(uc, b);
}

static void *onnxc_malloc(void *uc, size_t n) {
  if (n >= kMinKept) {
    for (int i = 0; i < kSlots; i++) {
      size_t hint = __atomic_load_n(&onnxc_slot_size[i], __ATOMIC_RELAXED);
      if (hint < n || hint / 2 > n || !__atomic_load_n(&onnxc_slot[i], __ATOMIC_RELAXED)) continue;
      void *b = __atomic_exchange_n(&onnxc_slot[i], NULL, __ATOMIC_ACQUIRE);
      if (!b) continue;
      size_t have = onnxc_block_size(b);
      __atomic_sub_fetch(&onnxc_kept, have, __ATOMIC_RELAXED);
      if (have >= n && have / 2 <= n) return (char *)b + kHead;
      onnxc_release(uc, b); /* another block took the slot since the hint was read */
    }
  }
  char *b = (char *)halide_default_malloc(uc, n + kHead);
  if (!b) return NULL;
  *(size_t *)b = n;
  return b + kHead;
}

static void onnxc_free(void *uc, void *p) {
  if (p) onnxc_release(uc, (char *)p - kHead);
}

__attribute__((constructor)) static void onnxc_install_hooks(void) {
  halide_set_custom_do_par_for(onnxc_do_par_for);
  halide_set_custom_malloc(onnxc_malloc);
  halide_set_custom_free(onnxc_free);
}

__attribute__((destructor)) static void onnxc_drop_kept_blocks(void) {
  for (int i = 0; i < kSlots; i++) {
    void *b = __atomic_exchange_n(&onnxc_slot[i], NULL, __ATOMIC_ACQUIRE);
    if (b) halide_default_free(NULL, b);
  }
}
)onnxc_c";
}

}  // namespace onnxc::codegen
