/* TensorProto wire-format reader: walks the top-level fields, keeps the ones a dense tensor needs. */
#include "tensor_pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_DIMS = 1, F_DATA_TYPE = 2, F_FLOAT = 4, F_INT32 = 5, F_INT64 = 7, F_NAME = 8, F_RAW = 9, F_DOUBLE = 10,
       F_DATA_LOCATION = 14 };

size_t tensor_pb_dtype_size(int32_t dtype) {
  switch (dtype) {
    case 1: case 6: case 12: return 4;          /* float, int32, uint32 */
    case 2: case 3: case 9: return 1;           /* uint8, int8, bool */
    case 4: case 5: case 10: case 16: return 2; /* uint16, int16, float16, bfloat16 */
    case 7: case 11: case 13: return 8;         /* int64, double, uint64 */
    default: return 0;
  }
}

typedef struct {
  const uint8_t *p, *end;
} cursor;

static int varint(cursor *c, uint64_t *v) {
  *v = 0;
  for (int shift = 0; shift < 64 && c->p < c->end; shift += 7) {
    uint8_t b = *c->p++;
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return 0;
  }
  return -1;
}

/* Appends one element of a typed field (from a varint or fixed value) to the growing data buffer. */
static int append(tensor_pb *t, size_t *cap, const void *elem, size_t size) {
  if (t->nbytes + size > *cap) {
    *cap = (*cap ? *cap * 2 : 64) + size;
    void *p = realloc(t->data, *cap);
    if (!p) return -1;
    t->data = p;
  }
  memcpy((char *)t->data + t->nbytes, elem, size);
  t->nbytes += size;
  return 0;
}

/* An element of int32_data (which also holds bool, int8, uint8, int16, uint16 and float16 bits) or
 * int64_data, stored at the tensor's element size. */
static int append_int(tensor_pb *t, size_t *cap, int field, uint64_t v) {
  if (field == F_INT64) return append(t, cap, &v, 8);
  size_t size = tensor_pb_dtype_size(t->dtype);
  if (size == 0 || size > 4) return -1;
  int32_t w = (int32_t)v;
  return append(t, cap, &w, size); /* little-endian: the low bytes */
}

/* An element of float_data (4 bytes) or double_data (8 bytes). */
static int append_fixed(tensor_pb *t, size_t *cap, cursor *c, size_t n) {
  if ((size_t)(c->end - c->p) < n) return -1;
  int r = append(t, cap, c->p, n);
  c->p += n;
  return r;
}

int tensor_pb_read(const char *path, tensor_pb *out, char *err, size_t err_size) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, err_size, "%s: cannot open", path);
    return -1;
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc(size > 0 ? (size_t)size : 1);
  if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
    fclose(f);
    free(buf);
    snprintf(err, err_size, "%s: cannot read", path);
    return -1;
  }
  fclose(f);
  cursor c = {buf, buf + size};
  size_t cap = 0;
  const uint8_t *raw = NULL;
  size_t raw_len = 0;
  int bad = 0;
  while (c.p < c.end && !bad) {
    uint64_t key;
    if (varint(&c, &key)) { bad = 1; break; }
    int field = (int)(key >> 3), wire = (int)(key & 7);
    if (wire == 2) {
      uint64_t len;
      if (varint(&c, &len) || len > (uint64_t)(c.end - c.p)) { bad = 1; break; }
      cursor sub = {c.p, c.p + len};
      c.p += len;
      if (field == F_NAME) {
        size_t n = len < sizeof out->name - 1 ? (size_t)len : sizeof out->name - 1;
        memcpy(out->name, sub.p, n);
        out->name[n] = 0;
      } else if (field == F_RAW) {
        raw = sub.p;
        raw_len = (size_t)len;
      } else if (field == F_DIMS) { /* packed dims */
        uint64_t d;
        while (sub.p < sub.end && !bad) {
          if (varint(&sub, &d) || out->rank >= TENSOR_PB_MAX_RANK) bad = 1;
          else out->dims[out->rank++] = (int64_t)d;
        }
      } else if (field == F_FLOAT || field == F_DOUBLE) { /* packed */
        while (sub.p < sub.end && !bad) bad = append_fixed(out, &cap, &sub, field == F_FLOAT ? 4 : 8) != 0;
      } else if (field == F_INT32 || field == F_INT64) { /* packed */
        uint64_t v;
        while (sub.p < sub.end && !bad) bad = varint(&sub, &v) || append_int(out, &cap, field, v);
      }
      continue;
    }
    if (wire == 0) {
      uint64_t v;
      if (varint(&c, &v)) { bad = 1; break; }
      if (field == F_DIMS) {
        if (out->rank >= TENSOR_PB_MAX_RANK) bad = 1;
        else out->dims[out->rank++] = (int64_t)v;
      } else if (field == F_DATA_TYPE) {
        out->dtype = (int32_t)v;
      } else if (field == F_DATA_LOCATION && v != 0) {
        snprintf(err, err_size, "%s: external data is not supported here", path);
        free(buf);
        tensor_pb_free(out);
        return -1;
      } else if (field == F_INT32 || field == F_INT64) {
        bad = append_int(out, &cap, field, v) != 0;
      }
      continue;
    }
    if (wire == 5 || wire == 1) {
      size_t n = wire == 5 ? 4 : 8;
      if ((size_t)(c.end - c.p) < n) { bad = 1; break; }
      if ((field == F_FLOAT && n == 4) || (field == F_DOUBLE && n == 8)) bad = append_fixed(out, &cap, &c, n) != 0;
      else c.p += n;
      continue;
    }
    bad = 1;
  }
  out->numel = 1;
  for (int i = 0; i < out->rank; ++i) out->numel *= out->dims[i];
  size_t want = (size_t)out->numel * tensor_pb_dtype_size(out->dtype);
  if (!bad && raw) {
    free(out->data);
    out->data = malloc(raw_len ? raw_len : 1);
    if (out->data) memcpy(out->data, raw, raw_len);
    out->nbytes = raw_len;
  }
  free(buf);
  if (bad || tensor_pb_dtype_size(out->dtype) == 0 || out->nbytes != want) {
    snprintf(err, err_size, "%s: not a dense TensorProto this reader handles (dtype %d, %zu data bytes for %lld elements)",
             path, out->dtype, out->nbytes, (long long)out->numel);
    tensor_pb_free(out);
    return -1;
  }
  if (!out->data) out->data = malloc(1);
  return 0;
}

void tensor_pb_free(tensor_pb *t) {
  free(t->data);
  t->data = NULL;
  t->nbytes = 0;
}
