/* Shape expressions: check, evaluate (checked int64 arithmetic, floor division), render as text. */
#include "shape_expr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc/model_abi.h"

static bool has_immediate(int64_t op) { return op == ONNXC_EXPR_CONST || op == ONNXC_EXPR_SYM; }

/* Values an op pops; -1 for an unknown opcode. Each op pushes one value. */
static int operand_count(int64_t op) {
  switch (op) {
  case ONNXC_EXPR_CONST:
  case ONNXC_EXPR_SYM: return 0;
  case ONNXC_EXPR_NEG: return 1;
  case ONNXC_EXPR_ADD:
  case ONNXC_EXPR_SUB:
  case ONNXC_EXPR_MUL:
  case ONNXC_EXPR_FLOORDIV:
  case ONNXC_EXPR_CEILDIV:
  case ONNXC_EXPR_MOD:
  case ONNXC_EXPR_MIN:
  case ONNXC_EXPR_MAX: return 2;
  default: return -1;
  }
}

bool onnxc_expr_check(const onnxc_expr_table *t, uint32_t id, char *why, size_t cap) {
  uint32_t begin = t->start[id], end = t->start[id + 1];
  if (begin == end) {
    snprintf(why, cap, "is empty");
    return false;
  }
  int depth = 0;
  for (uint32_t pc = begin; pc < end; pc++) {
    int64_t op = t->code[pc];
    int pops = operand_count(op);
    if (pops < 0) {
      snprintf(why, cap, "has unknown opcode %lld at word %u", (long long)op, pc - begin);
      return false;
    }
    if (depth < pops) {
      snprintf(why, cap, "pops an empty stack at word %u", pc - begin);
      return false;
    }
    if (has_immediate(op)) {
      if (pc + 1 >= end) {
        snprintf(why, cap, "ends inside the immediate of word %u", pc - begin);
        return false;
      }
      int64_t imm = t->code[++pc];
      if (op == ONNXC_EXPR_SYM && (imm < 0 || imm >= (int64_t)t->n_symbols)) {
        snprintf(why, cap, "names symbol %lld but the model has %u", (long long)imm, t->n_symbols);
        return false;
      }
    }
    depth += 1 - pops;
    if (depth > ONNXC_EXPR_MAX_DEPTH) {
      snprintf(why, cap, "needs a stack deeper than %d", ONNXC_EXPR_MAX_DEPTH);
      return false;
    }
  }
  if (depth != 1) {
    snprintf(why, cap, "leaves %d values on the stack instead of 1", depth);
    return false;
  }
  return true;
}

static onnxc_expr_result floordiv(int64_t a, int64_t b, int64_t *out) {
  if (b == 0) return ONNXC_EXPR_RESULT_DIVISION_BY_ZERO;
  if (a == INT64_MIN && b == -1) return ONNXC_EXPR_RESULT_OVERFLOW;
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) q--;
  *out = q;
  return ONNXC_EXPR_RESULT_OK;
}

static onnxc_expr_result ceildiv(int64_t a, int64_t b, int64_t *out) {
  if (b == 0) return ONNXC_EXPR_RESULT_DIVISION_BY_ZERO;
  if (a == INT64_MIN && b == -1) return ONNXC_EXPR_RESULT_OVERFLOW;
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) == (b < 0))) q++;
  *out = q;
  return ONNXC_EXPR_RESULT_OK;
}

static onnxc_expr_result floormod(int64_t a, int64_t b, int64_t *out) {
  if (b == 0) return ONNXC_EXPR_RESULT_DIVISION_BY_ZERO;
  if (b == -1) { /* INT64_MIN % -1 is undefined in C; the answer is 0 for every a */
    *out = 0;
    return ONNXC_EXPR_RESULT_OK;
  }
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  *out = r;
  return ONNXC_EXPR_RESULT_OK;
}

