/* ONNX dtype table. Bool maps to Halide's Bool() = UInt(1) (one byte per element): a kernel that takes
 * or returns a bool tensor must declare it with Halide's Bool() type, which checks bits == 1. */
#include "dtype.h"

#include <HalideRuntime.h>
#include <stddef.h>

#include "onnxc/runtime.h"

static const onnxc_dtype_info dtypes[] = {
    {ONNXC_DTYPE_FLOAT, "float32", 4, halide_type_float, 32},
    {ONNXC_DTYPE_UINT8, "uint8", 1, halide_type_uint, 8},
    {ONNXC_DTYPE_INT8, "int8", 1, halide_type_int, 8},
    {ONNXC_DTYPE_UINT16, "uint16", 2, halide_type_uint, 16},
    {ONNXC_DTYPE_INT16, "int16", 2, halide_type_int, 16},
    {ONNXC_DTYPE_INT32, "int32", 4, halide_type_int, 32},
    {ONNXC_DTYPE_INT64, "int64", 8, halide_type_int, 64},
    {ONNXC_DTYPE_BOOL, "bool", 1, halide_type_uint, 1},
    {ONNXC_DTYPE_FLOAT16, "float16", 2, halide_type_float, 16},
    {ONNXC_DTYPE_DOUBLE, "float64", 8, halide_type_float, 64},
    {ONNXC_DTYPE_UINT32, "uint32", 4, halide_type_uint, 32},
    {ONNXC_DTYPE_UINT64, "uint64", 8, halide_type_uint, 64},
    {ONNXC_DTYPE_BFLOAT16, "bfloat16", 2, halide_type_bfloat, 16},
    /* 8-bit floats: kernels take their bytes as uint8 and convert them where values matter. */
    {ONNXC_DTYPE_FLOAT8E4M3FN, "float8e4m3fn", 1, halide_type_uint, 8},
    {ONNXC_DTYPE_FLOAT8E4M3FNUZ, "float8e4m3fnuz", 1, halide_type_uint, 8},
    {ONNXC_DTYPE_FLOAT8E5M2, "float8e5m2", 1, halide_type_uint, 8},
    {ONNXC_DTYPE_FLOAT8E5M2FNUZ, "float8e5m2fnuz", 1, halide_type_uint, 8},
    {ONNXC_DTYPE_FLOAT8E8M0, "float8e8m0", 1, halide_type_uint, 8},
    {ONNXC_DTYPE_FLOAT4E2M1, "float4e2m1", 1, halide_type_uint, 8}, /* unpacked: one code a byte */
    /* Sub-byte integers are held unpacked, one element per byte (signed ones sign-extended). */
    {ONNXC_DTYPE_UINT4, "uint4", 1, halide_type_uint, 8},
    {ONNXC_DTYPE_INT4, "int4", 1, halide_type_int, 8},
    {ONNXC_DTYPE_UINT2, "uint2", 1, halide_type_uint, 8},
    {ONNXC_DTYPE_INT2, "int2", 1, halide_type_int, 8},
    /* One pointer per element; no kernel reads strings (host ops only), the Halide type is a formality. */
    {ONNXC_DTYPE_STRING, "string", sizeof(const char *), halide_type_handle, 64},
};

const onnxc_dtype_info *onnxc_dtype_lookup(int32_t onnx_dtype) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
    if (dtypes[i].onnx == onnx_dtype) return &dtypes[i];
  }
  return NULL;
}

size_t onnxc_dtype_size(int32_t dtype) {
  const onnxc_dtype_info *info = onnxc_dtype_lookup(dtype);
  return info ? info->bytes : 0;
}

const char *onnxc_dtype_name(int32_t dtype) {
  const onnxc_dtype_info *info = onnxc_dtype_lookup(dtype);
  return info ? info->name : "unsupported";
}
