/* Load-time validation of a descriptor (model_validate.c). */
#ifndef ONNXC_RUNTIME_MODEL_VALIDATE_H
#define ONNXC_RUNTIME_MODEL_VALIDATE_H

#include "onnxc/model_abi.h"
#include "onnxc/runtime.h"
#include "step_kind.h"

/* Checks every field of a descriptor that the runtime later trusts (counts, ids, expressions, view
 * chains, weight ranges, dtypes, symbol bindings), each step through its kind's validate in `kinds`. On
 * failure sets the last error and returns ONNXC_ERR_LOAD_FAILED or ONNXC_ERR_UNSUPPORTED. */
onnxc_status onnxc_validate_desc(const onnxc_model_desc *desc, const onnxc_step_kind_info *kinds);

#endif
