/* StringConcat (opset 20): Y = A + B element by element, with numpy broadcasting. The output's shape is
 * known before the run (the broadcast of the inputs'); the op checks it and writes the joined strings
 * into its step's string block. Equal on strings (opset 19) pairs the elements the same way and writes
 * one bool each: the two strings have the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_op.h"

enum { DT_STRING = 8, DT_BOOL = 9 };

static bool check_pairs(const onnxc_model_desc *d, const int32_t *t, int32_t y_dtype, char *why, size_t cap) {
  const onnxc_tensor_desc *a = &d->tensors[t[0]], *b = &d->tensors[t[1]], *y = &d->tensors[t[2]];
  if (a->dtype != DT_STRING || b->dtype != DT_STRING || y->dtype != y_dtype) {
    snprintf(why, cap, y_dtype == DT_STRING ? "A, B and Y must be strings" : "A and B must be strings, Y bool");
    return false;
  }
  if (y->rank < a->rank || y->rank < b->rank) {
    snprintf(why, cap, "Y has rank %d, less than its inputs' (%d, %d)", y->rank, a->rank, b->rank);
    return false;
  }
  return true;
}

static bool check_concat(const onnxc_model_desc *d, const int32_t *t, char *why, size_t cap) {
  return check_pairs(d, t, DT_STRING, why, cap);
}

static bool check_equal(const onnxc_model_desc *d, const int32_t *t, char *why, size_t cap) {
  return check_pairs(d, t, DT_BOOL, why, cap);
}

/* The row-major index into x (right-aligned against y's dims, broadcast where x's dim is 1) of y's
 * element whose coordinates are coord[y_rank]. */
static uint64_t source_index(const onnxc_host_tensor *x, const int64_t *coord, int32_t y_rank) {
  uint64_t at = 0;
  for (int32_t a = 0; a < x->rank; a++) {
    int64_t extent = x->dims[a], c = coord[y_rank - x->rank + a];
    at = at * (uint64_t)extent + (uint64_t)(extent == 1 ? 0 : c);
  }
  return at;
}

/* Y's dims must be the broadcast of A's and B's: each pair of right-aligned dims equal or one of them 1. */
static onnxc_status check_broadcast(const onnxc_host_call *c) {
  const onnxc_host_tensor *a = &c->t[0], *b = &c->t[1], *y = &c->t[2];
  int64_t want[ONNXC_MAX_RANK];
  for (int32_t i = 0; i < y->rank; i++) {
    int32_t ia = i - (y->rank - a->rank), ib = i - (y->rank - b->rank);
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (%s): '%s' dim %d is %lld and '%s' dim %d is %lld; they do not broadcast",
                        c->step, c->op->name, onnxc_host_arg_name(c, 0), ia, (long long)da, onnxc_host_arg_name(c, 1), ib, (long long)db);
    }
    want[i] = da == 1 ? db : da;
  }
  return onnxc_host_check_dims(c, 2, want, y->rank);
}

/* The two strings joined into Y's element i: a's and b's elements under broadcasting. */
typedef struct pair { const char *a, *b; } pair;

static pair operands(const onnxc_host_call *c, const int64_t *coord) {
  const onnxc_host_tensor *y = &c->t[2];
  return (pair){onnxc_host_string(&c->t[0], source_index(&c->t[0], coord, y->rank)),
                onnxc_host_string(&c->t[1], source_index(&c->t[1], coord, y->rank))};
}

/* Steps coord through y's dims in row-major order. */
static void advance(int64_t *coord, const onnxc_host_tensor *y) {
  for (int32_t d = y->rank - 1; d >= 0 && ++coord[d] == y->dims[d]; d--) coord[d] = 0;
}

static onnxc_status run_concat(onnxc_host_call *c) {
  const onnxc_host_tensor *y = &c->t[2];
  onnxc_status st = check_broadcast(c);
  if (st != ONNXC_OK) return st;
  uint64_t n = y->numel;
  size_t total = 1;
  int64_t coord[ONNXC_MAX_RANK] = {0};
  for (uint64_t i = 0; i < n; i++, advance(coord, y)) {
    pair p = operands(c, coord);
    total += strlen(p.a) + strlen(p.b);
  }
  const char **src = malloc(((size_t)n + 1) * sizeof *src);
  size_t *len = malloc(((size_t)n + 1) * sizeof *len);
  char *text = malloc(total), *at = text;
  if (!src || !len || !text) st = onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "step %u (StringConcat): out of memory", c->step);
  memset(coord, 0, sizeof coord);
  for (uint64_t i = 0; st == ONNXC_OK && i < n; i++, advance(coord, y)) {
    pair p = operands(c, coord);
    size_t la = strlen(p.a), lb = strlen(p.b);
    memcpy(at, p.a, la);
    memcpy(at + la, p.b, lb);
    src[i] = at;
    len[i] = la + lb;
    at += la + lb;
  }
  if (st == ONNXC_OK) st = onnxc_host_store_strings(c, src, len, n, y->data);
  free((void *)src), free(len), free(text);
  return st;
}

static onnxc_status run_equal(onnxc_host_call *c) {
  const onnxc_host_tensor *y = &c->t[2];
  onnxc_status st = check_broadcast(c);
  if (st != ONNXC_OK) return st;
  uint8_t *out = y->data;
  int64_t coord[ONNXC_MAX_RANK] = {0};
  for (uint64_t i = 0; i < y->numel; i++, advance(coord, y)) {
    pair p = operands(c, coord);
    out[i] = strcmp(p.a, p.b) == 0;
  }
  return ONNXC_OK;
}

const onnxc_host_op_info onnxc_host_string_concat = {.name = "StringConcat", .n_inputs = 2, .n_outputs = 1,
    .n_scalars = 0, .n_binds = 0, .check = check_concat, .run = run_concat, ONNXC_HOST_STRINGS_STATE};
const onnxc_host_op_info onnxc_host_string_equal = {.name = "Equal", .n_inputs = 2, .n_outputs = 1,
    .n_scalars = 0, .n_binds = 0, .check = check_equal, .run = run_equal};
