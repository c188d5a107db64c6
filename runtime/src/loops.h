/* Loops (ABI v4: an ONNX Loop or Scan): the session's loop state, the LOOP and NEXT steps, the scan host
 * ops' table entries, and the load-time checks of loop structure. */
#ifndef ONNXC_RUNTIME_LOOPS_H
#define ONNXC_RUNTIME_LOOPS_H

#include <stdbool.h>
#include <stdint.h>

#include "host_ops.h"
#include "onnxc/model_abi.h"
#include "onnxc/runtime.h"
#include "shape_expr.h"

/* Per session: each LOOP step's iteration count, each SCAN_APPEND step's gathered items. */
typedef struct onnxc_loop_state {
  int64_t *iter;       /* n_steps */
  uint8_t **items;     /* n_steps: malloc'ed, grown by doubling, kept across runs */
  uint64_t *capacity;  /* n_steps: bytes allocated */
  uint64_t *count;     /* n_steps: items gathered since the last collect */
  uint64_t *item_bytes;/* n_steps: bytes of one item (the first append's) */
} onnxc_loop_state;

/* Allocates the state for a model of n_steps steps (NULL when out of memory); free with onnxc_loops_free. */
onnxc_loop_state *onnxc_loops_new(uint32_t n_steps);
void onnxc_loops_free(onnxc_loop_state *l, uint32_t n_steps);
/* Before a run: no items gathered (a run that failed may have left some). */
void onnxc_loops_reset(onnxc_loop_state *l, uint32_t n_steps);

/* Runs control step k (LOOP or NEXT), arrived at from step `prev` (-1: the start); sets *next. */
onnxc_status onnxc_run_loop_step(onnxc_session *s, uint32_t k, int64_t prev, uint32_t *next);

extern const onnxc_host_op_info onnxc_host_scan_slice;
extern const onnxc_host_op_info onnxc_host_scan_append;
extern const onnxc_host_op_info onnxc_host_scan_collect;

/* Load-time checks: a LOOP or NEXT step's own fields (k is one); then the whole plan's loop structure
 * (pairs, nesting, jumps that enter or leave a body) and the scan host ops' scalars. */
onnxc_status onnxc_check_loop_step(const onnxc_model_desc *d, const char *m, uint32_t k);
onnxc_status onnxc_check_loop_structure(const onnxc_model_desc *d, const onnxc_expr_table *table, const char *m);

#endif
