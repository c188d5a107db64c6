/* The public face of the KV cache a session keeps (kv_cache.c): which inputs and outputs pair up, turning
 * the cache on, and feeding the previous present as the next past before a run (session.c calls it). */
#include "cache_api.h"

#include "kv_cache.h"
#include "plan.h"

#include <string.h>

size_t onnxc_model_num_cache_pairs(const onnxc_model *model) { return model ? onnxc_cache_pairs(model, NULL) : 0; }

onnxc_status onnxc_model_cache_pair(const onnxc_model *model, size_t pair, size_t *input_index, size_t *output_index) {
  if (input_index) *input_index = 0;
  if (output_index) *output_index = 0;
  if (!model || !input_index || !output_index) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_model_cache_pair: NULL argument");
  uint32_t n = onnxc_cache_pairs(model, NULL);
  if (pair >= n) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "cache pair %zu is out of range: model '%s' has %u", pair, model->desc->name, n);
  onnxc_cache_slot slots[n];
  onnxc_cache_pairs(model, slots);
  *input_index = (size_t)slots[pair].input;
  *output_index = (size_t)slots[pair].output;
  return ONNXC_OK;
}

onnxc_status onnxc_session_keep_cache(onnxc_session *s, int64_t capacity) {
  if (!s) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_session_keep_cache: session is NULL");
  if (capacity < 0) return onnxc_keep_error(s->error, onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_session_keep_cache: capacity %lld is negative", (long long)capacity));
  s->outputs = NULL; /* a kept output's bytes move: the last run's outputs are no longer readable */
  /* Plans place kept presents outside the arena: those made before place them inside. */
  for (uint32_t i = 0; i < s->options.max_cached_plans; i++) {
    onnxc_free_plan(s->plans[i]);
    s->plans[i] = NULL;
  }
  return onnxc_keep_error(s->error, onnxc_cache_enable(s, capacity));
}

static onnxc_status get_cache(onnxc_session *s, size_t index, onnxc_tensor *out, int64_t *capacity) {
  const onnxc_model *m = s->model;
  if (index >= m->desc->n_outputs) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "output index %zu is out of range", index);
  const onnxc_cache_slot *c = onnxc_cache_of_output(s, m->outputs[index].tensor);
  if (!c) return onnxc_fail(ONNXC_ERR_NOT_FOUND, "output '%s' is not kept in a KV cache", m->desc->tensors[m->outputs[index].tensor].name);
  if (!c->filled) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "the cache of output '%s' is empty: no run has filled it", m->desc->tensors[c->present].name);
  *out = (onnxc_tensor){m->desc->tensors[c->present].dtype, c->rank, c->dims, c->data};
  *capacity = c->own_capacity ? c->dims[c->axis] : s->cache_capacity;
  return ONNXC_OK;
}

onnxc_status onnxc_session_get_cache(onnxc_session *s, size_t output_index, onnxc_tensor *out, int64_t *capacity) {
  if (out) memset(out, 0, sizeof *out);
  if (capacity) *capacity = 0;
  if (!s || !out || !capacity) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_session_get_cache: NULL argument");
  return onnxc_keep_error(s->error, get_cache(s, output_index, out, capacity));
}

onnxc_status onnxc_cache_feed_inputs(onnxc_session *s) {
  for (uint32_t i = 0; i < s->n_cache; i++) {
    onnxc_cache_slot *c = &s->cache[i];
    if (!c->filled || s->bound[c->input]) continue;
    onnxc_tensor t = {s->model->desc->tensors[c->past].dtype, c->rank, c->dims, c->data};
    onnxc_status st = onnxc_session_set_input(s, (size_t)c->input, &t);
    if (st != ONNXC_OK) return st;
  }
  return ONNXC_OK;
}
