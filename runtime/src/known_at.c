/* When symbols, tensor dims and scalars become known (see known_at.h). */
#include "known_at.h"

void onnxc_symbol_steps(const onnxc_model_desc *d, const onnxc_step_kind_info *kinds, int32_t *symbol_step) {
  for (uint32_t y = 0; y < d->n_symbols; y++) symbol_step[y] = -1;
  for (uint32_t k = 0; k < d->n_steps; k++) {
    const onnxc_step *s = &d->steps[k];
    if (!(kinds[s->kind].traits & ONNXC_STEP_BINDS)) continue;
    for (int32_t i = 0; i < s->n_binds; i++) {
      if (s->binds[i] >= 0) symbol_step[s->binds[i]] = (int32_t)k;
    }
  }
}

int32_t onnxc_expr_step(const onnxc_expr_table *table, uint32_t e, const int32_t *symbol_step) {
  int32_t step = -1;
  for (uint32_t pc = table->start[e]; pc < table->start[e + 1]; pc++) {
    int64_t op = table->code[pc];
    if (op == ONNXC_EXPR_SYM && symbol_step[table->code[pc + 1]] > step) step = symbol_step[table->code[pc + 1]];
    if (op == ONNXC_EXPR_SYM || op == ONNXC_EXPR_CONST) pc++;
  }
  return step;
}

void onnxc_tensor_steps(const onnxc_model_desc *d, const onnxc_expr_table *table, const int32_t *symbol_step,
                        int32_t *tensor_step) {
  for (uint32_t t = 0; t < d->n_tensors; t++) {
    int32_t step = -1;
    for (int32_t a = 0; a < d->tensors[t].rank; a++) {
      int32_t s = onnxc_expr_step(table, (uint32_t)d->tensors[t].dims[a], symbol_step);
      if (s > step) step = s;
    }
    tensor_step[t] = step;
  }
}
