/* The BRANCH and JUMP step kinds (step_control.c): their entries in the step-kind table. */
#ifndef ONNXC_RUNTIME_STEP_CONTROL_H
#define ONNXC_RUNTIME_STEP_CONTROL_H

#include "session_state.h"

/* A forward target (past the step, at most the end), BRANCH's one bool condition tensor, no binds, a
 * host library. */
onnxc_status onnxc_validate_control(const onnxc_model_desc *d, const onnxc_expr_table *exprs, const char *m, uint32_t k);
onnxc_status onnxc_run_branch(onnxc_session *s, const onnxc_plan *p, uint32_t k, int64_t prev, uint32_t *next);
onnxc_status onnxc_run_jump(onnxc_session *s, const onnxc_plan *p, uint32_t k, int64_t prev, uint32_t *next);

#endif
