/* run_data_sets: runs a statically linked model on ONNX test-data folders and compares its outputs
 * with output_K.pb, in plain C with no protobuf library, so the check runs wherever the runtime
 * does: built for aarch64 and run under qemu-aarch64 by tests/cross/arm64_test.sh.
 *
 *   cc run_data_sets.c -DONNXC_MODEL=NAME -IDIR DIR/libNAME.a libonnxc_runtime.a -lm -lpthread -ldl
 *   run_data_sets [--rtol R] [--atol A] DATA_SET...
 *
 * Inputs input_K.pb bind to the model's inputs in order. Floats match when |a - e| <= atol + rtol·|e|
 * (NaN equals NaN), as `onnxc compare` has it; integers and bools exactly. Exit 0 all match, 1 a
 * mismatch, 2 an error (unreadable file, unsupported dtype, a failed run). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc/runtime.h"

#define ONNXC_STR_(x) #x
#define ONNXC_STR(x) ONNXC_STR_(x)
#define ONNXC_CAT_(a, b) a##b
#define ONNXC_CAT(a, b) ONNXC_CAT_(a, b)
#include ONNXC_STR(ONNXC_MODEL.h)
#define MODEL_DESC ONNXC_CAT(onnxc_model_, ONNXC_MODEL)

#define MAX_RANK 16
#define MAX_IO 64

typedef struct pb_tensor {
  int32_t dtype, rank;
  int64_t dims[MAX_RANK];
  size_t count;
  void *data; /* count elements of dtype, malloc'd */
} pb_tensor;

static int die(const char *what, const char *detail) {
  fprintf(stderr, "run_data_sets: %s: %s\n", what, detail);
  exit(2);
}

static uint64_t varint(const uint8_t **p, const uint8_t *end) {
  uint64_t v = 0;
  for (int shift = 0; *p < end && shift < 64; shift += 7) {
    uint8_t b = *(*p)++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  die("truncated varint", "");
  return 0;
}

/* Appends `n` bytes to a growing buffer. */
static void append(uint8_t **buf, size_t *len, const void *src, size_t n) {
  *buf = realloc(*buf, *len + n + 1);
  if (!*buf) die("out of memory", "");
  memcpy(*buf + *len, src, n);
  *len += n;
}

/* TensorProto: dims (1), data_type (2), float_data (4), int32_data (5), int64_data (7), raw_data (9),
 * double_data (10), uint64_data (11); repeated numeric fields packed or not. */
static pb_tensor read_tensor(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) die("cannot open", path);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *bytes = malloc((size_t)size + 1);
  if (!bytes || fread(bytes, 1, (size_t)size, f) != (size_t)size) die("cannot read", path);
  fclose(f);
  pb_tensor t = {0};
  uint8_t *raw = NULL, *vals = NULL;
  size_t raw_len = 0, vals_len = 0;
  int val_width = 0; /* bytes per element in vals: 4 (float/int32 as int32), 8 (int64/double/uint64) */
  const uint8_t *p = bytes, *end = bytes + size;
  while (p < end) {
    uint64_t key = varint(&p, end);
    int field = (int)(key >> 3), wire = (int)(key & 7);
    if (wire == 0) {
      uint64_t v = varint(&p, end);
      if (field == 1 && t.rank < MAX_RANK) t.dims[t.rank++] = (int64_t)v;
      else if (field == 2) t.dtype = (int32_t)v;
      else if (field == 5) { int32_t x = (int32_t)v; append(&vals, &vals_len, &x, 4); val_width = 4; }
      else if (field == 7 || field == 11) { int64_t x = (int64_t)v; append(&vals, &vals_len, &x, 8); val_width = 8; }
    } else if (wire == 2) {
      uint64_t n = varint(&p, end);
      if (n > (uint64_t)(end - p)) die("truncated field", path);
      const uint8_t *sub = p, *sub_end = p + n;
      p += n;
      if (field == 9) append(&raw, &raw_len, sub, n);
      else if (field == 4) { append(&vals, &vals_len, sub, n); val_width = 4; }
      else if (field == 10) { append(&vals, &vals_len, sub, n); val_width = 8; }
      else if (field == 1 || field == 5 || field == 7 || field == 11) {
        while (sub < sub_end) {
          uint64_t v = varint(&sub, sub_end);
          if (field == 1) { if (t.rank < MAX_RANK) t.dims[t.rank++] = (int64_t)v; }
          else if (field == 5) { int32_t x = (int32_t)v; append(&vals, &vals_len, &x, 4); val_width = 4; }
          else { int64_t x = (int64_t)v; append(&vals, &vals_len, &x, 8); val_width = 8; }
        }
      }
    } else if (wire == 5) {
      if (field == 4) { append(&vals, &vals_len, p, 4); val_width = 4; }
      p += 4;
    } else if (wire == 1) {
      if (field == 10) { append(&vals, &vals_len, p, 8); val_width = 8; }
      p += 8;
    } else {
      die("not a TensorProto", path);
    }
  }
  free(bytes);
  t.count = 1;
  for (int i = 0; i < t.rank; ++i) t.count *= (size_t)t.dims[i];
  size_t es = onnxc_dtype_size(t.dtype);
  if (es == 0 || t.dtype == ONNXC_DTYPE_STRING) die("unsupported dtype in", path);
  t.data = calloc(t.count ? t.count : 1, es);
  if (raw) {
    if (raw_len != t.count * es) die("raw_data size does not match dims in", path);
    memcpy(t.data, raw, raw_len);
  } else if (vals && val_width) {
    /* Typed fields: narrow or copy each element into the tensor's own width. */
    size_t n = vals_len / (size_t)val_width;
    if (n != t.count) die("element count does not match dims in", path);
    for (size_t i = 0; i < n; ++i) {
      uint8_t *dst = (uint8_t *)t.data + i * es;
      if ((size_t)val_width == es) memcpy(dst, vals + i * es, es);
      else if (val_width == 4) { int32_t x; memcpy(&x, vals + i * 4, 4); memcpy(dst, &x, es); } /* int8/16, bool, fp16 bits */
      else die("unsupported typed field in", path);
    }
  }
  free(raw);
  free(vals);
  return t;
}

