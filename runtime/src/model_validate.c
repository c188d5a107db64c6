/* Descriptor validation: everything the session later indexes or dereferences is checked here once, so
 * a corrupt or mismatched library is an error message, not a crash. */
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "error.h"
#include "host_ops.h"
#include "known_at.h"
#include "loops.h"
#include "model.h"

#define FAIL(...) return onnxc_fail(ONNXC_ERR_LOAD_FAILED, __VA_ARGS__)

static const char *tname(const onnxc_model_desc *d, int32_t t) {
  return d->tensors[t].name ? d->tensors[t].name : "?";
}

static onnxc_status check_exprs(const onnxc_model_desc *d, const char *m, onnxc_expr_table *table) {
  if (d->n_exprs > 0 && (!d->expr_start || !d->expr_code)) FAIL("model '%s': expr_start or expr_code is NULL", m);
  if (d->n_exprs == 0) return ONNXC_OK;
  if (d->expr_start[0] != 0) FAIL("model '%s': expr_start[0] is %u, not 0", m, d->expr_start[0]);
  for (uint32_t i = 0; i < d->n_exprs; i++) {
    if (d->expr_start[i + 1] < d->expr_start[i]) FAIL("model '%s': expr_start is not increasing at %u", m, i + 1);
  }
  *table = (onnxc_expr_table){d->n_exprs, d->expr_start, d->expr_code, d->n_symbols};
  char why[160];
  for (uint32_t i = 0; i < d->n_exprs; i++) {
    if (!onnxc_expr_check(table, i, why, sizeof why)) FAIL("model '%s': shape expression %u %s", m, i, why);
  }
  return ONNXC_OK;
}

static onnxc_status check_expr_id(const onnxc_model_desc *d, const char *m, int32_t t, int32_t axis) {
  int32_t e = d->tensors[t].dims[axis];
  if (e < 0 || (uint32_t)e >= d->n_exprs) {
    FAIL("model '%s': " ONNXC_TENSOR_FMT " dim %d is expression %d, out of range (%u expressions)", m, t,
         tname(d, t), axis, e, d->n_exprs);
  }
  return ONNXC_OK;
}

static onnxc_status check_weight(const onnxc_model_desc *d, const onnxc_expr_table *table, const char *m, int32_t t) {
  const onnxc_tensor_desc *td = &d->tensors[t];
  /* An empty weight (an absent optional input's default, an empty initializer) needs no bytes. */
  if (!d->weights && td->weight_bytes > 0) FAIL("model '%s': " ONNXC_TENSOR_FMT " is a weight but the model has no weights blob", m, t, tname(d, t));
  if (td->weight_offset > d->weights_size || td->weight_bytes > d->weights_size - td->weight_offset) {
    FAIL("model '%s': " ONNXC_TENSOR_FMT " weight bytes [%llu, +%llu) lie outside the %llu-byte weights blob", m, t,
         tname(d, t), (unsigned long long)td->weight_offset, (unsigned long long)td->weight_bytes,
         (unsigned long long)d->weights_size);
  }
  uint64_t elements = 1;
  for (int32_t a = 0; a < td->rank; a++) {
    int64_t v;
    if (!onnxc_expr_is_const(table, (uint32_t)td->dims[a], &v) || v < 0) {
      FAIL("model '%s': weight " ONNXC_TENSOR_FMT " dim %d is not a non-negative constant", m, t, tname(d, t), a);
    }
    if (__builtin_mul_overflow(elements, (uint64_t)v, &elements)) FAIL("model '%s': weight " ONNXC_TENSOR_FMT " is too large", m, t, tname(d, t));
  }
  uint64_t bytes;
  if (__builtin_mul_overflow(elements, onnxc_dtype_size(td->dtype), &bytes) || bytes != td->weight_bytes) {
    FAIL("model '%s': weight " ONNXC_TENSOR_FMT " has %llu elements of %s but weight_bytes is %llu", m, t, tname(d, t),
         (unsigned long long)elements, onnxc_dtype_name(td->dtype), (unsigned long long)td->weight_bytes);
  }
  return ONNXC_OK;
}

