/* StringSplit and RegexFullMatch (opset 20). StringSplit's output has one more dim than X, as long as the
 * most parts any string splits into: a size the data decides, bound here. RegexFullMatch compiles the
 * pattern (RE2 syntax) into a POSIX extended expression with glibc's \w \W \b extensions, once per run. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_op.h"

enum { DT_UINT8 = 2, DT_INT64 = 7, DT_STRING = 8, DT_BOOL = 9 };

/* ---- StringSplit: args {X, delimiter (uint8: bytes and a NUL), Y, Z, maxsplit (< 0: none), whitespace} ---- */

static bool check_split(const onnxc_model_desc *d, const int32_t *t, char *why, size_t cap) {
  const onnxc_tensor_desc *x = &d->tensors[t[0]], *y = &d->tensors[t[2]], *z = &d->tensors[t[3]];
  if (x->dtype != DT_STRING || y->dtype != DT_STRING || z->dtype != DT_INT64 || y->rank != x->rank + 1 ||
      z->rank != x->rank || d->tensors[t[1]].dtype != DT_UINT8) {
    snprintf(why, cap, "X and Y must be strings, Y of X's rank + 1, Z int64 of X's rank, the delimiter uint8");
    return false;
  }
  return true;
}

static bool is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f'; }

/* Python's str.split (what ONNX's reference calls): with a delimiter, every occurrence splits (empty parts
 * kept); without one, runs of whitespace split and leading/trailing whitespace gives no part. At most
 * maxsplit splits (< 0: no limit); the rest of the string is the last part. Calls part(start, length) for each part; returns the count. */
typedef void (*part_fn)(void *ctx, const char *start, size_t len);

static int64_t split_one(const char *s, const char *delim, bool whitespace, int64_t maxsplit, part_fn part, void *ctx) {
  int64_t n = 0;
  size_t dl = strlen(delim);
  if (!whitespace) {
    const char *at = s;
    for (;;) {
      const char *hit = (maxsplit < 0 || n < maxsplit) ? strstr(at, delim) : NULL;
      if (!hit) break;
      if (part) part(ctx, at, (size_t)(hit - at));
      n++;
      at = hit + dl;
    }
    if (part) part(ctx, at, strlen(at));
    return n + 1;
  }
  const char *at = s;
  for (;;) {
    while (*at && is_space(*at)) at++;
    if (!*at) return n;
    const char *end;
    if (maxsplit >= 0 && n == maxsplit) {  /* the rest, as it stands (trailing whitespace kept) */
      if (part) part(ctx, at, strlen(at));
      return n + 1;
    }
    for (end = at; *end && !is_space(*end);) end++;
    if (part) part(ctx, at, (size_t)(end - at));
    n++;
    at = end;
  }
}

typedef struct collect {
  const char **src;
  size_t *len;
  uint64_t next;
} collect;

static void keep_part(void *p, const char *start, size_t len) {
  collect *c = p;
  c->src[c->next] = start;
  c->len[c->next] = len;
  c->next++;
}

static onnxc_status run_split(onnxc_host_call *c) {
  const onnxc_host_tensor *x = &c->t[0];
  const char *delim = c->t[1].data;
  int64_t maxsplit = c->scalar[0];
  bool whitespace = c->scalar[1] != 0;
  int64_t most = 0;
  for (uint64_t i = 0; i < x->numel; i++) {
    int64_t n = split_one(onnxc_host_string(x, i), delim, whitespace, maxsplit, NULL, NULL);
    if (n > most) most = n;
  }
  onnxc_status st = onnxc_host_bind(c, &most);
  if (st != ONNXC_OK) return st;
  const onnxc_host_tensor *y = &c->t[2], *z = &c->t[3];
  uint64_t total = x->numel * (uint64_t)most;
  collect parts = {malloc((size_t)(total + 1) * sizeof(const char *)), malloc((size_t)(total + 1) * sizeof(size_t)), 0};
  if (!parts.src || !parts.len) st = onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "step %u (StringSplit): out of memory", c->step);
  for (uint64_t i = 0; st == ONNXC_OK && i < x->numel; i++) {
    int64_t n = split_one(onnxc_host_string(x, i), delim, whitespace, maxsplit, keep_part, &parts);
    ((int64_t *)z->data)[i] = n;
    for (; n < most; n++) keep_part(&parts, "", 0); /* padded with empty strings */
  }
  if (st == ONNXC_OK) st = onnxc_host_store_strings(c, parts.src, parts.len, total, y->data);
  free((void *)parts.src), free(parts.len);
  return st;
}

/* ---- RegexFullMatch: args {X, pattern (uint8: RE2 text and a NUL), Y} ---- */

