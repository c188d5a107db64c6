/* Halide's messages from a failing kernel: a handler installed in each model library's Halide runtime
 * keeps the message of the kernel running on this thread, so the session can report it. */
#ifndef ONNXC_RUNTIME_KERNEL_ERRORS_H
#define ONNXC_RUNTIME_KERNEL_ERRORS_H

/* The handler given to the library's halide_set_error_handler. Inside a kernel call on this thread it
 * keeps the first message; on another thread while some kernel call is in flight (a pool worker) it
 * keeps the first for the call to take; otherwise it prints to stderr as Halide's default does. */
void onnxc_kernel_error_handler(void *user_context, const char *message);

/* Brackets one kernel call on this thread. end returns the message kept since begin ("" if none),
 * valid until the next begin on this thread. */
void onnxc_kernel_call_begin(void);
const char *onnxc_kernel_call_end(void);

/* "halide_error_code_buffer_extents_too_small"-style name for a Halide error code (e.g. -3 is bad_type),
 * "error" for an unknown code. */
const char *onnxc_halide_error_name(int code);

#endif
