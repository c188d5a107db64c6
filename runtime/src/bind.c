/* Binding inputs: check each tensor against the model's declared dtype and shape, and learn the symbol
 * values (batch, seq, ...) from the dims that are exactly a symbol. */
#include <string.h>

#include "dtype.h"
#include "session_state.h"

static const char *input_name(const onnxc_session *s, size_t i) {
  return s->model->desc->tensors[s->model->inputs[i].tensor].name;
}

/* Re-derives the symbol values from the bound inputs, skipping input `skip` (SIZE_MAX: none). The bound
 * inputs were checked against each other when bound, so the first binding of each symbol stands for all. */
static void collect_symbols(onnxc_session *s, size_t skip) {
  const onnxc_model *m = s->model;
  for (uint32_t y = 0; y < m->desc->n_symbols; y++) {
    s->symbols[y] = 0;
    s->symbol_input[y] = -1;
    s->symbol_axis[y] = -1;
  }
  for (uint32_t i = 0; i < m->desc->n_inputs; i++) {
    if (!s->bound[i] || i == skip) continue;
    int32_t t = m->inputs[i].tensor;
    const onnxc_tensor_desc *td = &m->desc->tensors[t];
    for (int32_t a = 0; a < td->rank; a++) {
      uint32_t y;
      if (onnxc_expr_is_symbol(&m->exprs, (uint32_t)td->dims[a], &y) && s->symbol_input[y] < 0) {
        s->symbols[y] = s->input_dims[m->dim_offset[t] + a];
        s->symbol_input[y] = (int32_t)i;
        s->symbol_axis[y] = a;
      }
    }
  }
}

/* Checks one dim of input i against the model: a fixed size, or a symbol's value bound by another input
 * or by an earlier axis of this one. Expressions of symbols are checked at run time. */
static onnxc_status check_dim(onnxc_session *s, size_t i, const onnxc_tensor *x, int32_t a) {
  const onnxc_model *m = s->model;
  const onnxc_tensor_desc *td = &m->desc->tensors[m->inputs[i].tensor];
  const char *name = input_name(s, i);
  int64_t got = x->dims[a], want;
  uint32_t y;
  if (got < 0) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "input '%s' (index %zu): dim %d is %lld; dims must be >= 0", name, i, a,
                      (long long)got);
  }
  if (onnxc_expr_is_const(&m->exprs, (uint32_t)td->dims[a], &want) && got != want) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "input '%s' (index %zu): dim %d is %lld but the model expects %lld", name,
                      i, a, (long long)got, (long long)want);
  }
  if (!onnxc_expr_is_symbol(&m->exprs, (uint32_t)td->dims[a], &y)) return ONNXC_OK;
  const char *symbol = m->desc->symbols[y];
  if (s->symbol_input[y] >= 0 && s->symbols[y] != got) {
    size_t j = (size_t)s->symbol_input[y];
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH,
                      "input '%s' (index %zu): dim %d is %lld but symbol '%s' is %lld, bound by input '%s' (index %zu) dim %d",
                      name, i, a, (long long)got, symbol, (long long)s->symbols[y], input_name(s, j), j, s->symbol_axis[y]);
  }
  for (int32_t b = 0; b < a; b++) { /* the same symbol twice in one input, e.g. [n, n] */
    uint32_t z;
    if (onnxc_expr_is_symbol(&m->exprs, (uint32_t)td->dims[b], &z) && z == y && x->dims[b] != got) {
      return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "input '%s' (index %zu): dim %d is %lld but dim %d, also symbol '%s', is %lld",
                        name, i, a, (long long)got, b, symbol, (long long)x->dims[b]);
    }
  }
  return ONNXC_OK;
}

static onnxc_status check_input(onnxc_session *s, size_t i, const onnxc_tensor *x) {
  const onnxc_model *m = s->model;
  const onnxc_tensor_desc *td = &m->desc->tensors[m->inputs[i].tensor];
  const char *name = input_name(s, i);
  if (x->dtype != td->dtype) {
    return onnxc_fail(ONNXC_ERR_DTYPE_MISMATCH, "input '%s' (index %zu): dtype is %s (%d) but the model expects %s (%d)",
                      name, i, onnxc_dtype_name(x->dtype), x->dtype, onnxc_dtype_name(td->dtype), td->dtype);
  }
  if (x->rank != td->rank) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "input '%s' (index %zu): rank is %d but the model expects %d", name, i,
                      x->rank, td->rank);
  }
  if (x->rank > 0 && !x->dims) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "input '%s' (index %zu): dims is NULL", name, i);
  uint64_t elements = 1;
  bool overflow = false;
  for (int32_t a = 0; a < x->rank; a++) {
    onnxc_status st = check_dim(s, i, x, a);
    if (st != ONNXC_OK) return st;
    overflow |= __builtin_mul_overflow(elements, (uint64_t)x->dims[a], &elements);
  }
  if (overflow) return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "input '%s' (index %zu): the element count overflows", name, i);
  if (elements > 0 && !x->data) {
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "input '%s' (index %zu): data is NULL but the tensor has %llu elements",
                      name, i, (unsigned long long)elements);
  }
  return ONNXC_OK;
}

