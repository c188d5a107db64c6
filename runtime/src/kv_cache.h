/* The KV cache a session keeps between runs (kv_cache.c): the executor places each cached present (and
 * a past read from it) in the cache's buffer; the API layer feeds the previous present as the next past. */
#ifndef ONNXC_RUNTIME_KV_CACHE_H
#define ONNXC_RUNTIME_KV_CACHE_H

#include "session_state.h"

/* The model's cache pairs (CACHE_APPEND steps from an input to an output, neither a view's base) into
 * out[] when non-NULL; returns how many there are. */
uint32_t onnxc_cache_pairs(const onnxc_model *m, onnxc_cache_slot *out);
/* Keeps a cache of `capacity` positions per pair from the next run on (0: none); forgets the old one. */
onnxc_status onnxc_cache_enable(onnxc_session *s, int64_t capacity);
void onnxc_cache_free(onnxc_session *s);
/* In a run, after the buffers point at their bytes: cached presents (and pasts read from the cache) in
 * the cache's buffers, with its strides. Fails when a present needs more than the capacity. */
onnxc_status onnxc_cache_place(onnxc_session *s);
/* After a successful run: each cache holds its present. */
void onnxc_cache_commit(onnxc_session *s);
/* The cache holding output tensor `tensor`, or NULL. */
const onnxc_cache_slot *onnxc_cache_of_output(const onnxc_session *s, int32_t tensor);

#endif
