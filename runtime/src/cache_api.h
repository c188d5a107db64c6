/* cache_api.c: the API layer's side of the kept KV cache. */
#ifndef ONNXC_RUNTIME_CACHE_API_H
#define ONNXC_RUNTIME_CACHE_API_H

#include "session_state.h"

/* Before a run: each kept cache whose past input is not set becomes that input (no copy). */
onnxc_status onnxc_cache_feed_inputs(onnxc_session *s);

#endif
