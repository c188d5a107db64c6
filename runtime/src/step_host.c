/* The HOST step kind: load-time checks of a host step, and running one: describe its arguments to the
 * op, give it the services of host_op.h (binding symbols from data among them), keep its per-step state.
 *
 * Symbols bound from data (ABI v2 host steps): the cached plan covers everything whose shape input dims
 * decide, in the arena. A host step k computes its data dims (NonZero's count, ...) and binds them: the
 * symbols get their values, and every tensor whose dims become known at step k (model->tensor_step == k)
 * is evaluated then; the arena roots among them are placed in block k, one allocation per binding step
 * that the session keeps and grows (never shrinks) across runs, so outputs stay readable after the run
 * and a steady workload allocates nothing. Views and scalars that the new symbols decide are set too.
 * Simpler than re-planning the arena from step k on (the arena's earlier placements stay valid, nothing
 * moves); the cost is that tensors sized by data never share bytes with each other or with the arena. */
#include <stdlib.h>
#include <string.h>

#include "step_host.h"

#include "host_op.h"
#include "known_at.h"
#include "plan.h"

#define FAIL(...) return onnxc_fail(ONNXC_ERR_LOAD_FAILED, __VA_ARGS__)
#define ALIGN_UP(x) (((x) + ONNXC_ARENA_ALIGNMENT - 1) & ~(uint64_t)(ONNXC_ARENA_ALIGNMENT - 1))

void onnxc_free_blocks(onnxc_session *s) {
  for (uint32_t k = 0; s->blocks && k < s->model->desc->n_steps; k++) free(s->blocks[k]);
}

/* Block k holds at least `bytes` (contents dead: it is about to be rewritten). */
static onnxc_status reserve_block(onnxc_session *s, uint32_t k, uint64_t bytes) {
  if (bytes <= s->block_bytes[k] && s->blocks[k]) return ONNXC_OK;
  uint64_t rounded = ALIGN_UP(bytes ? bytes : 1);
  uint8_t *block = rounded <= SIZE_MAX ? aligned_alloc(ONNXC_ARENA_ALIGNMENT, (size_t)rounded) : NULL;
  if (!block) {
    return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "cannot allocate %llu bytes for the outputs of step %u",
                      (unsigned long long)rounded, k);
  }
  free(s->blocks[k]);
  s->blocks[k] = block;
  s->block_bytes[k] = rounded;
  return ONNXC_OK;
}

/* Tensors whose dims step k's symbols decide: dims, bytes, views, placement in block k. */
static onnxc_status place_step_tensors(onnxc_session *s, uint32_t k) {
  const onnxc_model *m = s->model;
  const onnxc_model_desc *d = m->desc;
  uint64_t total = 0;
  for (uint32_t t = 0; t < d->n_tensors; t++) {
    if (m->tensor_step[t] != (int32_t)k) continue;
    onnxc_status st = onnxc_eval_tensor(s, t, &s->run_dims[m->dim_offset[t]], &s->run_bytes[t]);
    if (st != ONNXC_OK) return st;
    onnxc_shape_buffer(s, t);
    if (m->root[t] == (int32_t)t && __builtin_add_overflow(total, ALIGN_UP(s->run_bytes[t]), &total)) {
      return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "the outputs of step %u are too large to address", k);
    }
  }
  onnxc_status st = reserve_block(s, k, total);
  if (st != ONNXC_OK) return st;
  uint64_t offset = 0;
  for (uint32_t t = 0; t < d->n_tensors; t++) {
    if (m->tensor_step[t] != (int32_t)k || m->root[t] != (int32_t)t) continue;
    s->buffers[t].host = s->blocks[k] + offset;
    offset += ALIGN_UP(s->run_bytes[t]);
  }
  for (uint32_t t = 0; t < d->n_tensors; t++) {
    int32_t r = m->root[t];
    int32_t known = m->tensor_step[t] > m->tensor_step[r] ? m->tensor_step[t] : m->tensor_step[r];
    if (r == (int32_t)t || known != (int32_t)k) continue;
    s->buffers[t].host = s->buffers[r].host;
    if (s->run_bytes[t] > s->run_bytes[r]) {
      return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "view " ONNXC_TENSOR_FMT " needs %llu bytes but its base " ONNXC_TENSOR_FMT " has %llu",
                        (int32_t)t, d->tensors[t].name, (unsigned long long)s->run_bytes[t], r, d->tensors[r].name,
                        (unsigned long long)s->run_bytes[r]);
    }
  }
  return ONNXC_OK;
}