static onnxc_status check_tensor(const onnxc_model_desc *d, const onnxc_expr_table *table, const char *m, int32_t t) {
  const onnxc_tensor_desc *td = &d->tensors[t];
  if (!td->name) FAIL("model '%s': tensor %d has no name", m, t);
  if (!onnxc_dtype_lookup(td->dtype)) {
    return onnxc_fail(ONNXC_ERR_UNSUPPORTED, "model '%s': " ONNXC_TENSOR_FMT " has dtype %d, which this runtime does not support",
                      m, t, td->name, td->dtype);
  }
  if (td->kind < ONNXC_TENSOR_INPUT || td->kind > ONNXC_TENSOR_VIEW) FAIL("model '%s': " ONNXC_TENSOR_FMT " has unknown kind %d", m, t, td->name, td->kind);
  if (td->rank < 0 || td->rank > ONNXC_MAX_RANK) FAIL("model '%s': " ONNXC_TENSOR_FMT " has rank %d (0..%d supported)", m, t, td->name, td->rank, ONNXC_MAX_RANK);
  if (td->rank > 0 && !td->dims) FAIL("model '%s': " ONNXC_TENSOR_FMT " has rank %d but dims is NULL", m, t, td->name, td->rank);
  for (int32_t a = 0; a < td->rank; a++) {
    onnxc_status s = check_expr_id(d, m, t, a);
    if (s != ONNXC_OK) return s;
  }
  bool is_view = td->kind == ONNXC_TENSOR_VIEW;
  if (is_view && (td->view_of < 0 || (uint32_t)td->view_of >= d->n_tensors || td->view_of == t)) {
    FAIL("model '%s': view " ONNXC_TENSOR_FMT " has view_of %d, not another tensor", m, t, td->name, td->view_of);
  }
  if (td->value < ONNXC_VALUE_TENSOR || td->value > ONNXC_VALUE_OPTIONAL_SEQUENCE) FAIL("model '%s': " ONNXC_TENSOR_FMT " has unknown value kind %d", m, t, td->name, td->value);
  if (td->value != ONNXC_VALUE_TENSOR && (td->rank != 0 || td->kind == ONNXC_TENSOR_WEIGHT || is_view)) {
    FAIL("model '%s': " ONNXC_TENSOR_FMT " is a sequence or optional, which must have rank 0 and be an input, output or intermediate", m, t, td->name);
  }
  /* A string tensor's elements point into storage the session reuses each run; a copied list would dangle. */
  if (td->value != ONNXC_VALUE_TENSOR && td->dtype == 8) {
    return onnxc_fail(ONNXC_ERR_UNSUPPORTED, "model '%s': " ONNXC_TENSOR_FMT " is a sequence or optional of strings, which this runtime does not support", m, t, td->name);
  }
  if (is_view && d->tensors[td->view_of].value != ONNXC_VALUE_TENSOR) FAIL("model '%s': view " ONNXC_TENSOR_FMT " is a view of a sequence or optional", m, t, td->name);
  if (!is_view && td->view_of != -1) FAIL("model '%s': " ONNXC_TENSOR_FMT " is not a view but has view_of %d (expected -1)", m, t, td->name, td->view_of);
  return td->kind == ONNXC_TENSOR_WEIGHT ? check_weight(d, table, m, t) : ONNXC_OK;
}

static onnxc_status check_view_chains(const onnxc_model_desc *d, const char *m) {
  for (uint32_t t = 0; t < d->n_tensors; t++) {
    int32_t r = (int32_t)t;
    for (uint32_t hops = 0; d->tensors[r].kind == ONNXC_TENSOR_VIEW; hops++) {
      if (hops > d->n_tensors) FAIL("model '%s': view " ONNXC_TENSOR_FMT " is part of a cycle of views", m, (int32_t)t, d->tensors[t].name);
      r = d->tensors[r].view_of;
    }
  }
  return ONNXC_OK;
}

