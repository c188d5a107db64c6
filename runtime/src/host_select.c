/* Host ops that select by data, so their output sizes depend on it: NonZero, Compress and
 * NonMaxSuppression. Every size an op reads comes from the dims the runtime evaluated and checked; every
 * output is checked against the dims its bind produced. */
#include <math.h> /* INFINITY */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_op.h"

enum { DT_FLOAT = 1, DT_INT64 = 7, DT_STRING = 8, DT_BOOL = 9 };

/* True unless every bit but a float's sign bit is 0 (so -0.0 is zero and NaN is not); a string
 * element (a `const char *`) is non-zero when it is not empty, as numpy's nonzero has it. */
static bool is_nonzero(const uint8_t *e, size_t size, bool is_float, bool is_string) {
  if (is_string) {
    const char *str;
    memcpy(&str, e, sizeof str);
    return str && str[0] != '\0';
  }
  for (size_t b = 0; b < size; b++) {
    uint8_t mask = is_float && b == size - 1 ? 0x7f : 0xff; /* little-endian: the sign is in the last byte */
    if (e[b] & mask) return true;
  }
  return false;
}

static const onnxc_tensor_desc *td(const onnxc_model_desc *d, const int32_t *tensors, int i) {
  return &d->tensors[tensors[i]];
}

#define REQUIRE(cond, ...)                \
  do {                                    \
    if (!(cond)) {                        \
      snprintf(why, cap, __VA_ARGS__);    \
      return false;                       \
    }                                     \
  } while (0)

/* ---- NonZero: Y[a, j] is axis a's index of the j-th non-zero element in row-major order ---- */

static bool check_nonzero(const onnxc_model_desc *d, const int32_t *t, char *why, size_t cap) {
  REQUIRE(td(d, t, 1)->dtype == DT_INT64 && td(d, t, 1)->rank == 2, "output must be int64 of rank 2");
  return true;
}

static onnxc_status run_nonzero(onnxc_host_call *c) {
  const onnxc_host_tensor *x = &c->t[0];
  size_t size = onnxc_dtype_size(x->dtype);
  bool fl = onnxc_host_is_float(x->dtype), str = x->dtype == DT_STRING;
  const uint8_t *data = x->data;
  int64_t count = 0;
  for (uint64_t i = 0; i < x->numel; i++) count += is_nonzero(data + i * size, size, fl, str);
  onnxc_status st = onnxc_host_bind(c, &count);
  int64_t want[2] = {x->rank, count};
  if (st == ONNXC_OK) st = onnxc_host_check_dims(c, 1, want, 2);
  if (st != ONNXC_OK) return st;
  int64_t *y = c->t[1].data, j = 0;
  for (uint64_t i = 0; i < x->numel; i++) {
    if (!is_nonzero(data + i * size, size, fl, str)) continue;
    uint64_t rest = i;
    for (int32_t a = x->rank - 1; a >= 0; a--) {
      y[a * count + j] = (int64_t)(rest % (uint64_t)x->dims[a]);
      rest /= (uint64_t)x->dims[a];
    }
    j++;
  }
  return ONNXC_OK;
}

/* ---- Compress: the slices along `axis` (or elements of the flattened X) where condition is true ---- */

static bool check_compress(const onnxc_model_desc *d, const int32_t *t, char *why, size_t cap) {
  REQUIRE(td(d, t, 1)->dtype == DT_BOOL && td(d, t, 1)->rank == 1, "condition must be bool of rank 1");
  REQUIRE(td(d, t, 2)->dtype == td(d, t, 0)->dtype, "output dtype differs from the input's");
  return true;
}

