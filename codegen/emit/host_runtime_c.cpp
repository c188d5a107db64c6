// The part of the generated plan C that replaces two hooks of the library's own Halide runtime: the
// thread pool's par_for and the allocator kernels use for their scratch buffers.
//
// par_for: Halide's pool takes its mutex for every loop and again for every iteration it hands out,
// also when the library runs on one thread (1.9-3.4% of EfficientNet-B0's CPU time at 1 thread), and
// wakes its sleeping workers for every loop (a futex wake and sleep per kernel: a decode step of a
// language model runs ~200 small parallel loops). When the last run asked for one thread, or a loop
// has a single iteration, the iterations run in a plain loop on the calling thread, in order, stopping
// at the first that fails. Otherwise the library's own pool runs the loop: threads - 1 workers of its
// own and the caller take iterations from an atomic counter; the first error stops the hand-out and is
// returned once every worker has left the loop. Between loops a worker spins on the pool's generation
// counter, then sleeps on a condition variable, so a run's next kernel finds it awake and an idle
// library costs nothing. The spin lasts at most ONNXC_SPIN_US microseconds and adapts: it halves
// after a gap between loops longer than that (the caller descheduled on a busy machine, or the run
// over) and doubles after a shorter one. The default is 50 us: on a quiet 2-core machine BERT and
// GPT-2 at 2 threads ran 2-3% faster than with no spin (level with Halide's pool), while on the same
// machine at load 11-15 a 0.43 B decoder's 2-thread decode step took 25-30% more CPU time spinning
// 50-100 us and no less wall time (session 13): ONNXC_SPIN_US=0 sleeps at once. A second thread
// calling while the pool is busy (another session of the library, or a parallel loop nested in a
// task) gets Halide's pool, as before; ONNXC_HALIDE_POOL=1 sends every loop there (for comparison,
// and as a way back should the own pool misbehave somewhere). The workers are stopped and joined when the library is
// unloaded or the process ends; a forked child starts its own.
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
#include <pthread.h>
#include <stdlib.h>
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
extern int64_t halide_current_time_ns(void *);

static int onnxc_threads; /* the pool's size for the last run (halide_set_num_threads, 0 resolved) */

static int onnxc_set_num_threads(int n) {
  int old = halide_set_num_threads(n);
  int now = n ? n : halide_set_num_threads(n); /* Halide resolves 0 to its default; the second call reports it */
  __atomic_store_n(&onnxc_threads, now, __ATOMIC_RELAXED);
  return old;
}

/* The pool: threads - 1 workers of this library's own, started on the first loop that needs
   them. A loop is published as a new generation in `state` (generation << 32 | seats); a worker takes
   a seat with a compare-exchange, so at most threads - 1 of them join one loop and none joins a loop
   after its caller closed it. Workers spin on `state` for up to onnxc_spin_ns after their last loop
   before sleeping on `wake`; the caller also takes iterations and, after closing the loop, waits (spinning,
   then on `idle`) until every worker that joined has left. */
enum { kMaxWorkers = 255 };
struct onnxc_job {
  onnxc_task_fn f;
  void *uc;
  uint8_t *closure;
  int min, size, next, error;
};
static struct {
  pthread_mutex_t lock;
  pthread_cond_t wake, idle;
  uint64_t state;    /* generation << 32 | seats left */
  int active;        /* workers inside a loop (or about to check for one) */
  int sleepers;      /* workers waiting on `wake` */
  int waiting;       /* the caller waits on `idle` */
  int busy;          /* a caller owns the pool (others and nested loops go to Halide's) */
  int quit;
  int workers;
  pthread_t thread[kMaxWorkers];
  struct onnxc_job job;
} onnxc_pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, 0, 0, 0, {0}, {0, 0, 0, 0, 0, 0, 0}};
static int64_t onnxc_spin_ns; /* ONNXC_SPIN_US (default 50), read when the library is loaded */

