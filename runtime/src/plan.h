/* Shape plans: for one set of input-bound symbol values, every tensor's dims and bytes, the scalar
 * arguments and the arena offsets, cached per session; and the evaluations the executor repeats when
 * host steps bind symbols from data. */
#ifndef ONNXC_RUNTIME_PLAN_H
#define ONNXC_RUNTIME_PLAN_H

#include "session_state.h"

/* The plan for the currently bound symbol values, from the cache or built now. */
onnxc_status onnxc_get_plan(onnxc_session *s, const onnxc_plan **out);
void onnxc_free_plan(onnxc_plan *plan);

/* Evaluates tensor t's dims with the current symbol values into dims[rank] and its dense size into
 * *bytes, checking they are non-negative and fit Halide's buffer fields. */
onnxc_status onnxc_eval_tensor(const onnxc_session *s, uint32_t t, int64_t *dims, uint64_t *bytes);
/* " (with batch=2, seq=7)" for messages; "" without symbols. */
const char *onnxc_symbol_values(const onnxc_session *s, char *buf, size_t cap);

/* Sets tensor t's halide_buffer_t type and dims from s->run_dims. */
void onnxc_shape_buffer(onnxc_session *s, uint32_t t);

#endif
