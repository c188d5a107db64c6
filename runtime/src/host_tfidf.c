/* TfIdfVectorizer over integer tokens as a host op: n-gram counting is a hash-free scan of each row
 * against the pool, which no Halide kernel over the pool's size expresses well (a real vocabulary has
 * thousands of n-grams). The output's shape is known before the run; the op binds nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_op.h"

/* Arguments: X (int32/int64 [C] or [B, C]), pool (int64 [P]), ngram_counts (int64 [L]), ngram_indexes
 * (int64 [G]), weights (float32 [W] or [0], per output column), Y (float32 [W] or [B, W]); scalars min_gram_length,
 * max_gram_length, max_skip_count, mode (0 TF, 1 IDF, 2 TFIDF). */
enum { T_X, T_POOL, T_COUNTS, T_INDEXES, T_WEIGHTS, T_Y };
enum { MODE_TF = 0, MODE_IDF = 1, MODE_TFIDF = 2 };

static bool check_tfidf(const onnxc_model_desc *d, const int32_t *t, char *why, size_t cap) {
  const onnxc_tensor_desc *x = &d->tensors[t[T_X]], *y = &d->tensors[t[T_Y]];
  if ((x->dtype != 6 && x->dtype != 7) || x->rank < 1 || x->rank > 2) {
    snprintf(why, cap, "X must be int32 or int64 of rank 1 or 2");
    return false;
  }
  for (int i = T_POOL; i <= T_INDEXES; i++) {
    if (d->tensors[t[i]].dtype != 7 || d->tensors[t[i]].rank != 1) {
      snprintf(why, cap, "the pool, ngram_counts and ngram_indexes must be int64 of rank 1");
      return false;
    }
  }
  if (d->tensors[t[T_WEIGHTS]].dtype != 1 || y->dtype != 1 || y->rank != x->rank) {
    snprintf(why, cap, "weights and Y must be float32, Y of X's rank");
    return false;
  }
  return true;
}

static int64_t token(const onnxc_host_tensor *x, uint64_t i) {
  if (x->dtype == 6) return ((const int32_t *)x->data)[i];
  return ((const int64_t *)x->data)[i];
}

/* The pool index of the n-gram whose tokens start at `row[start]`, `gap` apart, among the n-grams of
 * length n (pool elements [first, first + count * n)); -1 when it is not in the pool. */
static int64_t find_ngram(const onnxc_host_tensor *x, uint64_t row, uint64_t start, uint64_t gap, int64_t n,
                          const int64_t *pool, int64_t first, int64_t count) {
  for (int64_t g = 0; g < count; g++) {
    const int64_t *p = pool + first + g * n;
    int64_t j = 0;
    while (j < n && p[j] == token(x, row + start + (uint64_t)j * gap)) j++;
    if (j == n) return g;
  }
  return -1;
}

/* Adds one row's n-gram counts into counts[width], at each pool n-gram's output column (n-grams that
 * share a column add up). Unigrams are counted once per position; longer n-grams once per position and
 * per skip, as ONNX defines the skip-gram counts. */
static void count_row(const onnxc_host_call *c, uint64_t row, uint64_t len, double *counts) {
  const onnxc_host_tensor *x = &c->t[T_X];
  const int64_t *pool = c->t[T_POOL].data, *levels = c->t[T_COUNTS].data, *indexes = c->t[T_INDEXES].data;
  int64_t n_levels = (int64_t)c->t[T_COUNTS].numel, total = (int64_t)c->t[T_INDEXES].numel;
  int64_t lo = c->scalar[0] < 1 ? 1 : c->scalar[0], hi = c->scalar[1], max_skip = c->scalar[2];
  int64_t first_element = 0;
  for (int64_t n = 1; n <= n_levels && n <= hi; n++) {
    int64_t first = levels[n - 1], end = n < n_levels ? levels[n] : total;
    int64_t count = end - first;
    if (n >= lo && count > 0) {
      for (int64_t skip = 0; skip <= (n == 1 ? 0 : max_skip); skip++) {
        uint64_t gap = (uint64_t)skip + 1, span = (uint64_t)(n - 1) * gap;
        for (uint64_t s = 0; s + span < len; s++) {
          int64_t g = find_ngram(x, row, s, gap, n, pool, first_element, count);
          if (g >= 0) counts[indexes[first + g]] += 1;
        }
      }
    }
    first_element += count * n;
  }
}

static onnxc_status run_tfidf(onnxc_host_call *c) {
  const onnxc_host_tensor *x = &c->t[T_X], *y = &c->t[T_Y];
  const int64_t *levels = c->t[T_COUNTS].data, *indexes = c->t[T_INDEXES].data;
  int64_t total = (int64_t)c->t[T_INDEXES].numel, n_levels = (int64_t)c->t[T_COUNTS].numel;
  uint64_t pool_needed = 0;
  for (int64_t n = 1; n <= n_levels; n++) {
    int64_t first = levels[n - 1], end = n < n_levels ? levels[n] : total;
    if (first < 0 || end < first || end > total) {
      return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "step %u (TfIdfVectorizer): ngram_counts are not increasing offsets into %lld n-grams",
                        c->step, (long long)total);
    }
    pool_needed += (uint64_t)(end - first) * (uint64_t)n;
  }
  if (pool_needed > c->t[T_POOL].numel) {
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "step %u (TfIdfVectorizer): the pool has %llu tokens, ngram_counts need %llu",
                      c->step, (unsigned long long)c->t[T_POOL].numel, (unsigned long long)pool_needed);
  }
  uint64_t rows = x->rank == 2 ? (uint64_t)x->dims[0] : 1, len = (uint64_t)x->dims[x->rank - 1];
  uint64_t width = (uint64_t)y->dims[y->rank - 1];
  for (int64_t g = 0; g < total; g++) {
    if (indexes[g] < 0 || (uint64_t)indexes[g] >= width) {
      return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "step %u (TfIdfVectorizer): ngram_indexes[%lld] = %lld is outside the output's %llu columns",
                        c->step, (long long)g, (long long)indexes[g], (unsigned long long)width);
    }
  }
  /* Weights are per output column, as ONNX Runtime reads them. */
  bool weighted = c->t[T_WEIGHTS].numel > 0;
  if (weighted && c->t[T_WEIGHTS].numel != width) {
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "step %u (TfIdfVectorizer): %llu weights for %llu output columns", c->step,
                      (unsigned long long)c->t[T_WEIGHTS].numel, (unsigned long long)width);
  }
  double *counts = malloc(((size_t)width + 1) * sizeof *counts);
  if (!counts) return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "step %u (TfIdfVectorizer): out of memory", c->step);
  const float *weights = c->t[T_WEIGHTS].data;
  float *out = y->data;
  for (uint64_t r = 0; r < rows; r++) {
    memset(counts, 0, ((size_t)width + 1) * sizeof *counts);
    count_row(c, r * len, len, counts);
    for (uint64_t col = 0; col < width; col++) {
      double w = weighted ? weights[col] : 1.0, v = counts[col];
      if (c->scalar[3] == MODE_IDF) v = v > 0 ? w : 0;
      else if (c->scalar[3] == MODE_TFIDF) v *= w;
      out[r * width + col] = (float)v;
    }
  }
  free(counts);
  return ONNXC_OK;
}

const onnxc_host_op_info onnxc_host_tfidf = {.name = "TfIdfVectorizer", .n_inputs = 5, .n_outputs = 1, .n_scalars = 4,
    .n_binds = 0, .check = check_tfidf, .run = run_tfidf};