static bool check_regex(const onnxc_model_desc *d, const int32_t *t, char *why, size_t cap) {
  const onnxc_tensor_desc *x = &d->tensors[t[0]], *y = &d->tensors[t[2]];
  if (x->dtype != DT_STRING || y->dtype != DT_BOOL || y->rank != x->rank || d->tensors[t[1]].dtype != DT_UINT8) {
    snprintf(why, cap, "X must be strings, Y bool of X's rank, the pattern uint8");
    return false;
  }
  return true;
}

/* RE2 -> POSIX ERE, anchored at both ends. Outside brackets \d and \s become classes (\w, \W, \b stay:
 * glibc's extensions); inside brackets, where POSIX takes backslash literally, \w \d \s become their
 * class names and an escaped character the character itself ('-' moved last, ']' first). Returns NULL
 * for what it cannot translate (non-greedy or (?...) groups, \D inside brackets...). */
static char *posix_pattern(const char *re) {
  size_t cap = 8 * strlen(re) + 16, o = 0;
  char *out = malloc(cap);
  if (!out) return NULL;
  o += (size_t)sprintf(out, "^(");
  for (const char *p = re; *p; p++) {
    if (*p == '[') {
      bool dash = false, bracket = false;
      char body[512];
      size_t b = 0;
      const char *q = p + 1;
      bool neg = *q == '^';
      if (neg) q++;
      for (; *q && *q != ']' && b + 16 < sizeof body; q++) {
        if (*q == '\\' && q[1]) {
          q++;
          const char *cls = *q == 'w' ? "[:alnum:]_" : *q == 'd' ? "[:digit:]" : *q == 's' ? "[:space:]" : NULL;
          if (cls) b += (size_t)sprintf(body + b, "%s", cls);
          else if (*q == '-') dash = true;
          else if (*q == ']') bracket = true;
          else if (*q == 'W' || *q == 'D' || *q == 'S') goto fail;
          else body[b++] = *q;
        } else {
          body[b++] = *q;
        }
      }
      if (*q != ']') goto fail;
      o += (size_t)sprintf(out + o, "[%s%s%.*s%s]", neg ? "^" : "", bracket ? "]" : "", (int)b, body, dash ? "-" : "");
      p = q;
    } else if (*p == '\\' && p[1]) {
      p++;
      if (*p == 'd') o += (size_t)sprintf(out + o, "[[:digit:]]");
      else if (*p == 'D') o += (size_t)sprintf(out + o, "[^[:digit:]]");
      else if (*p == 's') o += (size_t)sprintf(out + o, "[[:space:]]");
      else if (*p == 'S') o += (size_t)sprintf(out + o, "[^[:space:]]");
      else o += (size_t)sprintf(out + o, "\\%c", *p);
    } else if ((*p == '?' && p > re && (p[-1] == '(' || p[-1] == '*' || p[-1] == '+' || p[-1] == '?' || p[-1] == '}'))) {
      goto fail; /* (?...) groups and non-greedy quantifiers have no POSIX form */
    } else {
      out[o++] = *p;
    }
  }
  o += (size_t)sprintf(out + o, ")$");
  out[o] = '\0';
  return out;
fail:
  free(out);
  return NULL;
}

static onnxc_status run_regex(onnxc_host_call *c) {
  const onnxc_host_tensor *x = &c->t[0], *y = &c->t[2];
  const char *pattern = c->t[1].data;
  char *posix = posix_pattern(pattern);
  if (!posix) return onnxc_fail(ONNXC_ERR_UNSUPPORTED, "step %u (RegexFullMatch): pattern '%s' is not supported", c->step, pattern);
  regex_t re;
  int rc = regcomp(&re, posix, REG_EXTENDED | REG_NOSUB);
  free(posix);
  if (rc != 0) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "step %u (RegexFullMatch): pattern '%s' does not compile", c->step, pattern);
  for (uint64_t i = 0; i < x->numel; i++) ((uint8_t *)y->data)[i] = regexec(&re, onnxc_host_string(x, i), 0, NULL, 0) == 0;
  regfree(&re);
  return ONNXC_OK;
}

const onnxc_host_op_info onnxc_host_string_split = {.name = "StringSplit", .n_inputs = 2, .n_outputs = 2,
    .n_scalars = 2, .n_binds = 1, .check = check_split, .run = run_split, ONNXC_HOST_STRINGS_STATE};
const onnxc_host_op_info onnxc_host_regex_full_match = {.name = "RegexFullMatch", .n_inputs = 2, .n_outputs = 1,
    .n_scalars = 0, .n_binds = 0, .check = check_regex, .run = run_regex};
