/* The executor's run of a plan (execute.c): the loop over steps through the step-kind table. */
#ifndef ONNXC_RUNTIME_EXECUTE_H
#define ONNXC_RUNTIME_EXECUTE_H

#include "session_state.h"

/* Runs the steps of `plan` with the bound inputs. */
onnxc_status onnxc_execute(onnxc_session *s, const onnxc_plan *plan);

#endif
