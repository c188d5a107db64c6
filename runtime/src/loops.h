/* Loops at run time (ABI v4): the LOOP and NEXT step kinds' run functions. */
#ifndef ONNXC_RUNTIME_LOOPS_H
#define ONNXC_RUNTIME_LOOPS_H

#include <stdint.h>

#include "session_state.h"

/* Runs LOOP step k, arrived at from step `prev` (-1: the start): counts the iteration and sets *next to
 * the body (k + 1) or the exit. */
onnxc_status onnxc_run_loop(onnxc_session *s, const onnxc_plan *p, uint32_t k, int64_t prev, uint32_t *next);
/* Runs NEXT step k: back to its LOOP. */
onnxc_status onnxc_run_next(onnxc_session *s, const onnxc_plan *p, uint32_t k, int64_t prev, uint32_t *next);

#endif