static onnxc_status check_io(const onnxc_model_desc *d, const char *m, const char *what, uint32_t n,
                             const int32_t *ids) {
  if (n > 0 && !ids) FAIL("model '%s': %u %ss but the %s list is NULL", m, n, what, what);
  for (uint32_t i = 0; i < n; i++) {
    if (ids[i] < 0 || (uint32_t)ids[i] >= d->n_tensors) FAIL("model '%s': %s %u is tensor %d, out of range (%u tensors)", m, what, i, ids[i], d->n_tensors);
  }
  return ONNXC_OK;
}

/* Every INPUT tensor is listed exactly once in inputs[] and nothing else is. */
static onnxc_status check_inputs_listed(const onnxc_model_desc *d, const char *m) {
  for (uint32_t i = 0; i < d->n_inputs; i++) {
    int32_t t = d->inputs[i];
    if (d->tensors[t].kind != ONNXC_TENSOR_INPUT) FAIL("model '%s': input %u is " ONNXC_TENSOR_FMT ", whose kind is %d, not INPUT", m, i, t, d->tensors[t].name, d->tensors[t].kind);
    for (uint32_t j = 0; j < i; j++) {
      if (d->inputs[j] == t) FAIL("model '%s': " ONNXC_TENSOR_FMT " is listed as input %u and %u", m, t, d->tensors[t].name, j, i);
    }
  }
  for (uint32_t t = 0; t < d->n_tensors; t++) {
    if (d->tensors[t].kind != ONNXC_TENSOR_INPUT) continue;
    bool listed = false;
    for (uint32_t i = 0; i < d->n_inputs && !listed; i++) listed = d->inputs[i] == (int32_t)t;
    if (!listed) FAIL("model '%s': " ONNXC_TENSOR_FMT " is an INPUT but not in the inputs list", m, (int32_t)t, d->tensors[t].name);
  }
  return ONNXC_OK;
}

/* A host step: a known op, its fixed argument list (tensors, then scalars), its binds, outputs the arena
 * can hold (not inputs, weights or views; distinct from each other and from its inputs), and the
 * dtypes and ranks the op reads. */
static onnxc_status check_host_step(const onnxc_model_desc *d, const char *m, uint32_t k) {
  const onnxc_step *s = &d->steps[k];
  const onnxc_host_op_info *op = onnxc_host_op_lookup(s->kernel);
  if (!op) return onnxc_fail(ONNXC_ERR_UNSUPPORTED, "model '%s': step %u runs host op %d, which this runtime does not know", m, k, s->kernel);
  if (d->uses_cuda) return onnxc_fail(ONNXC_ERR_UNSUPPORTED, "model '%s': step %u runs host op %s, but host steps are not supported in CUDA libraries", m, k, op->name);
  int32_t n_tensors = op->n_inputs + op->n_outputs;
  if (s->n_args != n_tensors + op->n_scalars) FAIL("model '%s': step %u (%s) has %d args, not %d", m, k, op->name, s->n_args, n_tensors + op->n_scalars);
  for (int32_t i = 0; i < s->n_args; i++) {
    if ((s->args[i] >= 0) != (i < n_tensors)) FAIL("model '%s': step %u (%s) arg %d must be a %s", m, k, op->name, i, i < n_tensors ? "tensor" : "scalar");
  }
  for (int32_t i = op->n_inputs; i < n_tensors; i++) {
    int32_t t = s->args[i];
    if (!onnxc_is_arena_kind(d->tensors[t].kind)) FAIL("model '%s': step %u (%s) writes " ONNXC_TENSOR_FMT ", which is not an intermediate or output tensor", m, k, op->name, t, tname(d, t));
    for (int32_t j = 0; j < i; j++) {
      if (s->args[j] == t) FAIL("model '%s': step %u (%s) passes " ONNXC_TENSOR_FMT " twice, once as an output", m, k, op->name, t, tname(d, t));
    }
  }
  int32_t n_binds = op->n_binds >= 0 ? op->n_binds : d->tensors[s->args[op->n_inputs]].rank;
  if (s->n_binds != n_binds || (s->n_binds > 0 && !s->binds)) FAIL("model '%s': step %u (%s) has %d binds (list %s), not %d", m, k, op->name, s->n_binds, s->binds ? "set" : "NULL", n_binds);
  for (int32_t i = 0; i < s->n_binds; i++) {
    if (s->binds[i] < -1 || s->binds[i] >= (int64_t)d->n_symbols) FAIL("model '%s': step %u (%s) binds symbol %d, out of range (%u symbols)", m, k, op->name, s->binds[i], d->n_symbols);
  }
  char why[160];
  if (!op->check(d, s->args, why, sizeof why)) FAIL("model '%s': step %u (%s): %s", m, k, op->name, why);
  return ONNXC_OK;
}

