/* The public face of the KV cache a session keeps (kv_cache.c): which inputs and outputs pair up, turning
 * the cache on, and feeding the previous present as the next past before a run (session.c calls it). */
#include "cache_api.h"

#include "kv_cache.h"

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
  return onnxc_keep_error(s->error, onnxc_cache_enable(s, capacity));
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
