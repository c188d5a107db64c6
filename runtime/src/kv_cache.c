/* The KV cache a session keeps (onnxc_session_keep_cache): for each host step whose op's table entry
 * names cache args (CacheAppend, CacheScatter: host_op.h's onnxc_host_cache_args), whose past is a model
 * input and whose present is a model output (and neither is a view's base, but for the links of a
 * stacked cache's chain, views of present shaped like it that read the input through each other), one buffer with `capacity`
 * positions along the step's axis (own_capacity: the model's own cache length). present lives there,
 * laid out with that capacity (its strides are not dense), and a run that reads the previous present as
 * its past gets the same buffer with the same strides: the step then finds past's rows in place and
 * writes only the new ones, and the kernels reading the cache were built for its strides (codegen marks
 * them). */
#include <stdlib.h>
#include <string.h>

#include "kv_cache.h"

#include "host_op.h"

#include "onnxc/model_abi.h"

void onnxc_cache_free(onnxc_session *s) {
  for (uint32_t i = 0; i < s->n_cache; i++) free(s->cache[i].data);
  free(s->cache);
  s->cache = NULL;
  s->n_cache = 0;
  s->cache_capacity = 0;
}

static int32_t input_index(const onnxc_model *m, int32_t t) {
  for (uint32_t i = 0; i < m->desc->n_inputs; i++)
    if (m->inputs[i].tensor == t) return (int32_t)i;
  return -1;
}

static int32_t output_index(const onnxc_model *m, int32_t t) {
  for (uint32_t i = 0; i < m->desc->n_outputs; i++)
    if (m->outputs[i].tensor == t) return (int32_t)i;
  return -1;
}

static uint32_t n_views(const onnxc_model *m, int32_t t) {
  uint32_t n = 0;
  for (uint32_t u = 0; u < m->desc->n_tensors; u++)
    if ((int32_t)u != t && m->root[u] == t) n++;
  return n;
}

/* The cache args of step k, or NULL when it is no cache step. */
static const onnxc_host_cache_args *cache_args(const onnxc_model_desc *d, uint32_t k) {
  const onnxc_step *step = &d->steps[k];
  if (step->kind != ONNXC_STEP_HOST) return NULL;
  const onnxc_host_op_info *op = onnxc_host_op_lookup(step->kernel);
  if (!op || !op->cache || step->n_args != op->n_inputs + op->n_outputs + op->n_scalars) return NULL;
  return op->cache;
}

/* The cache step whose present is tensor t, or -1. */
static int32_t step_writing(const onnxc_model_desc *d, int32_t t) {
  for (uint32_t k = 0; k < d->n_steps; k++) {
    const onnxc_host_cache_args *ca = cache_args(d, k);
    if (ca && d->steps[k].args[ca->present] == t) return (int32_t)k;
  }
  return -1;
}

uint32_t onnxc_cache_pairs(const onnxc_model *m, onnxc_cache_slot *out) {
  const onnxc_model_desc *d = m->desc;
  uint32_t n = 0;
  for (uint32_t k = 0; k < d->n_steps; k++) {
    const onnxc_host_cache_args *ca = cache_args(d, k);
    if (!ca) continue;
    const onnxc_step *step = &d->steps[k];
    int32_t past = step->args[ca->past], present = step->args[ca->present], axis_arg = step->args[ca->axis];
    /* A stacked cache's chain (passes/stacked_kv_cache): each link's present is a view of the last one's,
     * and the first link reads the model input. */
    uint32_t links = 0;
    while (input_index(m, past) < 0 && m->root[past] == present) {
      int32_t w = step_writing(d, past);
      if (w < 0) break;
      past = d->steps[w].args[cache_args(d, (uint32_t)w)->past];
      links++;
    }
    int32_t in = input_index(m, past), outi = output_index(m, present);
    if (in < 0 || outi < 0 || n_views(m, past) || n_views(m, present) != links || m->root[present] != present || axis_arg >= 0) continue;
    int64_t axis = 0;
    if (onnxc_expr_eval(&m->exprs, (uint32_t)(-(int64_t)axis_arg - 1), NULL, &axis) != ONNXC_EXPR_RESULT_OK) continue;
    if (out) out[n] = (onnxc_cache_slot){k, past, present, in, outi, (int32_t)axis, ca->own_capacity, NULL, 0, {0}, d->tensors[present].rank, false, false};
    n++;
  }
  return n;
}

