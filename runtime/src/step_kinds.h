/* The one table of step kinds (step_kinds.c), indexed by model_abi.h's ONNXC_STEP_*. */
#ifndef ONNXC_RUNTIME_STEP_KINDS_H
#define ONNXC_RUNTIME_STEP_KINDS_H

#include "step_kind.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const onnxc_step_kind_info onnxc_step_kinds[ONNXC_STEP_KIND_COUNT];

#ifdef __cplusplus
}
#endif

#endif