/* A control step: a forward target (past the step, at most the end), BRANCH's one bool condition tensor,
 * no binds, a host library. */
static onnxc_status check_control_step(const onnxc_model_desc *d, const char *m, uint32_t k) {
  const onnxc_step *s = &d->steps[k];
  const char *kind = s->kind == ONNXC_STEP_BRANCH ? "branch" : "jump";
  if (d->uses_cuda) return onnxc_fail(ONNXC_ERR_UNSUPPORTED, "model '%s': step %u is a %s, but control steps are not supported in CUDA libraries", m, k, kind);
  if (s->kernel <= (int32_t)k || (uint32_t)s->kernel > d->n_steps) FAIL("model '%s': %s step %u goes to step %d; a target must lie after the step and at most at %u (the end)", m, kind, k, s->kernel, d->n_steps);
  if (s->n_binds != 0) FAIL("model '%s': %s step %u binds %d symbols; only host steps bind", m, kind, k, s->n_binds);
  int32_t n_args = s->kind == ONNXC_STEP_BRANCH ? 1 : 0;
  if (s->n_args != n_args) FAIL("model '%s': %s step %u has %d args, not %d", m, kind, k, s->n_args, n_args);
  if (n_args && (s->args[0] < 0 || d->tensors[s->args[0]].dtype != 9)) FAIL("model '%s': branch step %u's condition must be a bool tensor", m, k);
  return ONNXC_OK;
}

