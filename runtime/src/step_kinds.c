/* The step kinds: one entry per ONNXC_STEP_*, read by validation (validate, traits), liveness and
 * known_at (traits) and the executor (run, label). Adding a kind: its ABI number, one file with its
 * validate and run, one entry here. */
#include "step_kinds.h"

#include "loops.h"
#include "loops_validate.h"
#include "step_control.h"
#include "step_host.h"
#include "step_kernel.h"

static const char *control_label(const onnxc_model_desc *d, uint32_t k) {
  (void)d, (void)k;
  return "";
}

const onnxc_step_kind_info onnxc_step_kinds[ONNXC_STEP_KIND_COUNT] = {
    [ONNXC_STEP_KERNEL] = {"kernel", ONNXC_STEP_COMPUTES | ONNXC_STEP_SKIPS_EMPTY, onnxc_validate_kernel, onnxc_run_kernel,
                           onnxc_kernel_label, NULL, NULL},
    [ONNXC_STEP_HOST] = {"host op", ONNXC_STEP_COMPUTES | ONNXC_STEP_BINDS, onnxc_validate_host,
                         onnxc_run_host, onnxc_host_label, onnxc_host_first_output, onnxc_host_takes_values},
    [ONNXC_STEP_BRANCH] = {"branch", ONNXC_STEP_MOVES, onnxc_validate_control, onnxc_run_branch, control_label, NULL, NULL},
    [ONNXC_STEP_JUMP] = {"jump", ONNXC_STEP_MOVES, onnxc_validate_control, onnxc_run_jump, control_label, NULL, NULL},
    [ONNXC_STEP_LOOP] = {"loop", ONNXC_STEP_MOVES | ONNXC_STEP_REPEATS, onnxc_check_loop_step, onnxc_run_loop, control_label,
                         NULL, NULL},
    [ONNXC_STEP_NEXT] = {"next", 0, onnxc_check_loop_step, onnxc_run_next, control_label, NULL, NULL},
};