/* IEEE half and bfloat16 bits -> double. */
static double half_to_double(uint16_t h) {
  int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v = exp == 0 ? ldexp(man, -24) : exp == 31 ? (man ? NAN : INFINITY) : ldexp(man | 0x400, exp - 25);
  return h & 0x8000 ? -v : v;
}

static double bf16_to_double(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static double element(const void *data, int32_t dtype, size_t i) {
  switch (dtype) {
    case ONNXC_DTYPE_FLOAT16: return half_to_double(((const uint16_t *)data)[i]);
    case ONNXC_DTYPE_BFLOAT16: return bf16_to_double(((const uint16_t *)data)[i]);
    case ONNXC_DTYPE_FLOAT: return ((const float *)data)[i];
    case ONNXC_DTYPE_DOUBLE: return ((const double *)data)[i];
    case ONNXC_DTYPE_INT8: return ((const int8_t *)data)[i];
    case ONNXC_DTYPE_UINT8: case ONNXC_DTYPE_BOOL: return ((const uint8_t *)data)[i];
    case ONNXC_DTYPE_INT16: return ((const int16_t *)data)[i];
    case ONNXC_DTYPE_UINT16: return ((const uint16_t *)data)[i];
    case ONNXC_DTYPE_INT32: return ((const int32_t *)data)[i];
    case ONNXC_DTYPE_UINT32: return ((const uint32_t *)data)[i];
    case ONNXC_DTYPE_INT64: return (double)((const int64_t *)data)[i];
    case ONNXC_DTYPE_UINT64: return (double)((const uint64_t *)data)[i];
    default: die("cannot compare dtype", onnxc_dtype_name(dtype));
  }
  return 0;
}

/* Compares one output; prints a line and returns 1 on a mismatch. */
static int compare(const char *set, size_t k, const onnxc_tensor *got, const pb_tensor *want, double rtol, double atol) {
  if (got->rank != want->rank || got->dtype != want->dtype) {
    printf("%s: output %zu: dtype %d rank %d, expected dtype %d rank %d\n", set, k, got->dtype, got->rank, want->dtype,
           want->rank);
    return 1;
  }
  for (int i = 0; i < got->rank; ++i)
    if (got->dims[i] != want->dims[i]) {
      printf("%s: output %zu: dim %d is %lld, expected %lld\n", set, k, i, (long long)got->dims[i], (long long)want->dims[i]);
      return 1;
    }
  const int is_float = want->dtype == ONNXC_DTYPE_FLOAT || want->dtype == ONNXC_DTYPE_DOUBLE ||
                       want->dtype == ONNXC_DTYPE_FLOAT16 || want->dtype == ONNXC_DTYPE_BFLOAT16;
  size_t bad = 0, worst_at = 0;
  double worst = 0;
  for (size_t i = 0; i < want->count; ++i) {
    double a = element(got->data, got->dtype, i), e = element(want->data, want->dtype, i);
    int ok = is_float ? ((isnan(a) && isnan(e)) || a == e || fabs(a - e) <= atol + rtol * fabs(e)) : a == e;
    if (!ok) ++bad;
    if (fabs(a - e) > worst || (!ok && isnan(a))) worst = isnan(a) ? INFINITY : fabs(a - e), worst_at = i;
  }
  printf("%s: output %zu: %zu elements, max abs err %.3g, %zu mismatches\n", set, k, want->count, worst, bad);
  if (bad) printf("  worst at flat index %zu\n", worst_at);
  return bad != 0;
}

int main(int argc, char **argv) {
  double rtol = 1e-3, atol = 1e-7;
  const char *sets[256];
  int n_sets = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--rtol") && i + 1 < argc) rtol = atof(argv[++i]);
    else if (!strcmp(argv[i], "--atol") && i + 1 < argc) atol = atof(argv[++i]);
    else if (n_sets < 256) sets[n_sets++] = argv[i];
  }
  if (!n_sets) die("usage", "run_data_sets [--rtol R] [--atol A] DATA_SET...");
  onnxc_model *model;
  onnxc_session *session;
  if (onnxc_model_from_desc(MODEL_DESC(), &model) != ONNXC_OK) die("model", onnxc_last_error());
  if (onnxc_session_create(model, NULL, &session) != ONNXC_OK) die("session", onnxc_last_error());
  int mismatches = 0;
  char path[4096];
  for (int s = 0; s < n_sets; ++s) {
    pb_tensor ins[MAX_IO];
    size_t n_in = 0;
    for (; n_in < onnxc_model_num_inputs(model) && n_in < MAX_IO; ++n_in) {
      snprintf(path, sizeof path, "%s/input_%zu.pb", sets[s], n_in);
      ins[n_in] = read_tensor(path);
      onnxc_tensor t = {ins[n_in].dtype, ins[n_in].rank, ins[n_in].dims, ins[n_in].data};
      if (onnxc_session_set_input(session, n_in, &t) != ONNXC_OK) die(path, onnxc_session_last_error(session));
    }
    if (onnxc_session_run(session) != ONNXC_OK) die(sets[s], onnxc_session_last_error(session));
    for (size_t k = 0; k < onnxc_model_num_outputs(model); ++k) {
      snprintf(path, sizeof path, "%s/output_%zu.pb", sets[s], k);
      pb_tensor want = read_tensor(path);
      onnxc_tensor got;
      if (onnxc_session_get_output(session, k, &got) != ONNXC_OK) die(path, onnxc_session_last_error(session));
      mismatches += compare(sets[s], k, &got, &want, rtol, atol);
      free(want.data);
    }
    for (size_t i = 0; i < n_in; ++i) free(ins[i].data);
  }
  onnxc_session_free(session);
  onnxc_model_free(model);
  printf("run_data_sets: %s (rtol %g, atol %g)\n", mismatches ? "MISMATCH" : "all outputs match", rtol, atol);
  return mismatches ? 1 : 0;
}
