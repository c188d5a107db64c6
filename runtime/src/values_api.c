/* The value C API: onnxc_session_set_input_value and onnxc_session_get_output_value, over the session's
 * value stores (value_store.h) and, for plain tensors, the tensor calls of bind.c and session.c. */
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "session_state.h"
#include "value_store.h"

static const char *kind_name(int32_t kind) {
  switch (kind) {
    case ONNXC_VALUE_TENSOR: return "a tensor";
    case ONNXC_VALUE_SEQUENCE: return "a sequence";
    case ONNXC_VALUE_OPTIONAL_TENSOR: return "an optional tensor";
    case ONNXC_VALUE_OPTIONAL_SEQUENCE: return "an optional sequence";
    default: return "an unknown kind";
  }
}

/* Copies the value's tensors into input i's store, checking each against the model's dtype. */
static onnxc_status set_value(onnxc_session *s, size_t i, const onnxc_value *x) {
  const onnxc_model_desc *d = s->model->desc;
  if (i >= d->n_inputs) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "input index %zu is out of range: model '%s' has %u inputs", i, d->name, d->n_inputs);
  int32_t t = d->inputs[i];
  const onnxc_tensor_desc *td = &d->tensors[t];
  if (!x) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "input '%s' (index %zu): value is NULL", td->name, i);
  if (x->kind != td->value) {
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "input '%s' (index %zu) is %s but the value given is %s", td->name, i,
                      kind_name(td->value), kind_name(x->kind));
  }
  if (td->value == ONNXC_VALUE_TENSOR) return onnxc_session_set_input(s, i, x->tensors);
  s->bound[i] = false;
  onnxc_value_store *v = &s->values[t];
  onnxc_value_clear(v);
  bool optional = td->value == ONNXC_VALUE_OPTIONAL_TENSOR || td->value == ONNXC_VALUE_OPTIONAL_SEQUENCE;
  size_t count = td->value == ONNXC_VALUE_OPTIONAL_TENSOR ? 1 : x->count;
  if (optional && !x->present) count = 0;
  if (count > UINT32_MAX) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "input '%s' (index %zu): %zu tensors is too many", td->name, i, count);
  if (count > 0 && !x->tensors) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "input '%s' (index %zu): tensors is NULL", td->name, i);
  for (size_t j = 0; j < count; j++) {
    const onnxc_tensor *e = &x->tensors[j];
    if (e->dtype != td->dtype) {
      return onnxc_fail(ONNXC_ERR_DTYPE_MISMATCH, "input '%s' (index %zu) tensor %zu: dtype is %s (%d) but the model expects %s (%d)",
                        td->name, i, j, onnxc_dtype_name(e->dtype), e->dtype, onnxc_dtype_name(td->dtype), td->dtype);
    }
    if (e->rank < 0 || (e->rank > 0 && !e->dims)) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "input '%s' (index %zu) tensor %zu: rank %d with dims %s", td->name, i, j, e->rank, e->dims ? "set" : "NULL");
    uint64_t bytes = onnxc_dtype_size(e->dtype);
    bool overflow = false;
    for (int32_t a = 0; a < e->rank; a++) {
      if (e->dims[a] < 0) return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "input '%s' (index %zu) tensor %zu: dim %d is %lld", td->name, i, j, a, (long long)e->dims[a]);
      overflow |= __builtin_mul_overflow(bytes, (uint64_t)e->dims[a], &bytes);
    }
    if (overflow) return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "input '%s' (index %zu) tensor %zu: the size overflows", td->name, i, j);
    if (bytes > 0 && !e->data) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "input '%s' (index %zu) tensor %zu: data is NULL", td->name, i, j);
    onnxc_status st = onnxc_value_insert(v, (uint32_t)j, e->dtype, e->rank, e->dims, e->data, bytes);
    if (st != ONNXC_OK) return st;
  }
  v->present = !optional || x->present;
  s->bound[i] = true;
  return ONNXC_OK;
}

onnxc_status onnxc_session_set_input_value(onnxc_session *s, size_t index, const onnxc_value *value) {
  if (!s) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_session_set_input_value: session is NULL");
  return onnxc_keep_error(s->error, set_value(s, index, value));
}

static onnxc_status get_value(onnxc_session *s, size_t i, onnxc_value *out) {
  const onnxc_model_desc *d = s->model->desc;
  if (i >= d->n_outputs) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "output index %zu is out of range: model '%s' has %u outputs", i, d->name, d->n_outputs);
  int32_t t = d->outputs[i];
  out->kind = d->tensors[t].value;
  out->present = 1;
  if (out->kind == ONNXC_VALUE_TENSOR) {
    out->count = 1;
    onnxc_value_store *v = &s->values[t];
    if (!v->views && !(v->views = malloc(sizeof *v->views))) return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "out of memory");
    onnxc_status st = onnxc_session_get_output(s, i, v->views);
    out->tensors = v->views;
    return st;
  }
  if (!s->outputs) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "output '%s' (index %zu) is not available: the last onnxc_session_run failed or none has run", d->tensors[t].name, i);
  onnxc_value_store *v = &s->values[t];
  free(v->views);
  v->views = calloc(v->count ? v->count : 1, sizeof *v->views);
  if (!v->views) return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "out of memory for output '%s'", d->tensors[t].name);
  for (uint32_t j = 0; j < v->count; j++) v->views[j] = (onnxc_tensor){v->items[j].dtype, v->items[j].rank, v->items[j].dims, v->items[j].data};
  out->present = v->present;
  out->count = v->count;
  out->tensors = v->views;
  return ONNXC_OK;
}

onnxc_status onnxc_session_get_output_value(onnxc_session *s, size_t index, onnxc_value *out) {
  if (out) memset(out, 0, sizeof *out);
  if (!s) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_session_get_output_value: session is NULL");
  if (!out) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_session_get_output_value: out is NULL");
  return onnxc_keep_error(s->error, get_value(s, index, out));
}
