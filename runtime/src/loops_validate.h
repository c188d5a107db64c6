/* Load-time checks of loops (ABI v4: an ONNX Loop or Scan): a LOOP or NEXT step's own fields, then the
 * whole plan's loop structure (pairs, nesting, jumps that enter or leave a body). */
#ifndef ONNXC_RUNTIME_LOOPS_VALIDATE_H
#define ONNXC_RUNTIME_LOOPS_VALIDATE_H

#include <stdint.h>

#include "onnxc/model_abi.h"
#include "onnxc/runtime.h"
#include "shape_expr.h"
#include "step_kind.h"

/* Step k, a LOOP or NEXT (the step-kind table's validate for both). */
onnxc_status onnxc_check_loop_step(const onnxc_model_desc *d, const onnxc_expr_table *exprs, const char *m, uint32_t k);
/* kinds: the step-kind table (which kinds move control forward, which repeat a range). */
onnxc_status onnxc_check_loop_structure(const onnxc_model_desc *d, const onnxc_step_kind_info *kinds, const char *m);

#endif