static onnxc_status run_compress(onnxc_host_call *c) {
  const onnxc_host_tensor *x = &c->t[0], *cond = &c->t[1];
  int64_t axis = c->scalar[0];
  if (axis < -1 || axis >= x->rank) {
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "step %u (Compress): axis %lld is out of range for rank %d", c->step,
                      (long long)axis, x->rank);
  }
  uint64_t outer = 1, len = x->numel, inner = 1;
  if (axis >= 0) {
    len = (uint64_t)x->dims[axis];
    for (int32_t a = 0; a < axis; a++) outer *= (uint64_t)x->dims[a];
    for (int32_t a = (int32_t)axis + 1; a < x->rank; a++) inner *= (uint64_t)x->dims[a];
  }
  if (cond->numel > len) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (Compress): condition has %llu elements but the %s has %llu",
                      c->step, (unsigned long long)cond->numel, axis >= 0 ? "axis" : "flattened input",
                      (unsigned long long)len);
  }
  const uint8_t *keep = cond->data;
  int64_t count = 0;
  for (uint64_t i = 0; i < cond->numel; i++) count += keep[i] != 0;
  onnxc_status st = onnxc_host_bind(c, &count);
  int64_t want[ONNXC_MAX_RANK];
  int32_t rank = axis >= 0 ? x->rank : 1;
  for (int32_t a = 0; a < rank; a++) want[a] = axis < 0 || a == axis ? count : x->dims[a];
  if (st == ONNXC_OK) st = onnxc_host_check_dims(c, 2, want, rank);
  if (st != ONNXC_OK) return st;
  size_t row = inner * onnxc_dtype_size(x->dtype);
  const uint8_t *src = x->data;
  uint8_t *dst = c->t[2].data;
  for (uint64_t o = 0; o < outer; o++) {
    for (uint64_t i = 0; i < cond->numel; i++) {
      if (!keep[i]) continue;
      memcpy(dst, src + (o * len + i) * row, row);
      dst += row;
    }
  }
  return ONNXC_OK;
}

/* ---- NonMaxSuppression: per batch and class, greedy selection by score, suppressing by IoU ---- */

static bool check_nms(const onnxc_model_desc *d, const int32_t *t, char *why, size_t cap) {
  REQUIRE(td(d, t, 0)->dtype == DT_FLOAT && td(d, t, 0)->rank == 3, "boxes must be float32 of rank 3");
  REQUIRE(td(d, t, 1)->dtype == DT_FLOAT && td(d, t, 1)->rank == 3, "scores must be float32 of rank 3");
  REQUIRE(td(d, t, 2)->dtype == DT_INT64 && td(d, t, 2)->rank <= 1, "max_output_boxes_per_class must be an int64 scalar");
  REQUIRE(td(d, t, 3)->dtype == DT_FLOAT && td(d, t, 3)->rank <= 1, "iou_threshold must be a float32 scalar");
  REQUIRE(td(d, t, 4)->dtype == DT_FLOAT && td(d, t, 4)->rank <= 1, "score_threshold must be a float32 scalar");
  REQUIRE(td(d, t, 5)->dtype == DT_INT64 && td(d, t, 5)->rank == 2, "output must be int64 of rank 2");
  return true;
}

typedef struct nms_box { float y1, x1, y2, x2; } nms_box;

/* Not fminf/fmaxf: the runtime links no libm. */
static float min_f(float a, float b) { return a < b ? a : b; }
static float max_f(float a, float b) { return a > b ? a : b; }

static nms_box nms_corners(const float *b, bool center) {
  if (center) return (nms_box){b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2};
  return (nms_box){min_f(b[0], b[2]), min_f(b[1], b[3]), max_f(b[0], b[2]), max_f(b[1], b[3])};
}

static bool nms_suppresses(nms_box a, nms_box b, float threshold) {
  float area_a = (a.y2 - a.y1) * (a.x2 - a.x1), area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
  if (area_a <= 0 || area_b <= 0) return false;
  float h = min_f(a.y2, b.y2) - max_f(a.y1, b.y1), w = min_f(a.x2, b.x2) - max_f(a.x1, b.x1);
  if (h <= 0 || w <= 0) return false;
  float inter = h * w;
  return inter / (area_a + area_b - inter) > threshold;
}

typedef struct nms_candidate { float score; int64_t index; } nms_candidate;

