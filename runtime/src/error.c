/* Status names and the thread-local last error. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[ONNXC_ERROR_CAPACITY];

const char *onnxc_status_string(onnxc_status status) {
  switch (status) {
  case ONNXC_OK: return "ONNXC_OK";
  case ONNXC_ERR_INVALID_ARGUMENT: return "ONNXC_ERR_INVALID_ARGUMENT";
  case ONNXC_ERR_NOT_FOUND: return "ONNXC_ERR_NOT_FOUND";
  case ONNXC_ERR_DTYPE_MISMATCH: return "ONNXC_ERR_DTYPE_MISMATCH";
  case ONNXC_ERR_SHAPE_MISMATCH: return "ONNXC_ERR_SHAPE_MISMATCH";
  case ONNXC_ERR_OUT_OF_MEMORY: return "ONNXC_ERR_OUT_OF_MEMORY";
  case ONNXC_ERR_KERNEL_FAILED: return "ONNXC_ERR_KERNEL_FAILED";
  case ONNXC_ERR_LOAD_FAILED: return "ONNXC_ERR_LOAD_FAILED";
  case ONNXC_ERR_UNSUPPORTED: return "ONNXC_ERR_UNSUPPORTED";
  case ONNXC_ERR_INTERNAL: return "ONNXC_ERR_INTERNAL";
  }
  return "ONNXC_ERR_(unknown status)";
}

const char *onnxc_last_error(void) { return last_error; }

onnxc_status onnxc_fail(onnxc_status status, const char *fmt, ...) {
  char text[ONNXC_ERROR_CAPACITY]; /* an argument may be last_error itself (wrapping a message) */
  va_list args;
  va_start(args, fmt);
  vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  memcpy(last_error, text, sizeof text);
  return status;
}

onnxc_status onnxc_keep_error(char *handle_error, onnxc_status status) {
  if (handle_error && status != ONNXC_OK) {
    memcpy(handle_error, last_error, ONNXC_ERROR_CAPACITY);
  }
  return status;
}

void onnxc_appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
  if (*len >= cap) return;
  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(buf + *len, cap - *len, fmt, args);
  va_end(args);
  if (n < 0) return;
  *len += (size_t)n;
  if (*len >= cap) *len = cap - 1;
}
