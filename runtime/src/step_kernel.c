/* The KERNEL step kind: a Halide kernel called with the step's argv, and for CUDA libraries the device
 * state a view shares with its root around the call. */
#include "step_kernel.h"

#include "kernel_errors.h"

#define FAIL(...) return onnxc_fail(ONNXC_ERR_LOAD_FAILED, __VA_ARGS__)

onnxc_status onnxc_validate_kernel(const onnxc_model_desc *d, const onnxc_expr_table *exprs, const char *m, uint32_t k) {
  const onnxc_step *s = &d->steps[k];
  if (s->kernel < 0 || (uint32_t)s->kernel >= d->n_kernels) FAIL("model '%s': step %u calls kernel %d, out of range (%u kernels)", m, k, s->kernel, d->n_kernels);
  if (s->n_binds != 0) FAIL("model '%s': kernel step %u binds %d symbols; only host steps bind", m, k, s->n_binds);
  return ONNXC_OK;
}

const char *onnxc_kernel_label(const onnxc_model_desc *d, uint32_t k) { return d->kernels[d->steps[k].kernel].name; }

/* A view and its root are one allocation: before a step the view takes the root's device handle and
 * dirty bits, after it the root takes back what the kernel did through the view. */
static void views_in(onnxc_session *s, const onnxc_step *step) {
  for (int32_t i = 0; i < step->n_args; i++) {
    int32_t t = step->args[i];
    if (t < 0 || s->model->root[t] == t) continue;
    halide_buffer_t *v = &s->buffers[t], *r = &s->buffers[s->model->root[t]];
    v->device = r->device;
    v->device_interface = r->device_interface;
    v->flags = r->flags;
  }
}

static bool is_arg(const onnxc_step *step, int32_t t) {
  for (int32_t i = 0; i < step->n_args; i++) {
    if (step->args[i] == t) return true;
  }
  return false;
}

static void views_out(onnxc_session *s, const onnxc_step *step, const onnxc_plan *p) {
  for (int32_t i = 0; i < step->n_args; i++) {
    int32_t t = step->args[i];
    if (t < 0 || s->model->root[t] == t) continue;
    int32_t root = s->model->root[t];
    halide_buffer_t *v = &s->buffers[t], *r = &s->buffers[root];
    if (!r->device && v->device) s->device_bytes[root] = p->bytes[root];
    if (!r->device) {
      r->device = v->device;
      r->device_interface = v->device_interface;
    }
    /* The root passed to the same step keeps its own bits too (a redundant copy later, never a stale one). */
    r->flags = is_arg(step, root) ? (r->flags | v->flags) : v->flags;
  }
}

onnxc_status onnxc_run_kernel(onnxc_session *s, const onnxc_plan *p, uint32_t k, int64_t prev, uint32_t *next) {
  (void)prev, (void)next;
  const onnxc_model *m = s->model;
  const onnxc_model_desc *d = m->desc;
  const onnxc_step *step = &d->steps[k];
  const onnxc_kernel_desc *kernel = &d->kernels[step->kernel];
  if (d->uses_cuda) views_in(s, step);
  onnxc_kernel_call_begin();
  int rc = kernel->fn(&s->args[m->arg_offset[k]]);
  const char *msg = onnxc_kernel_call_end();
  if (d->uses_cuda) views_out(s, step, p);
  if (rc != 0) {
    return onnxc_fail(ONNXC_ERR_KERNEL_FAILED, "step %u (kernel '%s') failed: Halide error %d (%s)%s%s", k, kernel->name,
                      rc, onnxc_halide_error_name(rc), *msg ? ": " : "", msg);
  }
  return ONNXC_OK;
}