static onnxc_status check_steps(const onnxc_model_desc *d, const char *m) {
  if (d->n_kernels > 0 && !d->kernels) FAIL("model '%s': %u kernels but the kernel table is NULL", m, d->n_kernels);
  for (uint32_t k = 0; k < d->n_kernels; k++) {
    if (!d->kernels[k].name || !d->kernels[k].fn) FAIL("model '%s': kernel %u has no name or no function", m, k);
  }
  if (d->n_steps > 0 && !d->steps) FAIL("model '%s': %u steps but the step list is NULL", m, d->n_steps);
  for (uint32_t k = 0; k < d->n_steps; k++) {
    const onnxc_step *s = &d->steps[k];
    if (s->kind < ONNXC_STEP_KERNEL || s->kind > ONNXC_STEP_NEXT) FAIL("model '%s': step %u has unknown kind %d", m, k, s->kind);
    if (s->kind == ONNXC_STEP_KERNEL && (s->kernel < 0 || (uint32_t)s->kernel >= d->n_kernels)) FAIL("model '%s': step %u calls kernel %d, out of range (%u kernels)", m, k, s->kernel, d->n_kernels);
    if (s->kind == ONNXC_STEP_KERNEL && s->n_binds != 0) FAIL("model '%s': kernel step %u binds %d symbols; only host steps bind", m, k, s->n_binds);
    if (s->n_args < 0 || (s->n_args > 0 && !s->args)) FAIL("model '%s': step %u has %d args and args %s", m, k, s->n_args, s->args ? "set" : "NULL");
    for (int32_t i = 0; i < s->n_args; i++) {
      int64_t a = s->args[i];
      if (a >= (int64_t)d->n_tensors) FAIL("model '%s': step %u arg %d is tensor %lld, out of range (%u tensors)", m, k, i, (long long)a, d->n_tensors);
      if (a < 0 && -a - 1 >= (int64_t)d->n_exprs) FAIL("model '%s': step %u arg %d is scalar expression %lld, out of range (%u expressions)", m, k, i, (long long)(-a - 1), d->n_exprs);
      /* Only the value host ops know where a sequence's tensors are (values.c); a kernel would read nothing. */
      bool value_op = s->kind == ONNXC_STEP_HOST && onnxc_host_value_op_lookup(s->kernel);
      if (a >= 0 && d->tensors[a].value != ONNXC_VALUE_TENSOR && !value_op) FAIL("model '%s': step %u arg %d is " ONNXC_TENSOR_FMT ", a sequence or optional, which only value host ops take", m, k, i, (int32_t)a, tname(d, (int32_t)a));
    }
    if (s->kind != ONNXC_STEP_KERNEL) {
      onnxc_status st = s->kind == ONNXC_STEP_HOST ? check_host_step(d, m, k)
                        : s->kind >= ONNXC_STEP_LOOP ? onnxc_check_loop_step(d, m, k)
                                                     : check_control_step(d, m, k);
      if (st != ONNXC_OK) return st;
    }
    if (d->step_info) {
      int32_t f = d->step_info[k].flops;
      if (f < -1 || (f >= 0 && (uint32_t)f >= d->n_exprs)) FAIL("model '%s': step %u counts flops with expression %d, out of range (%u expressions)", m, k, f, d->n_exprs);
    }
  }
  return ONNXC_OK;
}

static void mark_symbols(const onnxc_expr_table *table, uint32_t e, bool *used) {
  for (uint32_t pc = table->start[e]; pc < table->start[e + 1]; pc++) {
    int64_t op = table->code[pc];
    if (op == ONNXC_EXPR_SYM) used[table->code[pc + 1]] = true;
    if (op == ONNXC_EXPR_SYM || op == ONNXC_EXPR_CONST) pc++;
  }
}

/* A symbol bound from data: by one host step only, outside every range a control step may skip (a
 * skipped step would leave it unbound for the steps after the ranges; a loop body may also run many
 * times), and no input dim uses it. */
static onnxc_status check_data_binds(const onnxc_model_desc *d, const onnxc_expr_table *table, const char *m, bool *bound) {
  int32_t skippable_until = -1; /* steps before this one may be skipped by a control step seen so far */
  for (uint32_t k = 0; k < d->n_steps; k++) {
    const onnxc_step *s = &d->steps[k];
    for (int32_t i = 0; s->kind == ONNXC_STEP_HOST && i < s->n_binds; i++) {
      int32_t y = s->binds[i];
      if (y < 0) continue;
      if ((int32_t)k < skippable_until) FAIL("model '%s': step %u binds symbol '%s' inside a range a control step may skip", m, k, d->symbols[y]);
      if (bound[y]) FAIL("model '%s': symbol '%s' is bound twice (again by step %u)", m, d->symbols[y], k);
      bound[y] = true;
    }
    bool control = s->kind == ONNXC_STEP_BRANCH || s->kind == ONNXC_STEP_JUMP || s->kind == ONNXC_STEP_LOOP;
    if (control && s->kernel > skippable_until) skippable_until = s->kernel;
  }
  bool *in_inputs = calloc((size_t)d->n_symbols + 1, sizeof *in_inputs);
  if (!in_inputs) return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "model '%s': out of memory while validating", m);
  for (uint32_t i = 0; i < d->n_inputs; i++) {
    const onnxc_tensor_desc *td = &d->tensors[d->inputs[i]];
    for (int32_t a = 0; a < td->rank; a++) mark_symbols(table, (uint32_t)td->dims[a], in_inputs);
  }
  int32_t clash = -1;
  for (uint32_t y = 0; y < d->n_symbols && clash < 0; y++) {
    if (bound[y] && in_inputs[y]) clash = (int32_t)y;
  }
  free(in_inputs);
  if (clash >= 0) FAIL("model '%s': symbol '%s' is bound from data by a host step but is also used by an input's dims", m, d->symbols[clash]);
  return ONNXC_OK;
}

