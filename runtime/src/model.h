/* The loaded model: the descriptor plus what the runtime derives from it once (view roots, liveness,
 * rendered shape expressions, input/output info). Immutable after creation, shared by sessions. */
#ifndef ONNXC_RUNTIME_MODEL_H
#define ONNXC_RUNTIME_MODEL_H

#include <stdatomic.h>
#include <stdbool.h>

#include "desc.h"
#include "dtype.h"
#include "lifetimes.h"
#include "onnxc/runtime.h"
#include "shape_expr.h"
#include "step_kind.h"
#include "weights.h"

typedef struct onnxc_io_info {
  int32_t tensor;
  int64_t *dims;          /* rank: fixed size or -1 */
  const char **dim_names; /* rank: NULL for fixed dims, else expr_text of the dim (borrowed) */
} onnxc_io_info;

struct onnxc_model {
  atomic_int refs;
  const onnxc_model_desc *desc;
  const onnxc_step_kind_info *kinds; /* indexed by step kind (validated in range): step_kinds.c's table */
  void *library;              /* dlopen() handle, NULL for onnxc_model_from_desc */
  onnxc_expr_table exprs;
  char **expr_text;           /* n_exprs: each expression rendered for messages and dim_names */
  int32_t *root;              /* n_tensors: the tensor whose bytes this one uses (itself unless a view) */
  int32_t *first_use;         /* n_tensors: first step touching an arena root or a view of it; -1 */
  int32_t *last_use;          /* n_tensors: last such step; n_steps for graph outputs; -1 */
  uint32_t *dim_offset;       /* n_tensors + 1: prefix sums of ranks (flat per-tensor dim arrays) */
  uint32_t *arg_offset;       /* n_steps + 1: prefix sums of n_args (flat per-step argument arrays) */
  int32_t *symbol_step;       /* n_symbols: the host step that binds it from data; -1: an input dim */
  int32_t *tensor_step;       /* n_tensors: the step after which its dims are known; -1: before the run */
  onnxc_io_info *inputs;      /* n_inputs */
  onnxc_io_info *outputs;     /* n_outputs */
  bool large_buffers;         /* kernels built with Halide's large_buffers: no 2 GiB buffer limit */
  onnxc_weights weights;      /* the weights blob the kernels read (weights.h) */
};

/* Validates desc against the step kinds `kinds` (one per ONNXC_STEP_*) and derives the model's data;
 * `library` (may be NULL) is closed with the model, not on failure. */
onnxc_status onnxc_model_create(const onnxc_model_desc *desc, const onnxc_step_kind_info *kinds, void *library,
                                onnxc_model **out);

void onnxc_model_retain(onnxc_model *model);
/* Drops one reference (a session's); the last one destroys the model. */
void onnxc_model_release(onnxc_model *model);

#endif
