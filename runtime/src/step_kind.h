/* A step kind (model_abi.h's ONNXC_STEP_*): its name, what validation, liveness and known_at need to know
 * of it, how it is checked at load and how it runs. The one table of kinds is step_kinds.c's; the model
 * layer reads it through model->kinds, so this header holds the type alone. */
#ifndef ONNXC_RUNTIME_STEP_KIND_H
#define ONNXC_RUNTIME_STEP_KIND_H

#include <stdbool.h>
#include <stdint.h>

#include "onnxc/model_abi.h"
#include "onnxc/runtime.h"
#include "shape_expr.h"

struct onnxc_plan;

/* Kinds are numbered 0 .. ONNXC_STEP_KIND_COUNT - 1 (a new kind in model_abi.h moves this). */
#define ONNXC_STEP_KIND_COUNT (ONNXC_STEP_NEXT + 1)

enum onnxc_step_trait {
  ONNXC_STEP_BINDS = 1,       /* may bind symbols from data, deciding its own outputs' dims (host ops) */
  ONNXC_STEP_MOVES = 2,       /* goes on at step `kernel`, forward: the steps between may be skipped */
  ONNXC_STEP_REPEATS = 4,     /* a loop head: steps k .. kernel - 1 may run again */
  ONNXC_STEP_COMPUTES = 8,    /* does work the profiler times */
  ONNXC_STEP_SKIPS_EMPTY = 16 /* has nothing to do when every arena tensor it first writes is empty */
};

typedef struct onnxc_step_kind_info {
  const char *name;
  uint32_t traits; /* enum onnxc_step_trait */
  /* Load time: the step's own fields, after its arg ids and the expressions were checked in range.
   * exprs: the descriptor's expressions (constant scalars); m: the model's name. */
  onnxc_status (*validate)(const onnxc_model_desc *d, const onnxc_expr_table *exprs, const char *m, uint32_t k);
  /* Runs step k of plan p, entered from step `prev` (-1: the start); *next is k + 1 on entry. */
  onnxc_status (*run)(onnxc_session *s, const struct onnxc_plan *p, uint32_t k, int64_t prev, uint32_t *next);
  /* What the step runs, for messages and the profiler ("matmul_3", "NonZero"). */
  const char *(*label)(const onnxc_model_desc *d, uint32_t k);
  /* With ONNXC_STEP_BINDS: the first argument that is an output (its dims may be the step's own binds). */
  int32_t (*first_output)(const onnxc_model_desc *d, uint32_t k);
  /* Whether step k may take sequences and optionals (NULL: never). Asked before validate. */
  bool (*takes_values)(const onnxc_model_desc *d, uint32_t k);
} onnxc_step_kind_info;

#endif
