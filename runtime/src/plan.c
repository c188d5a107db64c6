/* Shape plans: for one set of input-bound symbol values, every tensor's dims and bytes, the scalar
 * arguments and the arena offsets. Built on first sight of the values and cached. What uses symbols bound
 * from data is left to step_host.c. */
#include <stdlib.h>
#include <string.h>

#include "plan.h"

#include "kv_cache.h"

#include "dtype.h"
#include "known_at.h"
#include "memory_plan.h"

void onnxc_free_plan(onnxc_plan *plan) {
  if (!plan) return;
  free(plan->symbols);
  free(plan->dims);
  free(plan->bytes);
  free(plan->offset);
  free(plan->scalars);
  free(plan);
}

/* " (batch=2, seq=7)" for messages; "" for a model without symbols. */
const char *onnxc_symbol_values(const onnxc_session *s, char *buf, size_t cap) {
  const onnxc_model_desc *d = s->model->desc;
  size_t len = 0;
  buf[0] = '\0';
  for (uint32_t y = 0; y < d->n_symbols; y++) {
    onnxc_appendf(buf, cap, &len, "%s%s=%lld", y ? ", " : " (with ", d->symbols[y], (long long)s->symbols[y]);
  }
  if (d->n_symbols) onnxc_appendf(buf, cap, &len, ")");
  return buf;
}

/* Halide's dimension fields are int32: every extent and every dense stride must fit, and without the
 * large_buffers target feature so must the element count. */
static bool fits_halide(const int64_t *dims, int32_t rank, bool large_buffers, uint64_t *elements) {
  uint64_t stride = 1;
  for (int32_t a = rank - 1; a >= 0; a--) {
    if (stride > INT32_MAX || dims[a] > INT32_MAX) return false;
    stride *= (uint64_t)dims[a]; /* cannot overflow: both factors are below 2^31 */
  }
  *elements = stride;
  return stride <= (large_buffers ? (uint64_t)INT64_MAX : (uint64_t)INT32_MAX);
}

onnxc_status onnxc_eval_tensor(const onnxc_session *s, uint32_t t, int64_t *dims, uint64_t *bytes) {
  const onnxc_model *m = s->model;
  const onnxc_tensor_desc *td = &m->desc->tensors[t];
  char with[256];
  for (int32_t a = 0; a < td->rank; a++) {
    uint32_t e = (uint32_t)td->dims[a];
    onnxc_expr_result r = onnxc_expr_eval(&m->exprs, e, s->symbols, &dims[a]);
    if (r != ONNXC_EXPR_RESULT_OK || dims[a] < 0) {
      return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, ONNXC_TENSOR_FMT " dim %d = %s%s: %s", (int32_t)t, td->name, a,
                        m->expr_text[e], onnxc_symbol_values(s, with, sizeof with),
                        r != ONNXC_EXPR_RESULT_OK ? onnxc_expr_result_string(r) : "is negative");
    }
  }
  uint64_t elements = 0;
  if (!fits_halide(dims, td->rank, m->large_buffers, &elements) ||
      __builtin_mul_overflow(elements, onnxc_dtype_size(td->dtype), bytes)) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH,
                      ONNXC_TENSOR_FMT " is too large%s: Halide buffers need extents and strides below 2^31%s",
                      (int32_t)t, td->name, onnxc_symbol_values(s, with, sizeof with),
                      m->large_buffers ? "" : " and, without the large_buffers target feature, fewer than 2^31 elements");
  }
  return ONNXC_OK;
}

/* Dims and type of tensor t, dense row-major: Halide's dim 0 is the last ONNX axis. */
void onnxc_shape_buffer(onnxc_session *s, uint32_t t) {
  const onnxc_model *m = s->model;
  const onnxc_tensor_desc *td = &m->desc->tensors[t];
  const onnxc_dtype_info *info = onnxc_dtype_lookup(td->dtype);
  halide_buffer_t *b = &s->buffers[t];
  const int64_t *dims = &s->run_dims[m->dim_offset[t]];
  b->type.code = info->halide_code; /* a uint8_t field in C */
  b->type.bits = info->halide_bits;
  b->type.lanes = 1;
  b->dimensions = td->rank;
  b->dim = &s->dims[m->dim_offset[t]];
  int64_t stride = 1; /* plan.c checked every extent and stride fits in int32 */
  for (int32_t i = 0; i < td->rank; i++) {
    int64_t extent = dims[td->rank - 1 - i];
    b->dim[i] = (halide_dimension_t){0, (int32_t)extent, (int32_t)stride, 0};
    stride *= extent;
  }
}

/* Tensors sized by data get their dims when their step binds them (bytes 0 until then). */
static onnxc_status eval_dims(onnxc_session *s, onnxc_plan *p) {
  const onnxc_model *m = s->model;
  for (uint32_t t = 0; t < m->desc->n_tensors; t++) {
    p->bytes[t] = 0;
    if (m->tensor_step[t] >= 0) { /* empty until bound: dims 0 */
      memset(&p->dims[m->dim_offset[t]], 0, (size_t)m->desc->tensors[t].rank * sizeof *p->dims);
      continue;
    }
    onnxc_status st = onnxc_eval_tensor(s, t, &p->dims[m->dim_offset[t]], &p->bytes[t]);
    if (st != ONNXC_OK) return st;
  }
  return ONNXC_OK;
}