onnxc_status onnxc_cache_enable(onnxc_session *s, int64_t capacity) {
  onnxc_cache_free(s);
  if (capacity <= 0) return ONNXC_OK;
  uint32_t n = onnxc_cache_pairs(s->model, NULL);
  if (n == 0) return ONNXC_OK;
  s->cache = calloc(n, sizeof *s->cache);
  if (!s->cache) return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "out of memory keeping a KV cache");
  s->n_cache = onnxc_cache_pairs(s->model, s->cache);
  s->cache_capacity = capacity;
  return ONNXC_OK;
}

/* Halide strides of tensor t laid out with `capacity` positions along `axis` (dims in ONNX order). */
static void lay_out(onnxc_session *s, int32_t t, const int64_t *dims, int32_t rank, int32_t axis, int64_t capacity,
                    uint8_t *data) {
  halide_buffer_t *b = &s->buffers[t];
  int64_t stride = 1;
  for (int32_t i = 0; i < rank; i++) {
    int32_t a = rank - 1 - i;
    b->dim[i].stride = (int32_t)stride;
    stride *= a == axis ? capacity : dims[a];
  }
  b->host = data;
}

onnxc_status onnxc_cache_place(onnxc_session *s) {
  const onnxc_model *m = s->model;
  for (uint32_t i = 0; i < s->n_cache; i++) {
    onnxc_cache_slot *c = &s->cache[i];
    const int64_t *dims = &s->run_dims[m->dim_offset[c->present]];
    /* A scatter cache's length is the model's own (present is shaped like past): dense, no capacity. */
    int64_t capacity = c->own_capacity ? dims[c->axis] : s->cache_capacity;
    if (dims[c->axis] > capacity) {
      return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "output '%s' needs %lld positions but the session keeps a cache of %lld (onnxc_session_keep_cache)",
                        m->desc->tensors[c->present].name, (long long)dims[c->axis], (long long)s->cache_capacity);
    }
    uint64_t bytes = onnxc_dtype_size(m->desc->tensors[c->present].dtype);
    for (int32_t a = 0; a < c->rank; a++) bytes *= (uint64_t)(a == c->axis ? capacity : dims[a]);
    if (bytes > INT32_MAX && !m->large_buffers) {
      return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "the cache for output '%s' would take %llu bytes: too large for 32-bit strides",
                        m->desc->tensors[c->present].name, (unsigned long long)bytes);
    }
    c->fed = c->data && s->input_data[c->input] == c->data;
    if (!c->fed && (!c->data || c->bytes < bytes)) {  /* nothing of the old cache is read this run */
      free(c->data);
      c->data = aligned_alloc(64, (size_t)((bytes + 63) & ~(uint64_t)63));
      c->bytes = c->data ? bytes : 0;
      if (!c->data) return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "cannot allocate %llu bytes for the cache of '%s'", (unsigned long long)bytes, m->desc->tensors[c->present].name);
    }
    lay_out(s, c->present, dims, c->rank, c->axis, capacity, c->data);
    for (uint32_t u = 0; u < m->desc->n_tensors; u++) /* a stacked chain's links: present's dims and buffer */
      if ((int32_t)u != c->present && m->root[u] == c->present) lay_out(s, (int32_t)u, dims, c->rank, c->axis, capacity, c->data);
    if (c->fed) lay_out(s, c->past, &s->run_dims[m->dim_offset[c->past]], c->rank, c->axis, capacity, c->data);
  }
  return ONNXC_OK;
}

void onnxc_cache_commit(onnxc_session *s) {
  const onnxc_model *m = s->model;
  for (uint32_t i = 0; i < s->n_cache; i++) {
    onnxc_cache_slot *c = &s->cache[i];
    memcpy(c->dims, &s->run_dims[m->dim_offset[c->present]], (size_t)c->rank * sizeof *c->dims);
    c->filled = true;
  }
}

const onnxc_cache_slot *onnxc_cache_of_output(const onnxc_session *s, int32_t tensor) {
  for (uint32_t i = 0; i < s->n_cache; i++)
    if (s->cache[i].present == tensor) return &s->cache[i];
  return NULL;
}