/* Symbols get their values from input dims that are exactly that symbol, or from host steps; a symbol
 * used anywhere else with neither could never be known. */
static onnxc_status check_symbols_bound(const onnxc_model_desc *d, const onnxc_expr_table *table, const char *m) {
  if (d->n_symbols == 0) return ONNXC_OK;
  bool *used = calloc(d->n_symbols, sizeof *used), *bound = calloc(d->n_symbols, sizeof *bound);
  if (!used || !bound) {
    free(used);
    free(bound);
    return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "model '%s': out of memory while validating", m);
  }
  for (uint32_t t = 0; t < d->n_tensors; t++) {
    for (int32_t a = 0; a < d->tensors[t].rank; a++) mark_symbols(table, (uint32_t)d->tensors[t].dims[a], used);
  }
  for (uint32_t k = 0; k < d->n_steps; k++) {
    for (int32_t i = 0; i < d->steps[k].n_args; i++) {
      if (d->steps[k].args[i] < 0) mark_symbols(table, (uint32_t)(-(int64_t)d->steps[k].args[i] - 1), used);
    }
  }
  onnxc_status st = check_data_binds(d, table, m, bound);
  for (uint32_t i = 0; i < d->n_inputs; i++) {
    const onnxc_tensor_desc *td = &d->tensors[d->inputs[i]];
    uint32_t s;
    for (int32_t a = 0; a < td->rank; a++) {
      if (onnxc_expr_is_symbol(table, (uint32_t)td->dims[a], &s)) bound[s] = true;
    }
  }
  int32_t missing = -1;
  for (uint32_t s = 0; s < d->n_symbols && missing < 0; s++) {
    if (used[s] && !bound[s]) missing = (int32_t)s;
  }
  free(used);
  free(bound);
  if (st != ONNXC_OK) return st;
  if (missing >= 0) FAIL("model '%s': symbol '%s' is used but no input has a dim that is exactly it and no host step binds it, so it cannot be bound", m, d->symbols[missing]);
  return ONNXC_OK;
}

/* Nothing is used before the step that decides its shape: a step's tensors (and their roots' bytes) and
 * scalars are known before it runs, except a host step's outputs, which its own binds may decide. */
