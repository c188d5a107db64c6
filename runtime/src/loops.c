/* Loops at run time: the LOOP step (count iterations, test trip count and condition) and NEXT (back to
 * its LOOP). The scan host ops that gather a loop's outputs are host_scan.c's. */
#include "loops.h"

#include <string.h>

/* The first element of a one-element tensor t of `what`, or an error naming the step. */
static onnxc_status one_element(const onnxc_session *s, uint32_t k, int32_t t, size_t size, const char *what, void *out) {
  if (s->run_bytes[t] != size) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (loop) reads its %s from " ONNXC_TENSOR_FMT ", which has %llu bytes, not one element",
                      k, what, t, s->model->desc->tensors[t].name, (unsigned long long)s->run_bytes[t]);
  }
  memcpy(out, s->buffers[t].host, size);
  return ONNXC_OK;
}

onnxc_status onnxc_run_next(onnxc_session *s, const onnxc_plan *p, uint32_t k, int64_t prev, uint32_t *next) {
  (void)p, (void)prev;
  *next = (uint32_t)s->model->desc->steps[k].kernel;
  return ONNXC_OK;
}

onnxc_status onnxc_run_loop(onnxc_session *s, const onnxc_plan *p, uint32_t k, int64_t prev, uint32_t *next) {
  (void)p;
  const onnxc_model *m = s->model;
  const onnxc_step *step = &m->desc->steps[k];
  *next = (uint32_t)step->kernel;
  /* Only the loop's own NEXT comes back from a later step (checked at load). */
  int64_t i = s->loop_iter[k] = prev > (int64_t)k ? s->loop_iter[k] + 1 : 0;
  int32_t iter = step->args[0], trip = step->args[1], cond = step->args[2];
  if (s->run_bytes[iter] != sizeof i) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (loop) writes its iteration count to " ONNXC_TENSOR_FMT ", which is not one int64",
                      k, iter, m->desc->tensors[iter].name);
  }
  memcpy(s->buffers[iter].host, &i, sizeof i);
  int64_t limit = INT64_MAX; /* an empty trip tensor: no limit (ONNX Loop without M) */
  onnxc_status st = ONNXC_OK;
  if (trip < 0) limit = s->scalars[m->arg_offset[k] + 1];
  else if (s->run_bytes[trip] != 0) st = one_element(s, k, trip, sizeof limit, "trip count", &limit);
  uint8_t go = 0;
  if (st == ONNXC_OK) st = one_element(s, k, cond, 1, "condition", &go);
  if (st == ONNXC_OK && i < limit && go) *next = k + 1;
  return st;
}

