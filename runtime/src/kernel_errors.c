/* Thread-local capture of Halide error messages, and names for Halide's error codes. */
#include "kernel_errors.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

static _Thread_local char message[ONNXC_ERROR_CAPACITY];
static _Thread_local bool in_kernel;

/* A message raised on another thread while kernel calls are in flight: a worker of a library's
 * thread pool running part of the call's parallel loop. The calling thread takes it when it kept
 * none of its own (with several sessions failing at once in different threads, the first message
 * may be told to another of them). */
static char worker_message[ONNXC_ERROR_CAPACITY];
static int worker_state; /* 0 empty, 1 being written, 2 kept */
static int calls_in_flight;

static void keep(char *to, const char *msg) {
  snprintf(to, ONNXC_ERROR_CAPACITY, "%s", msg);
  size_t n = strlen(to);
  while (n > 0 && (to[n - 1] == '\n' || to[n - 1] == ' ')) to[--n] = '\0';
}

void onnxc_kernel_error_handler(void *user_context, const char *msg) {
  (void)user_context;
  if (!msg) return;
  if (!in_kernel) {
    int empty = 0;
    if (__atomic_load_n(&calls_in_flight, __ATOMIC_ACQUIRE) > 0 &&
        __atomic_compare_exchange_n(&worker_state, &empty, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
      keep(worker_message, msg);
      __atomic_store_n(&worker_state, 2, __ATOMIC_RELEASE);
      return;
    }
    fprintf(stderr, "Error: %s", msg);
    return;
  }
  if (message[0] != '\0') return;
  keep(message, msg);
}

void onnxc_kernel_call_begin(void) {
  message[0] = '\0';
  in_kernel = true;
  __atomic_add_fetch(&calls_in_flight, 1, __ATOMIC_ACQ_REL);
}

const char *onnxc_kernel_call_end(void) {
  in_kernel = false;
  __atomic_sub_fetch(&calls_in_flight, 1, __ATOMIC_ACQ_REL);
  int kept = 2;
  if (__atomic_compare_exchange_n(&worker_state, &kept, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
    if (message[0] == '\0') snprintf(message, sizeof message, "%s", worker_message);
    __atomic_store_n(&worker_state, 0, __ATOMIC_RELEASE);
  }
  return message;
}

const char *onnxc_halide_error_name(int code) {
  static const char *const names[] = {
      "success", "generic_error", "explicit_bounds_too_small", "bad_type", "access_out_of_bounds",
      "buffer_allocation_too_large", "buffer_extents_too_large", "constraints_make_required_region_smaller",
      "constraint_violated", "param_too_small", "param_too_large", "out_of_memory", "buffer_argument_is_null",
      "debug_to_file_failed", "copy_to_host_failed", "copy_to_device_failed", "device_malloc_failed",
      "device_sync_failed", "device_free_failed", "no_device_interface", "matlab_init_failed",
      "matlab_bad_param_type", "internal_error", "device_run_failed", "unaligned_host_ptr", "bad_fold",
      "fold_factor_too_small", "requirement_failed", "buffer_extents_negative", "unused_29", "unused_30",
      "specialize_fail", "device_wrap_native_failed", "device_detach_native_failed", "host_is_null",
      "bad_extern_fold", "device_interface_no_device", "host_and_device_dirty", "buffer_is_null",
      "device_buffer_copy_failed", "device_crop_unsupported", "device_crop_failed",
      "incompatible_device_interface", "bad_dimensions", "device_dirty_with_no_device_support",
      "storage_bound_too_small"};
  int n = (int)(sizeof names / sizeof names[0]);
  return (code <= 0 && -code < n) ? names[-code] : "error";
}
