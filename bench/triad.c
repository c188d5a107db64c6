/* Memory bandwidth by the STREAM triad a[i] = b[i] + s * c[i] over arrays far larger than the caches,
 * on T threads (each its own slice, first-touched by the thread that streams it). Prints GB/s as
 * STREAM counts it: 3 arrays x 4 bytes per element per pass (two reads, one write; the write-allocate
 * read a CPU may add is not counted), the median of the passes. This is the roofline a memory-bound
 * kernel such as an int4 GEMV (bench/nbits_bench.py) is measured against.
 *
 *   triad [THREADS] [MIB_PER_ARRAY] [PASSES]      (defaults: all cores, 256, 15)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  float *a, *b, *c;
  size_t n;
  pthread_barrier_t *start, *done;
  int passes;
} slice;

static void *stream(void *arg) {
  slice *s = arg;
  for (size_t i = 0; i < s->n; i++) s->a[i] = 0.0f, s->b[i] = 1.0f, s->c[i] = 2.0f;
  for (int p = 0; p < s->passes; p++) {
    pthread_barrier_wait(s->start);
    for (size_t i = 0; i < s->n; i++) s->a[i] = s->b[i] + 3.0f * s->c[i];
    pthread_barrier_wait(s->done);
  }
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
  size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 256;
  int passes = argc > 3 ? atoi(argv[3]) : 15;
  if (threads < 1 || mib < 1 || passes < 1) {
    fprintf(stderr, "usage: triad [THREADS] [MIB_PER_ARRAY] [PASSES]\n");
    return 2;
  }
  size_t n = mib * (1 << 20) / sizeof(float), per = n / (size_t)threads;
  float *a = aligned_alloc(64, n * sizeof(float)), *b = aligned_alloc(64, n * sizeof(float)),
        *c = aligned_alloc(64, n * sizeof(float));
  if (!a || !b || !c) {
    fprintf(stderr, "triad: cannot allocate 3 x %zu MiB\n", mib);
    return 2;
  }
  pthread_barrier_t start, done;
  pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
  pthread_barrier_init(&done, NULL, (unsigned)threads + 1);
  pthread_t *tid = calloc((size_t)threads, sizeof *tid);
  slice *sl = calloc((size_t)threads, sizeof *sl);
  for (int t = 0; t < threads; t++) {
    size_t off = (size_t)t * per;
    sl[t] = (slice){a + off, b + off, c + off, t == threads - 1 ? n - off : per, &start, &done, passes};
    pthread_create(&tid[t], NULL, stream, &sl[t]);
  }
  double *gbs = calloc((size_t)passes, sizeof *gbs);
  for (int p = 0; p < passes; p++) {
    double t0 = now(); /* before the start: a late timer would miss the threads' first steps */
    pthread_barrier_wait(&start);
    pthread_barrier_wait(&done);
    gbs[p] = 3.0 * (double)n * sizeof(float) / (now() - t0) / 1e9;
  }
  for (int t = 0; t < threads; t++) pthread_join(tid[t], NULL);
  qsort(gbs, (size_t)passes, sizeof *gbs, by_value);
  printf("triad: %d threads, 3 x %zu MiB: median %.1f GB/s (best %.1f)\n", threads, mib, gbs[passes / 2],
         gbs[passes - 1]);
  return a[1] == 7.0f ? 0 : 1; /* 1 + 3 * 2: the passes ran */
}
