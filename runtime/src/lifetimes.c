/* Liveness of arena tensors over the plan's steps. A view shares its root's bytes, so each use of the
 * view is a use of the root; a graph output must survive every later step, so its root lives to the end.
 * A loop body runs again after its last step, so a tensor touched inside a loop lives over all of it. */
#include "lifetimes.h"

#include "desc.h"

static void touch(int32_t *first, int32_t *last, int32_t t, int32_t step) {
  if (first[t] < 0 || step < first[t]) first[t] = step;
  if (step > last[t]) last[t] = step;
}

/* Loop h covers steps h .. exit - 1 (its LOOP, body and NEXT; validated to nest). A tensor used in an
 * iteration may be read in the next one (loop-carried values, outer values) and must not share bytes
 * with anything else the loop touches, so its lifetime spans the whole loop. Inner loops lie inside
 * outer ones, so one pass in step order (outer first) and then inner ones only widen to within the
 * outer range: an inner widening never reaches outside the outer loop, which was already covered. */
static void widen_over_loops(const onnxc_model_desc *d, const onnxc_step_kind_info *kinds, int32_t *first, int32_t *last) {
  for (uint32_t h = 0; h < d->n_steps; h++) {
    if (!(kinds[d->steps[h].kind].traits & ONNXC_STEP_REPEATS)) continue;
    int32_t end = d->steps[h].kernel - 1;
    for (uint32_t t = 0; t < d->n_tensors; t++) {
      if (first[t] < 0 || last[t] < (int32_t)h || first[t] > end) continue;
      if (first[t] > (int32_t)h) first[t] = (int32_t)h;
      if (last[t] < end) last[t] = end;
    }
  }
}

void onnxc_compute_lifetimes(const onnxc_model_desc *d, const onnxc_step_kind_info *kinds, const int32_t *root, int32_t *first,
                             int32_t *last) {
  for (uint32_t t = 0; t < d->n_tensors; t++) first[t] = last[t] = -1;
  for (uint32_t k = 0; k < d->n_steps; k++) {
    const onnxc_step *s = &d->steps[k];
    for (int32_t i = 0; i < s->n_args; i++) {
      int32_t arg = s->args[i];
      if (arg < 0) continue;
      int32_t r = root[arg];
      if (onnxc_is_arena_kind(d->tensors[r].kind)) touch(first, last, r, (int32_t)k);
    }
  }
  widen_over_loops(d, kinds, first, last);
  int32_t end = (int32_t)d->n_steps;
  for (uint32_t o = 0; o < d->n_outputs; o++) {
    int32_t r = root[d->outputs[o]];
    if (!onnxc_is_arena_kind(d->tensors[r].kind)) continue;
    if (first[r] < 0) first[r] = end; /* never written: still needs (uninitialized) bytes to return */
    last[r] = end;
  }
}
