/* Liveness of arena tensors over a model's steps, for the memory planner. */
#ifndef ONNXC_RUNTIME_LIFETIMES_H
#define ONNXC_RUNTIME_LIFETIMES_H

#include <stdint.h>

#include "onnxc/model_abi.h"
#include "step_kind.h"

#ifdef __cplusplus
extern "C" {
#endif

/* For every tensor that is an arena root (an INTERMEDIATE or OUTPUT that is not a view): the first and
 * last step touching it or any view of it; graph outputs (or their roots, for output views) live to
 * n_steps, past the last step. root[t] is the tensor whose bytes t uses (t itself unless a view).
 * A step whose kind REPEATS (a loop head) keeps what its range touches alive over the whole range.
 * Writes first_use/last_use for every tensor, -1 where it is not an arena root or never used. */
void onnxc_compute_lifetimes(const onnxc_model_desc *desc, const onnxc_step_kind_info *kinds, const int32_t *root,
                             int32_t *first_use, int32_t *last_use);

#ifdef __cplusplus
}
#endif

#endif
