/* What every host op shares: output dims checks, argument names for messages, element comparison. */
#include <math.h> /* isnan: a macro, no libm */
#include <string.h>

#include "host_op.h"

enum { DT_FLOAT = 1, DT_DOUBLE = 11, DT_FLOAT16 = 10, DT_BFLOAT16 = 16 };

bool onnxc_host_is_float(int32_t dtype) {
  return dtype == DT_FLOAT || dtype == DT_DOUBLE || dtype == DT_FLOAT16 || dtype == DT_BFLOAT16;
}

#define CMP(T)                              \
  do {                                      \
    T x, y;                                 \
    memcpy(&x, a, sizeof x);                \
    memcpy(&y, b, sizeof y);                \
    return x < y ? -1 : x > y ? 1 : 0;      \
  } while (0)
#define CMP_FLOAT(T)                                        \
  do {                                                      \
    T x, y;                                                 \
    memcpy(&x, a, sizeof x);                                \
    memcpy(&y, b, sizeof y);                                \
    if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);   \
    return x < y ? -1 : x > y ? 1 : 0;                      \
  } while (0)

int onnxc_host_compare(int32_t dtype, const void *a, const void *b) {
  switch (dtype) {
    case 1: CMP_FLOAT(float);
    case 11: CMP_FLOAT(double);
    case 2: case 9: CMP(uint8_t);
    case 3: CMP(int8_t);
    case 4: CMP(uint16_t);
    case 5: CMP(int16_t);
    case 6: CMP(int32_t);
    case 7: CMP(int64_t);
    case 12: CMP(uint32_t);
    case 13: CMP(uint64_t);
    default: return 0; /* refused at load (check_unique) */
  }
}

bool onnxc_host_comparable(int32_t dtype) {
  static const int32_t kOrdered[] = {1, 2, 3, 4, 5, 6, 7, 9, 11, 12, 13};
  for (size_t i = 0; i < sizeof kOrdered / sizeof kOrdered[0]; i++) {
    if (kOrdered[i] == dtype) return true;
  }
  return false;
}

const char *onnxc_host_arg_name(const onnxc_host_call *c, int32_t i) {
  return c->desc->tensors[c->desc->steps[c->step].args[i]].name;
}

onnxc_status onnxc_host_check_dims(const onnxc_host_call *c, int32_t out, const int64_t *want, int32_t rank) {
  const onnxc_host_tensor *t = &c->t[out];
  bool same = t->rank == rank;
  for (int32_t a = 0; same && a < rank; a++) same = t->dims[a] == want[a];
  if (same) return ONNXC_OK;
  char got[256], exp[256];
  size_t gl = 0, el = 0;
  got[0] = exp[0] = '\0';
  for (int32_t a = 0; a < t->rank; a++) onnxc_appendf(got, sizeof got, &gl, "%s%lld", a ? ", " : "", (long long)t->dims[a]);
  for (int32_t a = 0; a < rank; a++) onnxc_appendf(exp, sizeof exp, &el, "%s%lld", a ? ", " : "", (long long)want[a]);
  return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (%s): output tensor %d ('%s') has dims [%s] but the op produced [%s]",
                    c->step, c->op->name, c->desc->steps[c->step].args[out], onnxc_host_arg_name(c, out), got, exp);
}

bool onnxc_host_const_arg(const onnxc_host_check *c, int32_t i, int64_t *value) {
  int32_t a = c->desc->steps[c->step].args[i];
  return a < 0 && onnxc_expr_is_const(c->exprs, (uint32_t)(-(int64_t)a - 1), value);
}
