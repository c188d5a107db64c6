/* Shape expressions (RPN over int64, see enum onnxc_expr_op in model_abi.h): checking that one is well
 * formed, evaluating it with checked arithmetic, and rendering it as text for messages. Knows nothing of
 * tensors or sessions. */
#ifndef ONNXC_RUNTIME_SHAPE_EXPR_H
#define ONNXC_RUNTIME_SHAPE_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Expression i is code[start[i] .. start[i + 1]). */
typedef struct onnxc_expr_table {
  uint32_t n_exprs;
  const uint32_t *start; /* n_exprs + 1 entries */
  const int64_t *code;
  uint32_t n_symbols;
} onnxc_expr_table;

/* The evaluation stack is this deep; a deeper expression is rejected by onnxc_expr_check. */
#define ONNXC_EXPR_MAX_DEPTH 64

typedef enum onnxc_expr_result {
  ONNXC_EXPR_RESULT_OK = 0,
  ONNXC_EXPR_RESULT_OVERFLOW,         /* an intermediate value does not fit in int64 */
  ONNXC_EXPR_RESULT_DIVISION_BY_ZERO, /* FLOORDIV, CEILDIV or MOD by 0 */
  ONNXC_EXPR_RESULT_MALFORMED         /* never for an expression that passed onnxc_expr_check */
} onnxc_expr_result;

/* True if expression `id` is well formed: known opcodes, immediates present, symbol ids in range, no
 * stack underflow, depth <= ONNXC_EXPR_MAX_DEPTH, exactly one value left. Else writes why to why[cap].
 * Assumes start[] itself was checked (monotonic, within the code array). */
bool onnxc_expr_check(const onnxc_expr_table *table, uint32_t id, char *why, size_t cap);

/* Evaluates expression `id` with symbol values symbols[n_symbols]. Division floors, MOD takes the sign
 * of the divisor (floor modulo), as in Python/sympy. On error *out is left unchanged. */
onnxc_expr_result onnxc_expr_eval(const onnxc_expr_table *table, uint32_t id, const int64_t *symbols,
                                  int64_t *out);

/* "overflow", "division by zero", "malformed expression". */
const char *onnxc_expr_result_string(onnxc_expr_result result);

/* If expression `id` is one CONST, returns true and sets *value. */
bool onnxc_expr_is_const(const onnxc_expr_table *table, uint32_t id, int64_t *value);
/* If expression `id` is one SYM, returns true and sets *symbol. */
bool onnxc_expr_is_symbol(const onnxc_expr_table *table, uint32_t id, uint32_t *symbol);

/* Renders a checked expression as infix text ("batch * seq", "max(seq - 1, 0)", "floor(n / 2)") into a
 * new malloc()ed string the caller frees; NULL if out of memory. */
char *onnxc_expr_render(const onnxc_expr_table *table, const char *const *symbol_names, uint32_t id);

#ifdef __cplusplus
}
#endif

#endif