static onnxc_status check_known_in_time(const onnxc_model_desc *d, const onnxc_expr_table *table, const char *m) {
  size_t ns = (size_t)d->n_symbols + 1, nt = (size_t)d->n_tensors + 1;
  int32_t *symbol_step = calloc(ns, sizeof *symbol_step), *tensor_step = calloc(nt, sizeof *tensor_step);
  if (!symbol_step || !tensor_step) {
    free(symbol_step);
    free(tensor_step);
    return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "model '%s': out of memory while validating", m);
  }
  onnxc_symbol_steps(d, symbol_step);
  onnxc_tensor_steps(d, table, symbol_step, tensor_step);
  onnxc_status st = ONNXC_OK;
  for (uint32_t k = 0; k < d->n_steps && st == ONNXC_OK; k++) {
    const onnxc_step *s = &d->steps[k];
    int32_t first_out = s->kind == ONNXC_STEP_HOST ? onnxc_host_op_lookup(s->kernel)->n_inputs : s->n_args;
    for (int32_t i = 0; i < s->n_args && st == ONNXC_OK; i++) {
      int32_t a = s->args[i], known;
      if (a < 0) {
        known = onnxc_expr_step(table, (uint32_t)(-(int64_t)a - 1), symbol_step);
      } else {
        int32_t r = a;
        while (d->tensors[r].kind == ONNXC_TENSOR_VIEW) r = d->tensors[r].view_of;
        known = tensor_step[a] > tensor_step[r] ? tensor_step[a] : tensor_step[r];
      }
      bool own_output = a >= 0 && i >= first_out && known == (int32_t)k;
      if (known >= (int32_t)k && !own_output) {
        st = onnxc_fail(ONNXC_ERR_LOAD_FAILED, "model '%s': step %u arg %d uses a size that step %d binds from data, not before", m, k, i, known);
      }
    }
  }
  for (uint32_t t = 0; t < d->n_tensors && st == ONNXC_OK; t++) {
    int32_t kind = d->tensors[t].kind;
    if (tensor_step[t] >= 0 && (kind == ONNXC_TENSOR_INPUT || kind == ONNXC_TENSOR_WEIGHT)) {
      st = onnxc_fail(ONNXC_ERR_LOAD_FAILED, "model '%s': " ONNXC_TENSOR_FMT " is an input or weight sized by data", m, (int32_t)t, tname(d, (int32_t)t));
    }
  }
  free(symbol_step);
  free(tensor_step);
  return st;
}

onnxc_status onnxc_validate_desc(const onnxc_model_desc *d) {
  if (d->abi_version != ONNXC_ABI_VERSION) {
    return onnxc_fail(ONNXC_ERR_UNSUPPORTED, "model library has ABI version %u but this runtime reads version %d: recompile the model with a matching onnxc",
                      d->abi_version, ONNXC_ABI_VERSION);
  }
  if (!d->name) FAIL("model descriptor has no name");
  const char *m = d->name;
  if (d->n_symbols > 0 && !d->symbols) FAIL("model '%s': %u symbols but the symbol list is NULL", m, d->n_symbols);
  for (uint32_t s = 0; s < d->n_symbols; s++) {
    if (!d->symbols[s]) FAIL("model '%s': symbol %u has no name", m, s);
  }
  onnxc_expr_table table = {0, NULL, NULL, d->n_symbols};
  onnxc_status st = check_exprs(d, m, &table);
  if (st == ONNXC_OK && d->n_tensors > 0 && !d->tensors) st = onnxc_fail(ONNXC_ERR_LOAD_FAILED, "model '%s': %u tensors but the tensor table is NULL", m, d->n_tensors);
  if (st == ONNXC_OK && d->n_tensors > (uint32_t)INT32_MAX) st = onnxc_fail(ONNXC_ERR_LOAD_FAILED, "model '%s': %u tensors is too many", m, d->n_tensors);
  for (uint32_t t = 0; t < d->n_tensors && st == ONNXC_OK; t++) st = check_tensor(d, &table, m, (int32_t)t);
  if (st == ONNXC_OK) st = check_view_chains(d, m);
  if (st == ONNXC_OK) st = check_io(d, m, "input", d->n_inputs, d->inputs);
  if (st == ONNXC_OK) st = check_io(d, m, "output", d->n_outputs, d->outputs);
  if (st == ONNXC_OK) st = check_inputs_listed(d, m);
  if (st == ONNXC_OK) st = check_steps(d, m);
  if (st == ONNXC_OK) st = onnxc_check_loop_structure(d, &table, m);
  if (st == ONNXC_OK) st = check_symbols_bound(d, &table, m);
  if (st == ONNXC_OK) st = check_known_in_time(d, &table, m);
  if (st == ONNXC_OK && d->uses_cuda && (!d->copy_to_host || !d->device_free)) {
    st = onnxc_fail(ONNXC_ERR_LOAD_FAILED, "model '%s' uses CUDA but copy_to_host or device_free is NULL", m);
  }
  return st;
}
