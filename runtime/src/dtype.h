/* The dtypes the runtime handles: ONNX number -> element size, name, and the Halide buffer type the
 * kernels are compiled against. */
#ifndef ONNXC_RUNTIME_DTYPE_H
#define ONNXC_RUNTIME_DTYPE_H

#include <stdbool.h>
#include <stdint.h>

/* Deepest tensor the runtime accepts (Halide has no fixed limit; ONNX models stay far below). */
#define ONNXC_MAX_RANK 32

typedef struct onnxc_dtype_info {
  int32_t onnx;        /* TensorProto.DataType */
  const char *name;
  uint8_t bytes;       /* storage per element */
  uint8_t halide_code; /* halide_type_code_t */
  uint8_t halide_bits; /* bool is Halide's UInt(1): one byte of storage, bits = 1 */
} onnxc_dtype_info;

/* NULL for a dtype the runtime does not handle. */
const onnxc_dtype_info *onnxc_dtype_lookup(int32_t onnx_dtype);

#endif