static int by_score(const void *pa, const void *pb) {
  const nms_candidate *a = pa, *b = pb;
  if (a->score != b->score) return a->score > b->score ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

static float scalar_or(const onnxc_host_tensor *t, float fallback) {
  return t->numel ? *(const float *)t->data : fallback;
}

/* Selects into sel (triples) for one (batch, class); returns how many. cand and kept hold n entries. */
static int64_t nms_class(const float *boxes, const float *scores, int64_t n, int64_t limit, float iou, float min_score,
                         bool center, nms_candidate *cand, nms_box *kept) {
  int64_t m = 0, k = 0;
  for (int64_t i = 0; i < n; i++) {
    if (scores[i] > min_score) cand[m++] = (nms_candidate){scores[i], i};
  }
  qsort(cand, (size_t)m, sizeof *cand, by_score);
  for (int64_t i = 0; i < m && k < limit; i++) {
    nms_box b = nms_corners(boxes + cand[i].index * 4, center);
    bool keep = true;
    for (int64_t j = 0; j < k && keep; j++) keep = !nms_suppresses(kept[j], b, iou);
    if (keep) {
      kept[k] = b;
      cand[k++].index = cand[i].index; /* k <= i: the selected indices, in order, at the front */
    }
  }
  return k;
}

static onnxc_status run_nms(onnxc_host_call *c) {
  const onnxc_host_tensor *boxes = &c->t[0], *scores = &c->t[1];
  int64_t nb = boxes->dims[0], n = boxes->dims[1], nc = scores->dims[1];
  if (boxes->dims[2] != 4 || scores->dims[0] != nb || scores->dims[2] != n) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (NonMaxSuppression): boxes [%lld, %lld, %lld] and scores [%lld, %lld, %lld] do not match",
                      c->step, (long long)nb, (long long)n, (long long)boxes->dims[2], (long long)scores->dims[0],
                      (long long)nc, (long long)scores->dims[2]);
  }
  int64_t limit = c->t[2].numel ? *(const int64_t *)c->t[2].data : 0;
  float iou = scalar_or(&c->t[3], 0.0f), min_score = scalar_or(&c->t[4], -INFINITY);
  if (limit < 0) limit = 0;
  if (limit > n) limit = n;
  uint64_t cap = (uint64_t)(nb * nc * limit);
  nms_candidate *cand = malloc(((size_t)n + 1) * sizeof *cand);
  nms_box *kept = malloc(((size_t)n + 1) * sizeof *kept);
  int64_t *sel = malloc(((size_t)cap + 1) * 3 * sizeof *sel);
  if (!cand || !kept || !sel) {
    free(cand), free(kept), free(sel);
    return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "step %u (NonMaxSuppression): out of memory", c->step);
  }
  int64_t count = 0;
  for (int64_t b = 0; b < nb; b++) {
    for (int64_t k = 0; k < nc; k++) {
      const float *bx = (const float *)boxes->data + b * n * 4, *sc = (const float *)scores->data + (b * nc + k) * n;
      int64_t got = nms_class(bx, sc, n, limit, iou, min_score, c->scalar[0] != 0, cand, kept);
      for (int64_t i = 0; i < got; i++, count++) {
        sel[count * 3] = b, sel[count * 3 + 1] = k, sel[count * 3 + 2] = cand[i].index;
      }
    }
  }
  free(cand);
  free(kept);
  onnxc_status st = onnxc_host_bind(c, &count);
  int64_t want[2] = {count, 3};
  if (st == ONNXC_OK) st = onnxc_host_check_dims(c, 5, want, 2);
  if (st == ONNXC_OK) memcpy(c->t[5].data, sel, (size_t)count * 3 * sizeof *sel);
  free(sel);
  return st;
}

const onnxc_host_op_info onnxc_host_nonzero = {.name = "NonZero", .n_inputs = 1, .n_outputs = 1, .n_scalars = 0,
    .n_binds = 1, .check = check_nonzero, .run = run_nonzero};
const onnxc_host_op_info onnxc_host_compress = {.name = "Compress", .n_inputs = 2, .n_outputs = 1, .n_scalars = 1,
    .n_binds = 1, .check = check_compress, .run = run_compress};
const onnxc_host_op_info onnxc_host_nms = {.name = "NonMaxSuppression", .n_inputs = 5, .n_outputs = 1, .n_scalars = 1,
    .n_binds = 1, .check = check_nms, .run = run_nms};
