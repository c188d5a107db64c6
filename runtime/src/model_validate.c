/* Descriptor validation: everything the session later indexes or dereferences is checked here once, so
 * a corrupt or mismatched library is an error message, not a crash. */
#include <stdlib.h>
#include <string.h>

#include "model_validate.h"

#include "desc.h"
#include "dtype.h"
#include "error.h"
#include "known_at.h"
#include "loops_validate.h"
#include "weights.h"

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
  const uint64_t prefix = onnxc_weights_copy_size(d);
  if (td->weight_offset < prefix && td->weight_bytes > prefix - td->weight_offset) {
    FAIL("model '%s': " ONNXC_TENSOR_FMT " weight bytes [%llu, +%llu) straddle the end of the blob's copied prefix (%llu bytes)", m, t,
         tname(d, t), (unsigned long long)td->weight_offset, (unsigned long long)td->weight_bytes, (unsigned long long)prefix);
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

/* Every step: a known kind, args in range (sequences and optionals only where the kind takes them), then
 * the kind's own checks. */
static onnxc_status check_steps(const onnxc_model_desc *d, const onnxc_step_kind_info *kinds, const onnxc_expr_table *exprs,
                                const char *m) {
  if (d->n_kernels > 0 && !d->kernels) FAIL("model '%s': %u kernels but the kernel table is NULL", m, d->n_kernels);
  for (uint32_t k = 0; k < d->n_kernels; k++) {
    if (!d->kernels[k].name || !d->kernels[k].fn) FAIL("model '%s': kernel %u has no name or no function", m, k);
  }
  if (d->n_steps > 0 && !d->steps) FAIL("model '%s': %u steps but the step list is NULL", m, d->n_steps);
  for (uint32_t k = 0; k < d->n_steps; k++) {
    const onnxc_step *s = &d->steps[k];
    if (s->kind < 0 || s->kind >= ONNXC_STEP_KIND_COUNT) FAIL("model '%s': step %u has unknown kind %d", m, k, s->kind);
    if (s->n_args < 0 || (s->n_args > 0 && !s->args)) FAIL("model '%s': step %u has %d args and args %s", m, k, s->n_args, s->args ? "set" : "NULL");
    for (int32_t i = 0; i < s->n_args; i++) {
      int64_t a = s->args[i];
      if (a >= (int64_t)d->n_tensors) FAIL("model '%s': step %u arg %d is tensor %lld, out of range (%u tensors)", m, k, i, (long long)a, d->n_tensors);
      if (a < 0 && -a - 1 >= (int64_t)d->n_exprs) FAIL("model '%s': step %u arg %d is scalar expression %lld, out of range (%u expressions)", m, k, i, (long long)(-a - 1), d->n_exprs);
      /* Only value host ops know where a sequence's tensors are (value_store.h); a kernel would read nothing. */
      bool values = kinds[s->kind].takes_values && kinds[s->kind].takes_values(d, k);
      if (a >= 0 && d->tensors[a].value != ONNXC_VALUE_TENSOR && !values) FAIL("model '%s': step %u arg %d is " ONNXC_TENSOR_FMT ", a sequence or optional, which only value host ops take", m, k, i, (int32_t)a, tname(d, (int32_t)a));
    }
    onnxc_status st = kinds[s->kind].validate(d, exprs, m, k);
    if (st != ONNXC_OK) return st;
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
static onnxc_status check_data_binds(const onnxc_model_desc *d, const onnxc_step_kind_info *kinds, const onnxc_expr_table *table,
                                     const char *m, bool *bound) {
  int32_t skippable_until = -1; /* steps before this one may be skipped by a control step seen so far */
  for (uint32_t k = 0; k < d->n_steps; k++) {
    const onnxc_step *s = &d->steps[k];
    uint32_t traits = kinds[s->kind].traits;
    for (int32_t i = 0; (traits & ONNXC_STEP_BINDS) && i < s->n_binds; i++) {
      int32_t y = s->binds[i];
      if (y < 0) continue;
      if ((int32_t)k < skippable_until) FAIL("model '%s': step %u binds symbol '%s' inside a range a control step may skip", m, k, d->symbols[y]);
      if (bound[y]) FAIL("model '%s': symbol '%s' is bound twice (again by step %u)", m, d->symbols[y], k);
      bound[y] = true;
    }
    if ((traits & ONNXC_STEP_MOVES) && s->kernel > skippable_until) skippable_until = s->kernel;
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
static onnxc_status check_symbols_bound(const onnxc_model_desc *d, const onnxc_step_kind_info *kinds, const onnxc_expr_table *table,
                                        const char *m) {
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
  onnxc_status st = check_data_binds(d, kinds, table, m, bound);
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
static onnxc_status check_known_in_time(const onnxc_model_desc *d, const onnxc_step_kind_info *kinds, const onnxc_expr_table *table,
                                        const char *m) {
  size_t ns = (size_t)d->n_symbols + 1, nt = (size_t)d->n_tensors + 1;
  int32_t *symbol_step = calloc(ns, sizeof *symbol_step), *tensor_step = calloc(nt, sizeof *tensor_step);
  if (!symbol_step || !tensor_step) {
    free(symbol_step);
    free(tensor_step);
    return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "model '%s': out of memory while validating", m);
  }
  onnxc_symbol_steps(d, kinds, symbol_step);
  onnxc_tensor_steps(d, table, symbol_step, tensor_step);
  onnxc_status st = ONNXC_OK;
  for (uint32_t k = 0; k < d->n_steps && st == ONNXC_OK; k++) {
    const onnxc_step *s = &d->steps[k];
    const onnxc_step_kind_info *kind = &kinds[s->kind];
    int32_t first_out = (kind->traits & ONNXC_STEP_BINDS) ? kind->first_output(d, k) : s->n_args;
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

onnxc_status onnxc_validate_desc(const onnxc_model_desc *d, const onnxc_step_kind_info *kinds) {
  if (d->abi_version < ONNXC_ABI_VERSION_MIN || d->abi_version > ONNXC_ABI_VERSION) {
    return onnxc_fail(ONNXC_ERR_UNSUPPORTED, "model library has ABI version %u but this runtime reads versions %d to %d: recompile the model with a matching onnxc",
                      d->abi_version, ONNXC_ABI_VERSION_MIN, ONNXC_ABI_VERSION);
  }
  if (d->abi_version >= 8 && d->weights_copy_size > d->weights_size) {
    FAIL("model '%s': the weights blob's copied prefix (%llu bytes) is longer than the blob (%llu bytes)", d->name ? d->name : "?",
         (unsigned long long)d->weights_copy_size, (unsigned long long)d->weights_size);
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
  if (st == ONNXC_OK) st = check_steps(d, kinds, &table, m);
  if (st == ONNXC_OK) st = onnxc_check_loop_structure(d, kinds, m);
  if (st == ONNXC_OK) st = check_symbols_bound(d, kinds, &table, m);
  if (st == ONNXC_OK) st = check_known_in_time(d, kinds, &table, m);
  if (st == ONNXC_OK && d->uses_cuda && (!d->copy_to_host || !d->device_free || !d->device_malloc || !d->wrap_native ||
                                          !d->detach_native || !d->device_interface)) {
    st = onnxc_fail(ONNXC_ERR_LOAD_FAILED, "model '%s' uses CUDA but one of copy_to_host, device_free, device_malloc, "
                    "wrap_native, detach_native, device_interface is NULL", m);
  }
  return st;
}
