/* Error reporting inside the runtime: a failing function formats its message into this thread's
 * last-error buffer (what onnxc_last_error() returns) and returns the status; the public entry point
 * then copies the message onto the session it was called on. */
#ifndef ONNXC_RUNTIME_ERROR_H
#define ONNXC_RUNTIME_ERROR_H

#include "onnxc/runtime.h"

#define ONNXC_ERROR_CAPACITY 1024

#if defined(__GNUC__)
#define ONNXC_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define ONNXC_PRINTF(fmt, args)
#endif

/* Formats the message into the thread's last error; returns status so callers can `return onnxc_fail(...)`. */
onnxc_status onnxc_fail(onnxc_status status, const char *fmt, ...) ONNXC_PRINTF(2, 3);

/* Copies the thread's last error into a handle's buffer (ONNXC_ERROR_CAPACITY bytes). Returns status. */
onnxc_status onnxc_keep_error(char *handle_error, onnxc_status status);

/* Appends formatted text at buf + *len without overflowing cap (output is truncated, *len clamped). */
void onnxc_appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...) ONNXC_PRINTF(4, 5);

#endif
