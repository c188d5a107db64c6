/* When each value a plan uses becomes known: symbols are input dims (known before the run) or bound
 * from data by a host step; a tensor's dims and a scalar are known once the last symbol they use is. */
#ifndef ONNXC_RUNTIME_KNOWN_AT_H
#define ONNXC_RUNTIME_KNOWN_AT_H

#include <stdint.h>

#include "onnxc/model_abi.h"
#include "shape_expr.h"
#include "step_kind.h"

/* "Step" numbers below: -1 means before the run (input dims only); k means when step k binds it. */

/* symbol_step[n_symbols]: the step (of a kind that BINDS) whose binds list the symbol, else -1. Assumes
 * kinds and bind ids are in range (checked by validation first). */
void onnxc_symbol_steps(const onnxc_model_desc *desc, const onnxc_step_kind_info *kinds, int32_t *symbol_step);

/* The step after which checked expression `e` can be evaluated: the latest symbol_step it uses. */
int32_t onnxc_expr_step(const onnxc_expr_table *table, uint32_t e, const int32_t *symbol_step);

/* tensor_step[n_tensors]: the step after which every dim of the tensor is known. */
void onnxc_tensor_steps(const onnxc_model_desc *desc, const onnxc_expr_table *table, const int32_t *symbol_step,
                        int32_t *tensor_step);

#endif