static inline void onnxc_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Runs iterations of the job until none is left or one failed. */
static void onnxc_job_run(struct onnxc_job *j) {
  for (;;) {
    int i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
    if (i >= j->size || __atomic_load_n(&j->error, __ATOMIC_RELAXED)) return;
    int r = j->f(j->uc, j->min + i, j->closure);
    if (r) {
      int none = 0;
      __atomic_compare_exchange_n(&j->error, &none, r, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
      return;
    }
  }
}

static void onnxc_worker_leave(void) {
  if (__atomic_sub_fetch(&onnxc_pool.active, 1, __ATOMIC_SEQ_CST) == 0 &&
      __atomic_load_n(&onnxc_pool.waiting, __ATOMIC_SEQ_CST)) {
    pthread_mutex_lock(&onnxc_pool.lock);
    pthread_cond_signal(&onnxc_pool.idle);
    pthread_mutex_unlock(&onnxc_pool.lock);
  }
}

/* Whether `elapsed` nanoseconds since `start` have passed (Halide's clock is the real-time one: a
   clock set back also counts as passed). */
static int onnxc_passed(int64_t start, int64_t elapsed) {
  int64_t d = halide_current_time_ns(NULL) - start;
  return d < 0 || d >= elapsed;
}

static void *onnxc_worker_main(void *arg) {
  uint32_t seen = (uint32_t)(uintptr_t)arg; /* the generation current when this worker started */
  /* This worker's spin, adapted to the gaps between loops: after a gap longer than onnxc_spin_ns
     (spinning through it would have been in vain) it halves; after a shorter one it doubles, up to
     onnxc_spin_ns. On a busy machine, where the caller is often descheduled between kernels, the
     workers so stop spinning. */
  int64_t budget = onnxc_spin_ns;
  for (;;) {
    /* Wait for a generation other than `seen`: spin a while, then sleep. */
    int64_t start = halide_current_time_ns(NULL);
    for (int n = 1;; n++) {
      if ((uint32_t)(__atomic_load_n(&onnxc_pool.state, __ATOMIC_ACQUIRE) >> 32) != seen) {
        budget = budget * 2 + 1000 < onnxc_spin_ns ? budget * 2 + 1000 : onnxc_spin_ns;
        break;
      }
      if (__atomic_load_n(&onnxc_pool.quit, __ATOMIC_ACQUIRE)) return NULL;
      onnxc_cpu_relax();
      if ((n & 63) == 0 && onnxc_passed(start, budget)) {
        pthread_mutex_lock(&onnxc_pool.lock);
        __atomic_add_fetch(&onnxc_pool.sleepers, 1, __ATOMIC_SEQ_CST);
        while ((uint32_t)(__atomic_load_n(&onnxc_pool.state, __ATOMIC_SEQ_CST) >> 32) == seen &&
               !__atomic_load_n(&onnxc_pool.quit, __ATOMIC_SEQ_CST))
          pthread_cond_wait(&onnxc_pool.wake, &onnxc_pool.lock);
        __atomic_sub_fetch(&onnxc_pool.sleepers, 1, __ATOMIC_SEQ_CST);
        pthread_mutex_unlock(&onnxc_pool.lock);
        if (onnxc_passed(start, onnxc_spin_ns)) budget /= 2;
        else budget = budget * 2 + 1000 < onnxc_spin_ns ? budget * 2 + 1000 : onnxc_spin_ns;
        break;
      }
    }
    if (__atomic_load_n(&onnxc_pool.quit, __ATOMIC_ACQUIRE)) return NULL;
    /* Take a seat of the newest loop, if one is left; `active` first, so a caller that closes the
       loop after the seat was taken sees this worker. */
    __atomic_add_fetch(&onnxc_pool.active, 1, __ATOMIC_SEQ_CST);
    uint64_t s = __atomic_load_n(&onnxc_pool.state, __ATOMIC_SEQ_CST);
    seen = (uint32_t)(s >> 32);
    while ((uint32_t)s != 0) {
      if (__atomic_compare_exchange_n(&onnxc_pool.state, &s, s - 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
        onnxc_job_run(&onnxc_pool.job);
        break;
      }
      seen = (uint32_t)(s >> 32); /* s was reloaded: another worker took a seat, or a newer loop began */
    }
    onnxc_worker_leave();
  }
}

/* Starts workers until there are `n` (fewer if threads cannot be created: the loops then run on the
   workers there are). Called by the caller that owns the pool. */
static void onnxc_pool_grow(int n) {
  if (n > kMaxWorkers) n = kMaxWorkers;
  while (onnxc_pool.workers < n) {
    uintptr_t gen = (uintptr_t)(__atomic_load_n(&onnxc_pool.state, __ATOMIC_RELAXED) >> 32);
    if (pthread_create(&onnxc_pool.thread[onnxc_pool.workers], NULL, onnxc_worker_main, (void *)gen)) break;
    onnxc_pool.workers++;
  }
}

static int onnxc_pool_run(void *uc, onnxc_task_fn f, int min, int size, uint8_t *closure, int threads) {
  onnxc_pool_grow(threads - 1);
  int seats = threads - 1 < onnxc_pool.workers ? threads - 1 : onnxc_pool.workers;
  if (seats > size - 1) seats = size - 1;
  struct onnxc_job *j = &onnxc_pool.job;
  j->f = f, j->uc = uc, j->closure = closure, j->min = min, j->size = size, j->next = 0, j->error = 0;
  uint64_t gen = (__atomic_load_n(&onnxc_pool.state, __ATOMIC_RELAXED) >> 32) + 1;
  __atomic_store_n(&onnxc_pool.state, (gen << 32) | (uint32_t)seats, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&onnxc_pool.sleepers, __ATOMIC_SEQ_CST)) {
    pthread_mutex_lock(&onnxc_pool.lock);
    pthread_cond_broadcast(&onnxc_pool.wake);
    pthread_mutex_unlock(&onnxc_pool.lock);
  }
  onnxc_job_run(j);
  /* Close the loop (no seat left), then wait for the workers inside it. */
  __atomic_store_n(&onnxc_pool.state, gen << 32, __ATOMIC_SEQ_CST);
  int64_t start = halide_current_time_ns(NULL);
  for (int n = 1; __atomic_load_n(&onnxc_pool.active, __ATOMIC_SEQ_CST); n++) {
    onnxc_cpu_relax();
    if ((n & 63) == 0 && onnxc_passed(start, onnxc_spin_ns)) {
      pthread_mutex_lock(&onnxc_pool.lock);
      __atomic_store_n(&onnxc_pool.waiting, 1, __ATOMIC_SEQ_CST);
      while (__atomic_load_n(&onnxc_pool.active, __ATOMIC_SEQ_CST)) pthread_cond_wait(&onnxc_pool.idle, &onnxc_pool.lock);
      __atomic_store_n(&onnxc_pool.waiting, 0, __ATOMIC_SEQ_CST);
      pthread_mutex_unlock(&onnxc_pool.lock);
      break;
    }
  }
  return j->error;
}

/* ONNXC_HALIDE_POOL=1: every loop goes to Halide's pool as one task per thread, each taking
   iterations from the job's counter (what this library did before its own pool: for comparison). */
static int onnxc_halide_pool;

static int onnxc_halide_task(void *uc, int worker, uint8_t *arg) {
  (void)worker;
  struct onnxc_job *j = (struct onnxc_job *)arg;
  onnxc_job_run(j);
  return __atomic_load_n(&j->error, __ATOMIC_RELAXED);
}

static int onnxc_do_par_for(void *uc, onnxc_task_fn f, int min, int size, uint8_t *closure) {
  int threads = __atomic_load_n(&onnxc_threads, __ATOMIC_RELAXED);
  if (size > 1 && threads != 1) {
    int free_pool = 0;
    if (onnxc_halide_pool && threads > 1 && size > threads) {
      struct onnxc_job j = {f, uc, closure, min, size, 0, 0};
      int r = halide_default_do_par_for(uc, onnxc_halide_task, 0, threads, (uint8_t *)&j);
      return r ? r : j.error;
    }
    if (threads < 1 || onnxc_halide_pool ||
        !__atomic_compare_exchange_n(&onnxc_pool.busy, &free_pool, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      return halide_default_do_par_for(uc, f, min, size, closure); /* another caller, or a nested loop */
    int r = onnxc_pool_run(uc, f, min, size, closure, threads);
    __atomic_store_n(&onnxc_pool.busy, 0, __ATOMIC_RELEASE);
    return r;
  }
  for (int i = 0; i < size; i++) {
    int r = f(uc, min + i, closure);
    if (r) return r;
  }
  return 0;
}

/* After fork() the child has none of the workers: it starts its own. */
static void onnxc_pool_forget(void) {
  onnxc_pool.workers = 0;
  onnxc_pool.active = onnxc_pool.sleepers = onnxc_pool.waiting = onnxc_pool.busy = 0;
  pthread_mutex_init(&onnxc_pool.lock, NULL);
  pthread_cond_init(&onnxc_pool.wake, NULL);
  pthread_cond_init(&onnxc_pool.idle, NULL);
}

/* Stops the workers (the library is unloaded or the process ends). */
static void onnxc_pool_stop(void) {
  pthread_mutex_lock(&onnxc_pool.lock);
  __atomic_store_n(&onnxc_pool.quit, 1, __ATOMIC_SEQ_CST);
  pthread_cond_broadcast(&onnxc_pool.wake);
  pthread_mutex_unlock(&onnxc_pool.lock);
  for (int i = 0; i < onnxc_pool.workers; i++) pthread_join(onnxc_pool.thread[i], NULL);
  onnxc_pool.workers = 0;
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
  const char *e = getenv("ONNXC_SPIN_US");
  long us = e && *e ? strtol(e, NULL, 10) : 50;
  onnxc_spin_ns = (int64_t)(us < 0 ? 0 : us > 1000000 ? 1000000 : us) * 1000;
  e = getenv("ONNXC_HALIDE_POOL");
  onnxc_halide_pool = e && e[0] == '1';
  halide_set_custom_do_par_for(onnxc_do_par_for);
  halide_set_custom_malloc(onnxc_malloc);
  halide_set_custom_free(onnxc_free);
  pthread_atfork(NULL, NULL, onnxc_pool_forget);
}

__attribute__((destructor)) static void onnxc_drop_kept_blocks(void) {
  onnxc_pool_stop();
  for (int i = 0; i < kSlots; i++) {
    void *b = __atomic_exchange_n(&onnxc_slot[i], NULL, __ATOMIC_ACQUIRE);
    if (b) halide_default_free(NULL, b);
  }
}
)onnxc_c";
}

}  // namespace onnxc::codegen
