/* String tensors' host ops: StringNormalizer and Cast to and from strings, and the string block every op
 * writing strings keeps. A string element is a `const char *` (NUL-terminated bytes, passed through
 * unchanged: UTF-8 stays UTF-8). The strings a step writes live in one block in the step's own state: the
 * block is replaced when the step runs again and freed with the session, which is the lifetime
 * runtime.h promises for outputs. */
#include <math.h> /* isnan, isinf: macros, no libm */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_op.h"

enum { DT_FLOAT = 1, DT_INT32 = 6, DT_INT64 = 7, DT_STRING = 8, DT_DOUBLE = 11 };

/* ---- the strings a step writes ---- */

void onnxc_host_free_strings(void *state) {
  onnxc_host_strings *s = state;
  free(s->block);
  s->block = NULL;
}

onnxc_status onnxc_host_store_strings(onnxc_host_call *c, const char *const *src, const size_t *len, uint64_t n,
                                      const char **out) {
  onnxc_host_strings *state = c->state;
  size_t total = 0;
  for (uint64_t i = 0; i < n; i++) total += len[i] + 1;
  free(state->block); /* the old strings are dead: the step is rewriting its outputs */
  char *block = state->block = malloc(total ? total : 1);
  if (!block) return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "step %u: out of memory for %zu bytes of strings", c->step, total);
  for (uint64_t i = 0; i < n; i++) {
    memcpy(block, src[i], len[i]);
    block[len[i]] = '\0';
    out[i] = block;
    block += len[i] + 1;
  }
  return ONNXC_OK;
}

const char *onnxc_host_string(const onnxc_host_tensor *t, uint64_t i) {
  const char *s = ((const char *const *)t->data)[i];
  return s ? s : ""; /* a NULL element reads as the empty string */
}

/* ---- StringNormalizer: drop stopwords, then change case (ASCII letters; other bytes pass through) ---- */

enum { CASE_NONE = 0, CASE_LOWER = 1, CASE_UPPER = 2 };

static char fold(char ch) { return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch; }
static char upper(char ch) { return ch >= 'a' && ch <= 'z' ? (char)(ch - 'a' + 'A') : ch; }

static bool same_word(const char *a, const char *b, bool case_sensitive) {
  if (case_sensitive) return strcmp(a, b) == 0;
  for (; *a && *b; a++, b++) {
    if (fold(*a) != fold(*b)) return false;
  }
  return *a == *b;
}

/* Stopwords arrive as one uint8 tensor: the n words, each followed by a NUL byte (checked to fit). */
static bool is_stopword(const onnxc_host_tensor *words, int64_t n, const char *w, bool case_sensitive) {
  const char *p = words->data;
  for (int64_t i = 0; i < n; i++) {
    if (same_word(p, w, case_sensitive)) return true;
    p += strlen(p) + 1;
  }
  return false;
}

static bool check_normalizer(const onnxc_model_desc *d, const int32_t *t, char *why, size_t cap) {
  const onnxc_tensor_desc *x = &d->tensors[t[0]], *y = &d->tensors[t[2]];
  if (x->dtype != DT_STRING || y->dtype != DT_STRING || x->rank < 1 || x->rank > 2 || y->rank != x->rank) {
    snprintf(why, cap, "X and Y must be strings of rank 1 or 2 (the same)");
    return false;
  }
  if (d->tensors[t[1]].dtype != 2 || d->tensors[t[1]].rank != 1) {
    snprintf(why, cap, "stopwords must be a uint8 list of NUL-terminated words");
    return false;
  }
  return true;
}

