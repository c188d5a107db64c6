/* The KERNEL step kind (step_kernel.c): its entries in the step-kind table. */
#ifndef ONNXC_RUNTIME_STEP_KERNEL_H
#define ONNXC_RUNTIME_STEP_KERNEL_H

#include "session_state.h"

/* A kernel in range, no binds. */
onnxc_status onnxc_validate_kernel(const onnxc_model_desc *d, const onnxc_expr_table *exprs, const char *m, uint32_t k);
onnxc_status onnxc_run_kernel(onnxc_session *s, const onnxc_plan *p, uint32_t k, int64_t prev, uint32_t *next);
const char *onnxc_kernel_label(const onnxc_model_desc *d, uint32_t k);

#endif