static onnxc_status check_views(const onnxc_session *s, const onnxc_plan *p) {
  const onnxc_model_desc *d = s->model->desc;
  for (uint32_t t = 0; t < d->n_tensors; t++) {
    int32_t r = s->model->root[t];
    if (s->model->tensor_step[t] >= 0 || s->model->tensor_step[r] >= 0) continue; /* checked when bound */
    if (p->bytes[t] > p->bytes[r]) {
      return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "view " ONNXC_TENSOR_FMT " needs %llu bytes but its base " ONNXC_TENSOR_FMT " has %llu",
                        (int32_t)t, d->tensors[t].name, (unsigned long long)p->bytes[t], r, d->tensors[r].name,
                        (unsigned long long)p->bytes[r]);
    }
  }
  return ONNXC_OK;
}

/* Scalar arguments that input dims determine (the others are evaluated when their symbols are bound). */
static onnxc_status eval_scalars(onnxc_session *s, onnxc_plan *p) {
  const onnxc_model *m = s->model;
  const onnxc_model_desc *d = m->desc;
  char with[256];
  for (uint32_t k = 0; k < d->n_steps; k++) {
    const onnxc_step *step = &d->steps[k];
    for (int32_t i = 0; i < step->n_args; i++) {
      int32_t arg = step->args[i];
      if (arg >= 0) continue;
      uint32_t e = (uint32_t)(-(int64_t)arg - 1);
      if (onnxc_expr_step(&m->exprs, e, m->symbol_step) >= 0) continue;
      onnxc_expr_result r = onnxc_expr_eval(&m->exprs, e, s->symbols, &p->scalars[m->arg_offset[k] + (uint32_t)i]);
      if (r != ONNXC_EXPR_RESULT_OK) {
        const onnxc_step_kind_info *kind = &m->kinds[step->kind];
        return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (%s '%s') scalar arg %d = %s%s: %s", k, kind->name, kind->label(d, k), i,
                          m->expr_text[e], onnxc_symbol_values(s, with, sizeof with), onnxc_expr_result_string(r));
      }
    }
  }
  return ONNXC_OK;
}

static onnxc_status place(onnxc_session *s, onnxc_plan *p) {
  const onnxc_model *m = s->model;
  uint32_t n = m->desc->n_tensors;
  onnxc_buffer_request *req = calloc(n ? n : 1, sizeof *req);
  if (!req) return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "out of memory planning the arena");
  for (uint32_t t = 0; t < n; t++) {
    /* Sequences and optionals live in the session's value stores (value_store.h), never in the arena. */
    /* A present the session keeps in its KV cache lives in the cache's buffer (kv_cache.c). */
    bool arena = m->root[t] == (int32_t)t && onnxc_is_arena_kind(m->desc->tensors[t].kind) && m->tensor_step[t] < 0 &&
                 m->desc->tensors[t].value == ONNXC_VALUE_TENSOR && !onnxc_cache_of_output(s, (int32_t)t);
    req[t] = (onnxc_buffer_request){arena ? p->bytes[t] : 0, arena ? m->first_use[t] : -1, arena ? m->last_use[t] : -1};
  }
  onnxc_status st = onnxc_plan_memory(req, n, ONNXC_ARENA_ALIGNMENT, p->offset, &p->arena_bytes);
  free(req);
  if (st == ONNXC_ERR_OUT_OF_MEMORY) return onnxc_fail(st, "out of memory planning the arena");
  if (st != ONNXC_OK) return onnxc_fail(st, "the arena for model '%s' is too large to address", m->desc->name);
  return ONNXC_OK;
}

static onnxc_status build(onnxc_session *s, onnxc_plan **out) {
  const onnxc_model *m = s->model;
  const onnxc_model_desc *d = m->desc;
  onnxc_plan *p = calloc(1, sizeof *p);
  if (!p) return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "out of memory building a plan");
  p->symbols = malloc(((size_t)d->n_symbols + 1) * sizeof *p->symbols);
  p->dims = malloc(((size_t)m->dim_offset[d->n_tensors] + 1) * sizeof *p->dims);
  p->bytes = malloc(((size_t)d->n_tensors + 1) * sizeof *p->bytes);
  p->offset = malloc(((size_t)d->n_tensors + 1) * sizeof *p->offset);
  p->scalars = calloc((size_t)m->arg_offset[d->n_steps] + 1, sizeof *p->scalars);
  onnxc_status st = ONNXC_OK;
  if (!p->symbols || !p->dims || !p->bytes || !p->offset || !p->scalars) {
    st = onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "out of memory building a plan");
  }
  if (st == ONNXC_OK) {
    memcpy(p->symbols, s->symbols, (size_t)d->n_symbols * sizeof *p->symbols);
    st = eval_dims(s, p);
  }
  if (st == ONNXC_OK) st = check_views(s, p);
  if (st == ONNXC_OK) st = eval_scalars(s, p);
  if (st == ONNXC_OK) st = place(s, p);
  if (st != ONNXC_OK) {
    onnxc_free_plan(p);
    return st;
  }
  *out = p;
  return ONNXC_OK;
}

onnxc_status onnxc_get_plan(onnxc_session *s, const onnxc_plan **out) {
  size_t key_bytes = (size_t)s->model->desc->n_symbols * sizeof *s->symbols;
  uint32_t slots = s->options.max_cached_plans, victim = 0;
  for (uint32_t i = 0; i < slots; i++) {
    onnxc_plan *p = s->plans[i];
    if (p && memcmp(p->symbols, s->symbols, key_bytes) == 0) {
      p->last_used = ++s->clock;
      *out = p;
      return ONNXC_OK;
    }
    if (!p || (s->plans[victim] && p->last_used < s->plans[victim]->last_used)) victim = i;
  }
  onnxc_plan *p = NULL;
  onnxc_status st = build(s, &p);
  if (st != ONNXC_OK) return st;
  onnxc_free_plan(s->plans[victim]);
  p->last_used = ++s->clock;
  s->plans[victim] = p;
  *out = p;
  return ONNXC_OK;
}
