/* The HOST step kind (step_host.c): its entries in the step-kind table, the per-step op state the
 * session keeps, and the blocks holding tensors sized by data. */
#ifndef ONNXC_RUNTIME_STEP_HOST_H
#define ONNXC_RUNTIME_STEP_HOST_H

#include <stdbool.h>

#include "session_state.h"

onnxc_status onnxc_validate_host(const onnxc_model_desc *d, const onnxc_expr_table *exprs, const char *m, uint32_t k);
onnxc_status onnxc_run_host(onnxc_session *s, const onnxc_plan *p, uint32_t k, int64_t prev, uint32_t *next);
const char *onnxc_host_label(const onnxc_model_desc *d, uint32_t k);
int32_t onnxc_host_first_output(const onnxc_model_desc *d, uint32_t k);
bool onnxc_host_takes_values(const onnxc_model_desc *d, uint32_t k);

/* Each host step's state, sized by its op's table entry: allocated zeroed (false when out of memory),
 * reset before each run, freed with the session. */
bool onnxc_host_states_create(onnxc_session *s);
void onnxc_host_states_reset(onnxc_session *s);
void onnxc_host_states_free(onnxc_session *s);

/* Frees the blocks of tensors sized by data. */
void onnxc_free_blocks(onnxc_session *s);

#endif