static onnxc_expr_result apply(int64_t op, int64_t a, int64_t b, int64_t *out) {
  switch (op) {
  case ONNXC_EXPR_ADD: return __builtin_add_overflow(a, b, out) ? ONNXC_EXPR_RESULT_OVERFLOW : ONNXC_EXPR_RESULT_OK;
  case ONNXC_EXPR_SUB: return __builtin_sub_overflow(a, b, out) ? ONNXC_EXPR_RESULT_OVERFLOW : ONNXC_EXPR_RESULT_OK;
  case ONNXC_EXPR_MUL: return __builtin_mul_overflow(a, b, out) ? ONNXC_EXPR_RESULT_OVERFLOW : ONNXC_EXPR_RESULT_OK;
  case ONNXC_EXPR_FLOORDIV: return floordiv(a, b, out);
  case ONNXC_EXPR_CEILDIV: return ceildiv(a, b, out);
  case ONNXC_EXPR_MOD: return floormod(a, b, out);
  case ONNXC_EXPR_MIN: *out = a < b ? a : b; return ONNXC_EXPR_RESULT_OK;
  case ONNXC_EXPR_MAX: *out = a > b ? a : b; return ONNXC_EXPR_RESULT_OK;
  default: return ONNXC_EXPR_RESULT_MALFORMED;
  }
}

onnxc_expr_result onnxc_expr_eval(const onnxc_expr_table *t, uint32_t id, const int64_t *symbols,
                                  int64_t *out) {
  if (id >= t->n_exprs) return ONNXC_EXPR_RESULT_MALFORMED;
  int64_t stack[ONNXC_EXPR_MAX_DEPTH];
  int depth = 0;
  for (uint32_t pc = t->start[id], end = t->start[id + 1]; pc < end; pc++) {
    int64_t op = t->code[pc];
    int pops = operand_count(op);
    if (pops < 0 || depth < pops || (has_immediate(op) && pc + 1 >= end)) return ONNXC_EXPR_RESULT_MALFORMED;
    if (pops == 0 && depth == ONNXC_EXPR_MAX_DEPTH) return ONNXC_EXPR_RESULT_MALFORMED;
    if (op == ONNXC_EXPR_CONST) {
      stack[depth++] = t->code[++pc];
    } else if (op == ONNXC_EXPR_SYM) {
      int64_t s = t->code[++pc];
      if (s < 0 || s >= (int64_t)t->n_symbols) return ONNXC_EXPR_RESULT_MALFORMED;
      stack[depth++] = symbols[s];
    } else if (op == ONNXC_EXPR_NEG) {
      if (stack[depth - 1] == INT64_MIN) return ONNXC_EXPR_RESULT_OVERFLOW;
      stack[depth - 1] = -stack[depth - 1];
    } else {
      int64_t r;
      onnxc_expr_result res = apply(op, stack[depth - 2], stack[depth - 1], &r);
      if (res != ONNXC_EXPR_RESULT_OK) return res;
      stack[depth - 2] = r;
      depth--;
    }
  }
  if (depth != 1) return ONNXC_EXPR_RESULT_MALFORMED;
  *out = stack[0];
  return ONNXC_EXPR_RESULT_OK;
}

const char *onnxc_expr_result_string(onnxc_expr_result result) {
  switch (result) {
  case ONNXC_EXPR_RESULT_OK: return "ok";
  case ONNXC_EXPR_RESULT_OVERFLOW: return "int64 overflow";
  case ONNXC_EXPR_RESULT_DIVISION_BY_ZERO: return "division by zero";
  case ONNXC_EXPR_RESULT_MALFORMED: return "malformed expression";
  }
  return "unknown result";
}

bool onnxc_expr_is_const(const onnxc_expr_table *t, uint32_t id, int64_t *value) {
  uint32_t begin = t->start[id];
  if (t->start[id + 1] - begin != 2 || t->code[begin] != ONNXC_EXPR_CONST) return false;
  *value = t->code[begin + 1];
  return true;
}

bool onnxc_expr_is_symbol(const onnxc_expr_table *t, uint32_t id, uint32_t *symbol) {
  uint32_t begin = t->start[id];
  if (t->start[id + 1] - begin != 2 || t->code[begin] != ONNXC_EXPR_SYM) return false;
  *symbol = (uint32_t)t->code[begin + 1];
  return true;
}

/* Rendering keeps a stack of malloc()ed strings with the precedence of their top operator, and
 * parenthesizes an operand only when its precedence is lower than the context needs. */
enum { PREC_ADD = 1, PREC_MUL = 2, PREC_UNARY = 3, PREC_ATOM = 4 };

