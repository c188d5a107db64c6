/* Symbols bound from data (ABI v2 host steps) during a run.
 *
 * Design: the cached plan covers everything whose shape input dims decide, in the arena, as before. A
 * host step k computes its data dims (NonZero's count, ...) and calls onnxc_host_bind: the symbols it
 * binds get their values, and every tensor whose dims become known at step k (model->tensor_step == k)
 * is evaluated then; the arena roots among them are placed in block k, one allocation per binding step
 * that the session keeps and grows (never shrinks) across runs, so outputs stay readable after the run
 * and a steady workload allocates nothing. Views and scalars that the new symbols decide are set too.
 * Simpler than re-planning the arena from step k on (the arena's earlier placements stay valid, nothing
 * moves); the cost is that tensors sized by data never share bytes with each other or with the arena. */
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "host_ops.h"
#include "known_at.h"
#include "session.h"

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

static void describe_args(onnxc_host_call *c) {
  const onnxc_model *m = c->session->model;
  const onnxc_step *step = &m->desc->steps[c->step];
  int n_tensors = 0, n_scalars = 0;
  for (int32_t i = 0; i < step->n_args; i++) {
    int32_t t = step->args[i];
    if (t < 0) {
      c->scalar[n_scalars++] = c->session->scalars[m->arg_offset[c->step] + (uint32_t)i];
      continue;
    }
    const onnxc_tensor_desc *td = &m->desc->tensors[t];
    size_t size = onnxc_dtype_size(td->dtype);
    c->t[n_tensors++] = (onnxc_host_tensor){c->session->buffers[t].host, td->dtype, td->rank,
                                            &c->session->run_dims[m->dim_offset[t]],
                                            size ? c->session->run_bytes[t] / size : 0};
  }
}

onnxc_status onnxc_host_bind(onnxc_host_call *c, const int64_t *values) {
  onnxc_session *s = c->session;
  const onnxc_step *step = &s->model->desc->steps[c->step];
  const char *op = onnxc_host_op_lookup(step->kernel)->name;
  for (int32_t i = 0; i < step->n_binds; i++) {
    if (values[i] < 0) {
      return onnxc_fail(ONNXC_ERR_INTERNAL, "step %u (%s) computed a negative size %lld", c->step, op, (long long)values[i]);
    }
    if (step->binds[i] >= 0) s->symbols[step->binds[i]] = values[i];
  }
  onnxc_status st = place_step_tensors(s, c->step);
  if (st == ONNXC_OK) st = eval_step_scalars(s, c->step);
  describe_args(c);
  return st;
}

onnxc_status onnxc_host_check_dims(const onnxc_host_call *c, int32_t out, const int64_t *want, int32_t rank) {
  const onnxc_host_tensor *t = &c->t[out];
  bool same = t->rank == rank;
  for (int32_t a = 0; same && a < rank; a++) same = t->dims[a] == want[a];
  if (same) return ONNXC_OK;
  const onnxc_model_desc *d = c->session->model->desc;
  int32_t id = d->steps[c->step].args[out];
  char got[256], exp[256];
  size_t gl = 0, el = 0;
  got[0] = exp[0] = '\0';
  for (int32_t a = 0; a < t->rank; a++) onnxc_appendf(got, sizeof got, &gl, "%s%lld", a ? ", " : "", (long long)t->dims[a]);
  for (int32_t a = 0; a < rank; a++) onnxc_appendf(exp, sizeof exp, &el, "%s%lld", a ? ", " : "", (long long)want[a]);
  return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (%s): output " ONNXC_TENSOR_FMT " has dims [%s] but the op produced [%s]",
                    c->step, onnxc_host_op_lookup(d->steps[c->step].kernel)->name, id, d->tensors[id].name, got, exp);
}

onnxc_status onnxc_run_host_step(onnxc_session *s, uint32_t k) {
  onnxc_host_call c;
  memset(&c, 0, sizeof c);
  c.session = s;
  c.step = k;
  describe_args(&c);
  return onnxc_host_op_lookup(s->model->desc->steps[k].kernel)->run(&c);
}
