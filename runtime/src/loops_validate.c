/* Load-time checks of loops: every LOOP pairs with the NEXT just before its exit, loop ranges nest, no
 * forward jump enters or leaves a body (the scan host ops check their own scalars: host_scan.c). With these
 * the only backward move is a NEXT to its own LOOP, whose count the runtime keeps, so a library cannot
 * make the runtime loop more often than the trip counts and conditions it reads from data ask. */
#include <string.h>

#include "error.h"
#include "loops_validate.h"
#include "desc.h"

#define FAIL(...) return onnxc_fail(ONNXC_ERR_LOAD_FAILED, __VA_ARGS__)

static bool is_arena_int64(const onnxc_model_desc *d, int32_t t) {
  return t >= 0 && d->tensors[t].dtype == 7 && onnxc_is_arena_kind(d->tensors[t].kind);
}

onnxc_status onnxc_check_loop_step(const onnxc_model_desc *d, const onnxc_expr_table *exprs, const char *m, uint32_t k) {
  const onnxc_step *s = &d->steps[k];
  bool head = s->kind == ONNXC_STEP_LOOP;
  const char *kind = head ? "loop" : "next";
  if (d->uses_cuda) return onnxc_fail(ONNXC_ERR_UNSUPPORTED, "model '%s': step %u is a %s, but control steps are not supported in CUDA libraries", m, k, kind);
  if (s->n_binds != 0) FAIL("model '%s': %s step %u binds %d symbols; only host steps bind", m, kind, k, s->n_binds);
  if (s->n_args != (head ? 3 : 0)) FAIL("model '%s': %s step %u has %d args, not %d", m, kind, k, s->n_args, head ? 3 : 0);
  int32_t t = s->kernel;
  if (!head) {
    bool pairs = t >= 0 && (uint32_t)t < k && d->steps[t].kind == ONNXC_STEP_LOOP && d->steps[t].kernel == (int32_t)k + 1;
    if (!pairs) FAIL("model '%s': next step %u goes back to step %d, which is not a loop step whose exit is step %u", m, k, t, k + 1);
    return ONNXC_OK;
  }
  if (t < (int32_t)k + 2 || (uint32_t)t > d->n_steps) FAIL("model '%s': loop step %u exits to step %d; the exit must lie after a body and at most at %u (the end)", m, k, t, d->n_steps);
  if (d->steps[t - 1].kind != ONNXC_STEP_NEXT || d->steps[t - 1].kernel != (int32_t)k) FAIL("model '%s': loop step %u exits to step %d, but step %d is not its next step", m, k, t, t - 1);
  if (!is_arena_int64(d, s->args[0])) FAIL("model '%s': loop step %u's iteration count must be an int64 intermediate tensor", m, k);
  if (s->args[1] >= 0 && d->tensors[s->args[1]].dtype != 7) FAIL("model '%s': loop step %u's trip count must be an int64 tensor or a scalar", m, k);
  if (s->args[2] < 0 || d->tensors[s->args[2]].dtype != 9) FAIL("model '%s': loop step %u's condition must be a bool tensor", m, k);
  return ONNXC_OK;
}

/* True when step j lies in the body of the loop headed by step h (h + 1 .. its NEXT). */
static bool in_body(const onnxc_model_desc *d, uint32_t h, int64_t j) {
  return j > (int64_t)h && j < d->steps[h].kernel;
}

onnxc_status onnxc_check_loop_structure(const onnxc_model_desc *d, const onnxc_step_kind_info *kinds, const char *m) {
  for (uint32_t h = 0; h < d->n_steps; h++) {
    if (!(kinds[d->steps[h].kind].traits & ONNXC_STEP_REPEATS)) continue;
    for (uint32_t k = 0; k < d->n_steps; k++) {
      const onnxc_step *s = &d->steps[k];
      uint32_t traits = kinds[s->kind].traits;
      if (k == h || !(traits & ONNXC_STEP_MOVES)) continue;
      /* A nested loop's whole range lies inside the body; a jump stays on its side of the body's edge. */
      int64_t last = (traits & ONNXC_STEP_REPEATS) ? s->kernel - 1 : s->kernel;
      if (in_body(d, h, k) != in_body(d, h, last))
        FAIL("model '%s': step %u goes to step %d across the edge of the loop body at steps %u..%d", m, k, s->kernel, h, d->steps[h].kernel - 1);
    }
  }
  return ONNXC_OK;
}