onnxc_status onnxc_bind_input(onnxc_session *s, size_t i, const onnxc_tensor *x, bool on_device) {
  size_t n = s->model->desc->n_inputs;
  if (i >= n) {
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "input index %zu is out of range: model '%s' has %zu input%s", i,
                      s->model->desc->name, n, n == 1 ? "" : "s");
  }
  if (!x) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "input '%s' (index %zu): tensor is NULL", input_name(s, i), i);
  if (s->model->desc->tensors[s->model->inputs[i].tensor].value != ONNXC_VALUE_TENSOR) {
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "input '%s' (index %zu) is a sequence or optional: set it with onnxc_session_set_input_value",
                      input_name(s, i), i);
  }
  collect_symbols(s, i); /* as if input i were not bound: setting it again replaces it */
  s->bound[i] = false;
  onnxc_status st = check_input(s, i, x);
  if (st != ONNXC_OK) return st;
  int32_t t = s->model->inputs[i].tensor;
  /* A scalar may come with dims NULL: memcpy from NULL is undefined even for 0 bytes (UBSan). */
  if (x->rank > 0) memcpy(&s->input_dims[s->model->dim_offset[t]], x->dims, (size_t)x->rank * sizeof *x->dims);
  s->input_data[i] = x->data;
  s->input_on_device[i] = on_device;
  s->bound[i] = true;
  collect_symbols(s, SIZE_MAX);
  return ONNXC_OK;
}

onnxc_status onnxc_session_set_input(onnxc_session *s, size_t index, const onnxc_tensor *tensor) {
  if (!s) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_session_set_input: session is NULL");
  return onnxc_keep_error(s->error, onnxc_bind_input(s, index, tensor, false));
}

onnxc_status onnxc_session_set_input_by_name(onnxc_session *s, const char *name, const onnxc_tensor *tensor) {
  if (!s) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_session_set_input_by_name: session is NULL");
  size_t index;
  onnxc_status st = onnxc_model_input_index(s->model, name, &index);
  if (st == ONNXC_OK) st = onnxc_bind_input(s, index, tensor, false);
  return onnxc_keep_error(s->error, st);
}

void onnxc_unbind_inputs(onnxc_session *s) {
  for (uint32_t i = 0; i < s->model->desc->n_inputs; i++) {
    s->bound[i] = false;
    s->input_data[i] = NULL;
    s->input_on_device[i] = false;
  }
  collect_symbols(s, SIZE_MAX);
}

onnxc_status onnxc_check_bound_inputs(onnxc_session *s) {
  const onnxc_model *m = s->model;
  for (uint32_t i = 0; i < m->desc->n_inputs; i++) {
    if (!s->bound[i]) {
      return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT,
                        "input '%s' (index %u) is not set: set every input before each onnxc_session_run", input_name(s, i), i);
    }
  }
  for (uint32_t i = 0; i < m->desc->n_inputs; i++) { /* dims that are expressions of symbols, e.g. seq + 1 */
    int32_t t = m->inputs[i].tensor;
    const onnxc_tensor_desc *td = &m->desc->tensors[t];
    for (int32_t a = 0; a < td->rank; a++) {
      uint32_t e = (uint32_t)td->dims[a], y;
      int64_t want, got = s->input_dims[m->dim_offset[t] + a];
      if (onnxc_expr_is_const(&m->exprs, e, &want) || onnxc_expr_is_symbol(&m->exprs, e, &y)) continue;
      onnxc_expr_result r = onnxc_expr_eval(&m->exprs, e, s->symbols, &want);
      if (r != ONNXC_EXPR_RESULT_OK) {
        return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "input '%s' (index %u): dim %d = %s: %s", input_name(s, i), i, a,
                          m->expr_text[e], onnxc_expr_result_string(r));
      }
      if (got != want) {
        return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "input '%s' (index %u): dim %d is %lld but the model expects %s = %lld",
                          input_name(s, i), i, a, (long long)got, m->expr_text[e], (long long)want);
      }
    }
  }
  return ONNXC_OK;
}
