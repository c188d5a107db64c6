/* The set of live handles (models and sessions the caller owns), so that freeing one twice is
 * detected and refused instead of corrupting the heap. Thread-safe. */
#ifndef ONNXC_RUNTIME_HANDLES_H
#define ONNXC_RUNTIME_HANDLES_H

#include <stdbool.h>

/* Records a handle just handed to the caller; false when out of memory. */
bool onnxc_handle_register(const void *handle);
/* Forgets a handle the caller frees; false when it was not live (freed already, or never ours). */
bool onnxc_handle_unregister(const void *handle);

#endif