static onnxc_status run_normalizer(onnxc_host_call *c) {
  const onnxc_host_tensor *x = &c->t[0], *words = &c->t[1];
  if (x->rank == 2 && x->dims[0] != 1) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (StringNormalizer): a 2-D input must be [1, C], it is [%lld, %lld]",
                      c->step, (long long)x->dims[0], (long long)x->dims[1]);
  }
  int64_t nuls = 0;
  for (uint64_t i = 0; i < words->numel; i++) nuls += ((const char *)words->data)[i] == '\0';
  if (c->scalar[2] < 0 || nuls < c->scalar[2] || (words->numel && ((const char *)words->data)[words->numel - 1] != '\0')) {
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "step %u (StringNormalizer): the stopword list does not hold %lld NUL-terminated words",
                      c->step, (long long)c->scalar[2]);
  }
  bool case_sensitive = c->scalar[1] != 0;
  const char **kept = malloc(((size_t)x->numel + 1) * sizeof *kept);
  size_t *len = malloc(((size_t)x->numel + 1) * sizeof *len);
  if (!kept || !len) {
    free(kept), free(len);
    return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "step %u (StringNormalizer): out of memory", c->step);
  }
  int64_t count = 0;
  for (uint64_t i = 0; i < x->numel; i++) {
    const char *w = onnxc_host_string(x, i);
    if (!is_stopword(words, c->scalar[2], w, case_sensitive)) kept[count] = w, len[count++] = strlen(w);
  }
  if (count == 0) kept[count] = "", len[count++] = 0; /* ONNX: everything removed gives one empty string */
  onnxc_status st = onnxc_host_bind(c, &count);
  int64_t want[2] = {1, count};
  if (st == ONNXC_OK) st = onnxc_host_check_dims(c, 2, x->rank == 2 ? want : want + 1, x->rank);
  const char **out = c->t[2].data;
  if (st == ONNXC_OK) st = onnxc_host_store_strings(c, kept, len, (uint64_t)count, out);
  for (int64_t i = 0; st == ONNXC_OK && c->scalar[0] != CASE_NONE && i < count; i++) {
    for (char *p = (char *)out[i]; *p; p++) *p = c->scalar[0] == CASE_LOWER ? fold(*p) : upper(*p);
  }
  free(kept);
  free(len);
  return st;
}

const onnxc_host_op_info onnxc_host_string_normalizer = {.name = "StringNormalizer", .n_inputs = 2, .n_outputs = 1,
    .n_scalars = 3, .n_binds = 1, .check = check_normalizer, .run = run_normalizer, ONNXC_HOST_STRINGS_STATE};

/* ---- Cast between strings and numbers ---- */

/* Shortest decimal that reads back as v (float32 when single), as numpy's str() prints it: positional
 * with at least one fractional digit for 1e-4 <= |v| < 1e16, else d.ddde±XX; NaN, INF and -INF as ONNX
 * spells them. */
static void format_float(double v, bool single, char *buf, size_t cap) {
  if (isnan(v)) {
    snprintf(buf, cap, "NaN");
    return;
  }
  if (isinf(v)) {
    snprintf(buf, cap, v < 0 ? "-INF" : "INF");
    return;
  }
  char sci[40];
  for (int p = 0; p < 17; p++) {
    snprintf(sci, sizeof sci, "%.*e", p, v);
    if (single ? strtof(sci, NULL) == (float)v : strtod(sci, NULL) == v) break;
  }
  /* sci is [-]d[.ddd]e±XX: split into sign, digits and exponent. */
  const char *m = sci;
  bool neg = *m == '-';
  if (neg) m++;
  char digits[24];
  size_t n = 0;
  for (; *m && *m != 'e'; m++)
    if (*m != '.') digits[n++] = *m;
  int exp10 = atoi(m + 1);
  size_t at = 0;
  if (neg) buf[at++] = '-';
  double mag = neg ? -v : v; /* not fabs: the runtime links no libm */
  if (mag != 0 && (mag < 1e-4 || mag >= 1e16)) {
    snprintf(buf + at, cap - at, "%c%s%.*se%c%02d", digits[0], n > 1 ? "." : "", (int)(n - 1), digits + 1,
             exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    return;
  }
  if (exp10 < 0) {
    at += (size_t)snprintf(buf + at, cap - at, "0.");
    for (int z = 0; z < -exp10 - 1; z++) buf[at++] = '0';
    snprintf(buf + at, cap - at, "%.*s", (int)n, digits);
    return;
  }
  for (size_t i = 0; i < n || (int)i <= exp10; i++) {
    buf[at++] = i < n ? digits[i] : '0';
    if ((int)i == exp10) buf[at++] = '.';
  }
  if (buf[at - 1] == '.') buf[at++] = '0';
  buf[at] = '\0';
}

static bool check_cast(const onnxc_model_desc *d, const int32_t *t, char *why, size_t cap) {
  int32_t from = d->tensors[t[0]].dtype, to = d->tensors[t[1]].dtype;
  bool number_from = from == DT_FLOAT || from == DT_DOUBLE || from == DT_INT32 || from == DT_INT64;
  bool number_to = to == DT_FLOAT || to == DT_DOUBLE || to == DT_INT32 || to == DT_INT64;
  if (!((from == DT_STRING && (number_to || to == DT_STRING)) || (to == DT_STRING && number_from))) {
    snprintf(why, cap, "casts %s to %s; string casts take float32, float64, int32 or int64", onnxc_dtype_name(from),
             onnxc_dtype_name(to));
    return false;
  }
  return true;
}

/* Number to string: every element printed into one step block. */
static onnxc_status cast_to_string(onnxc_host_call *c) {
  const onnxc_host_tensor *x = &c->t[0];
  uint64_t n = x->numel;
  char *text = malloc((size_t)n * 40 + 1);
  const char **src = malloc(((size_t)n + 1) * sizeof *src);
  size_t *len = malloc(((size_t)n + 1) * sizeof *len);
  onnxc_status st = ONNXC_OK;
  if (!text || !src || !len) st = onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "step %u (Cast): out of memory", c->step);
  for (uint64_t i = 0; st == ONNXC_OK && i < n; i++) {
    char *b = text + i * 40;
    switch (x->dtype) {
      case DT_FLOAT: format_float(((const float *)x->data)[i], true, b, 40); break;
      case DT_DOUBLE: format_float(((const double *)x->data)[i], false, b, 40); break;
      case DT_INT32: snprintf(b, 40, "%d", ((const int32_t *)x->data)[i]); break;
      default: snprintf(b, 40, "%lld", (long long)((const int64_t *)x->data)[i]); break;
    }
    src[i] = b;
    len[i] = strlen(b);
  }
  if (st == ONNXC_OK) st = onnxc_host_store_strings(c, src, len, n, c->t[1].data);
  free(text), free((void *)src), free(len);
  return st;
}

