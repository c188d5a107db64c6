/* Facts about a descriptor's entries (model_abi.h) that every layer reads the same way. */
#ifndef ONNXC_RUNTIME_DESC_H
#define ONNXC_RUNTIME_DESC_H

#include <stdbool.h>
#include <stdint.h>

#include "onnxc/model_abi.h"

/* Arena tensors are the ones the memory plan places: intermediates and outputs that are not views. */
static inline bool onnxc_is_arena_kind(int32_t kind) {
  return kind == ONNXC_TENSOR_INTERMEDIATE || kind == ONNXC_TENSOR_OUTPUT;
}

/* "tensor 3 ('h')" style label for messages. */
#define ONNXC_TENSOR_FMT "tensor %d ('%s')"

#endif