/* Scalar arguments of later steps that step k's symbols decide. */
static onnxc_status eval_step_scalars(onnxc_session *s, uint32_t k) {
  const onnxc_model *m = s->model;
  const onnxc_model_desc *d = m->desc;
  char with[256];
  for (uint32_t j = k + 1; j < d->n_steps; j++) {
    for (int32_t i = 0; i < d->steps[j].n_args; i++) {
      int32_t arg = d->steps[j].args[i];
      if (arg >= 0) continue;
      uint32_t e = (uint32_t)(-(int64_t)arg - 1);
      if (onnxc_expr_step(&m->exprs, e, m->symbol_step) != (int32_t)k) continue;
      onnxc_expr_result r = onnxc_expr_eval(&m->exprs, e, s->symbols, &s->scalars[m->arg_offset[j] + (uint32_t)i]);
      if (r != ONNXC_EXPR_RESULT_OK) {
        return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u scalar arg %d = %s%s: %s", j, i, m->expr_text[e],
                          onnxc_symbol_values(s, with, sizeof with), onnxc_expr_result_string(r));
      }
    }
  }
  return ONNXC_OK;
}

/* Tensor argument `t` of the session as an op sees it. */
static onnxc_host_tensor host_tensor(const onnxc_session *s, int32_t t) {
  const onnxc_model *m = s->model;
  const onnxc_tensor_desc *td = &m->desc->tensors[t];
  size_t size = onnxc_dtype_size(td->dtype);
  onnxc_host_tensor r = {s->buffers[t].host, td->dtype, td->rank, &s->run_dims[m->dim_offset[t]],
                         size ? s->run_bytes[t] / size : 0, {0}};
  const halide_buffer_t *b = &s->buffers[t];
  for (int32_t i = 0; i < td->rank && i < ONNXC_HOST_MAX_STRIDED_RANK && b->dim; i++) r.stride[i] = b->dim[td->rank - 1 - i].stride;
  return r;
}

static void describe_args(onnxc_host_call *c) {
  onnxc_session *s = c->executor;
  const onnxc_model *m = s->model;
  const onnxc_step *step = &m->desc->steps[c->step];
  int n_tensors = 0, n_scalars = 0;
  for (int32_t i = 0; i < step->n_args; i++) {
    int32_t t = step->args[i];
    if (t < 0) {
      c->scalar[n_scalars++] = s->scalars[m->arg_offset[c->step] + (uint32_t)i];
      continue;
    }
    c->value[n_tensors] = &s->values[t];
    c->t[n_tensors++] = host_tensor(s, t);
  }
}

static onnxc_status bind(onnxc_host_call *c, const int64_t *values) {
  onnxc_session *s = c->executor;
  const onnxc_step *step = &s->model->desc->steps[c->step];
  for (int32_t i = 0; i < step->n_binds; i++) {
    if (values[i] < 0) {
      return onnxc_fail(ONNXC_ERR_INTERNAL, "step %u (%s) computed a negative size %lld", c->step, c->op->name, (long long)values[i]);
    }
    if (step->binds[i] >= 0) s->symbols[step->binds[i]] = values[i];
  }
  onnxc_status st = place_step_tensors(s, c->step);
  if (st == ONNXC_OK) st = eval_step_scalars(s, c->step);
  describe_args(c);
  return st;
}

static onnxc_host_tensor step_arg(const onnxc_host_call *c, uint32_t step, int32_t arg) {
  const onnxc_session *s = c->executor;
  return host_tensor(s, s->model->desc->steps[step].args[arg]);
}

static void *step_state(const onnxc_host_call *c, uint32_t step) {
  return ((const onnxc_session *)c->executor)->host_state[step];
}