/* String to number: what strtod/strtoll read (decimal, exponents, "NaN", "INF", "-inf", ...), the
 * whole string; anything else is an error naming the element. */
static onnxc_status cast_from_string(onnxc_host_call *c) {
  const onnxc_host_tensor *x = &c->t[0], *y = &c->t[1];
  for (uint64_t i = 0; i < x->numel; i++) {
    const char *s = onnxc_host_string(x, i);
    char *end = NULL;
    bool integer = y->dtype == DT_INT32 || y->dtype == DT_INT64;
    double f = 0;
    long long k = 0;
    if (integer) k = strtoll(s, &end, 10);
    else f = strtod(s, &end);
    while (end && (*end == ' ' || *end == '\t' || *end == '\n')) end++;
    if (!*s || !end || *end) {
      return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "step %u (Cast): element %llu, \"%.64s\", is not a %s", c->step,
                        (unsigned long long)i, s, integer ? "integer" : "number");
    }
    switch (y->dtype) {
      case DT_FLOAT: ((float *)y->data)[i] = (float)f; break;
      case DT_DOUBLE: ((double *)y->data)[i] = f; break;
      case DT_INT32: ((int32_t *)y->data)[i] = (int32_t)k; break;
      default: ((int64_t *)y->data)[i] = (int64_t)k; break;
    }
  }
  return ONNXC_OK;
}

static onnxc_status run_cast(onnxc_host_call *c) {
  if (c->t[0].dtype != DT_STRING) return cast_to_string(c);
  if (c->t[1].dtype != DT_STRING) return cast_from_string(c);
  const onnxc_host_tensor *x = &c->t[0];
  const char **src = malloc(((size_t)x->numel + 1) * sizeof *src);
  size_t *len = malloc(((size_t)x->numel + 1) * sizeof *len);
  onnxc_status st = ONNXC_OK;
  if (!src || !len) st = onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "step %u (Cast): out of memory", c->step);
  for (uint64_t i = 0; st == ONNXC_OK && i < x->numel; i++) src[i] = onnxc_host_string(x, i), len[i] = strlen(src[i]);
  if (st == ONNXC_OK) st = onnxc_host_store_strings(c, src, len, x->numel, c->t[1].data);
  free((void *)src), free(len);
  return st;
}

const onnxc_host_op_info onnxc_host_string_cast = {.name = "Cast", .n_inputs = 1, .n_outputs = 1, .n_scalars = 0,
    .n_binds = 0, .check = check_cast, .run = run_cast, ONNXC_HOST_STRINGS_STATE};
