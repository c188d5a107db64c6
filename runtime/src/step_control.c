/* The BRANCH and JUMP step kinds (an ONNX If): their load-time checks and their moves. */
#include "step_control.h"

#define FAIL(...) return onnxc_fail(ONNXC_ERR_LOAD_FAILED, __VA_ARGS__)

/* A control step: a forward target (past the step, at most the end), BRANCH's one bool condition tensor,
 * no binds, a host library. */
onnxc_status onnxc_validate_control(const onnxc_model_desc *d, const onnxc_expr_table *exprs, const char *m, uint32_t k) {
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


/* Goes on at the step's target, or falls through into the then-range when the condition holds. */
onnxc_status onnxc_run_branch(onnxc_session *s, const onnxc_plan *p, uint32_t k, int64_t prev, uint32_t *next) {
  (void)p, (void)prev;
  const onnxc_step *step = &s->model->desc->steps[k];
  int32_t cond = step->args[0];
  if (s->run_bytes[cond] == 0) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (branch) reads its condition " ONNXC_TENSOR_FMT ", which is empty", k,
                      cond, s->model->desc->tensors[cond].name);
  }
  if (!*(const uint8_t *)s->buffers[cond].host) *next = (uint32_t)step->kernel;
  return ONNXC_OK;
}

onnxc_status onnxc_run_jump(onnxc_session *s, const onnxc_plan *p, uint32_t k, int64_t prev, uint32_t *next) {
  (void)p, (void)prev;
  *next = (uint32_t)s->model->desc->steps[k].kernel;
  return ONNXC_OK;
}