static const onnxc_host_services kServices = {bind, step_arg, step_state};

onnxc_status onnxc_run_host(onnxc_session *s, const onnxc_plan *p, uint32_t k, int64_t prev, uint32_t *next) {
  (void)p, (void)prev, (void)next;
  const onnxc_model_desc *d = s->model->desc;
  onnxc_host_call c;
  memset(&c, 0, sizeof c);
  c.services = &kServices;
  c.executor = s;
  c.op = onnxc_host_op_lookup(d->steps[k].kernel);
  c.desc = d;
  c.step = k;
  c.state = s->host_state[k];
  describe_args(&c);
  return c.op->run(&c);
}

const char *onnxc_host_label(const onnxc_model_desc *d, uint32_t k) { return onnxc_host_op_lookup(d->steps[k].kernel)->name; }

int32_t onnxc_host_first_output(const onnxc_model_desc *d, uint32_t k) {
  return onnxc_host_op_lookup(d->steps[k].kernel)->n_inputs;
}

bool onnxc_host_takes_values(const onnxc_model_desc *d, uint32_t k) {
  const onnxc_host_op_info *op = onnxc_host_op_lookup(d->steps[k].kernel);
  return op && op->takes_values;
}

/* ---- per-step op state ---- */

bool onnxc_host_states_create(onnxc_session *s) {
  const onnxc_model_desc *d = s->model->desc;
  s->host_state = calloc((size_t)d->n_steps + 1, sizeof *s->host_state);
  if (!s->host_state) return false;
  for (uint32_t k = 0; k < d->n_steps; k++) {
    if (d->steps[k].kind != ONNXC_STEP_HOST) continue;
    size_t bytes = onnxc_host_op_lookup(d->steps[k].kernel)->state_bytes;
    if (bytes && !(s->host_state[k] = calloc(1, bytes))) return false;
  }
  return true;
}

void onnxc_host_states_reset(onnxc_session *s) {
  const onnxc_model_desc *d = s->model->desc;
  for (uint32_t k = 0; k < d->n_steps; k++) {
    if (!s->host_state[k]) continue;
    const onnxc_host_op_info *op = onnxc_host_op_lookup(d->steps[k].kernel);
    if (op->reset_state) op->reset_state(s->host_state[k]);
  }
}

void onnxc_host_states_free(onnxc_session *s) {
  const onnxc_model_desc *d = s->model->desc;
  for (uint32_t k = 0; s->host_state && k < d->n_steps; k++) {
    if (!s->host_state[k]) continue;
    const onnxc_host_op_info *op = onnxc_host_op_lookup(d->steps[k].kernel);
    if (op->free_state) op->free_state(s->host_state[k]);
    free(s->host_state[k]);
  }
  free(s->host_state);
  s->host_state = NULL;
}

/* ---- load time ---- */

static const char *tname(const onnxc_model_desc *d, int32_t t) { return d->tensors[t].name ? d->tensors[t].name : "?"; }

/* A host step: a known op, its fixed argument list (tensors, then scalars), its binds, outputs the arena
 * can hold (not inputs, weights or views but a cache chain's links; distinct from each other and from its inputs), and the
 * dtypes and ranks the op reads. */
onnxc_status onnxc_validate_host(const onnxc_model_desc *d, const onnxc_expr_table *exprs, const char *m, uint32_t k) {
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
    /* A stacked cache's chain links (kv_cache.c) write views of the chain's last output. */
    bool link = op->cache && d->tensors[t].kind == ONNXC_TENSOR_VIEW;
    if (!link && !onnxc_is_arena_kind(d->tensors[t].kind)) FAIL("model '%s': step %u (%s) writes " ONNXC_TENSOR_FMT ", which is not an intermediate or output tensor", m, k, op->name, t, tname(d, t));
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
  onnxc_host_check whole = {d, exprs, k};
  if (op->check_step && !op->check_step(&whole, why, sizeof why)) FAIL("model '%s': step %u (%s): %s", m, k, op->name, why);
  return ONNXC_OK;
}

