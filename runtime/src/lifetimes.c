/* Liveness of arena tensors over the plan's steps. A view shares its root's bytes, so each use of the
 * view is a use of the root; a graph output must survive every later step, so its root lives to the end. */
#include "lifetimes.h"

#include "model.h"

static void touch(int32_t *first, int32_t *last, int32_t t, int32_t step) {
  if (first[t] < 0 || step < first[t]) first[t] = step;
  if (step > last[t]) last[t] = step;
}

void onnxc_compute_lifetimes(const onnxc_model_desc *d, const int32_t *root, int32_t *first, int32_t *last) {
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
  int32_t end = (int32_t)d->n_steps;
  for (uint32_t o = 0; o < d->n_outputs; o++) {
    int32_t r = root[d->outputs[o]];
    if (!onnxc_is_arena_kind(d->tensors[r].kind)) continue;
    if (first[r] < 0) first[r] = end; /* never written: still needs (uninitialized) bytes to return */
    last[r] = end;
  }
}