typedef struct rendered {
  char *text;
  int prec;
} rendered;

static char *format_alloc(const char *fmt, const char *a, const char *b) {
  int n = snprintf(NULL, 0, fmt, a, b);
  if (n < 0) return NULL;
  char *s = malloc((size_t)n + 1);
  if (s) snprintf(s, (size_t)n + 1, fmt, a, b);
  return s;
}

static char *parenthesize(const rendered *r, int need) {
  return r->prec >= need ? format_alloc("%s%s", r->text, "") : format_alloc("(%s)%s", r->text, "");
}

static rendered render_binary(int64_t op, const rendered *a, const rendered *b) {
  rendered out = {NULL, PREC_ATOM};
  const char *fn = op == ONNXC_EXPR_MIN ? "min" : op == ONNXC_EXPR_MAX ? "max" : op == ONNXC_EXPR_FLOORDIV ? "floor" : op == ONNXC_EXPR_CEILDIV ? "ceil" : NULL;
  if (op == ONNXC_EXPR_MIN || op == ONNXC_EXPR_MAX) {
    char *ab = format_alloc("%s, %s", a->text, b->text);
    if (ab) out.text = format_alloc("%s(%s)", fn, ab);
    free(ab);
    return out;
  }
  if (op == ONNXC_EXPR_FLOORDIV || op == ONNXC_EXPR_CEILDIV) { /* floor(a / b): a division inside */
    char *l = parenthesize(a, PREC_MUL), *r = parenthesize(b, PREC_MUL + 1);
    char *ab = l && r ? format_alloc("%s / %s", l, r) : NULL;
    if (ab) out.text = format_alloc("%s(%s)", fn, ab);
    free(l);
    free(r);
    free(ab);
    return out;
  }
  int prec = (op == ONNXC_EXPR_ADD || op == ONNXC_EXPR_SUB) ? PREC_ADD : PREC_MUL;
  /* Left operand binds at the same level; the right one needs more for the non-commutative - and %. */
  int right_need = (op == ONNXC_EXPR_SUB || op == ONNXC_EXPR_MOD) ? prec + 1 : prec;
  const char *sym = op == ONNXC_EXPR_ADD ? " + " : op == ONNXC_EXPR_SUB ? " - " : op == ONNXC_EXPR_MUL ? " * " : " % ";
  char *l = parenthesize(a, prec), *r = parenthesize(b, right_need);
  if (l && r) {
    char *lop = format_alloc("%s%s", l, sym);
    if (lop) out.text = format_alloc("%s%s", lop, r);
    free(lop);
  }
  free(l);
  free(r);
  out.prec = prec;
  return out;
}

char *onnxc_expr_render(const onnxc_expr_table *t, const char *const *symbol_names, uint32_t id) {
  rendered stack[ONNXC_EXPR_MAX_DEPTH];
  int depth = 0;
  bool ok = true;
  char number[32];
  for (uint32_t pc = t->start[id], end = t->start[id + 1]; ok && pc < end; pc++) {
    int64_t op = t->code[pc];
    rendered r = {NULL, PREC_ATOM};
    if (op == ONNXC_EXPR_CONST) {
      int64_t v = t->code[++pc];
      snprintf(number, sizeof number, "%lld", (long long)v);
      r.text = format_alloc("%s%s", number, "");
      r.prec = v < 0 ? PREC_UNARY : PREC_ATOM;
    } else if (op == ONNXC_EXPR_SYM) {
      r.text = format_alloc("%s%s", symbol_names[t->code[++pc]], "");
    } else if (op == ONNXC_EXPR_NEG) {
      char *inner = parenthesize(&stack[depth - 1], PREC_UNARY);
      if (inner) r.text = format_alloc("-%s%s", inner, "");
      r.prec = PREC_UNARY;
      free(inner);
      free(stack[--depth].text);
    } else {
      r = render_binary(op, &stack[depth - 2], &stack[depth - 1]);
      free(stack[--depth].text);
      free(stack[--depth].text);
    }
    ok = r.text != NULL;
    if (ok) stack[depth++] = r;
  }
  if (ok && depth == 1) return stack[0].text;
  while (depth > 0) free(stack[--depth].text);
  return NULL;
}
