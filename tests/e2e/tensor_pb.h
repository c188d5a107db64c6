/* A minimal reader of ONNX TensorProto files (test_data_set_N/input_K.pb) in plain C, so the e2e test
 * program links nothing but the compiled model and libonnxc_runtime: no protobuf. Reads dims,
 * data_type, name, and the data from raw_data or the typed float/int32/int64/double fields. */
#ifndef ONNXC_TESTS_TENSOR_PB_H
#define ONNXC_TESTS_TENSOR_PB_H

#include <stddef.h>
#include <stdint.h>

#define TENSOR_PB_MAX_RANK 16

typedef struct tensor_pb {
  char name[256];
  int32_t dtype; /* ONNX TensorProto.DataType */
  int32_t rank;
  int64_t dims[TENSOR_PB_MAX_RANK];
  int64_t numel;
  size_t nbytes;
  void *data; /* malloc'ed, nbytes long (row-major, little-endian); free with tensor_pb_free */
} tensor_pb;

/* Returns 0 on success; on failure writes a message to `err` (size `err_size`) and returns -1. */
int tensor_pb_read(const char *path, tensor_pb *out, char *err, size_t err_size);
void tensor_pb_free(tensor_pb *t);
/* Bytes per element of the dtypes the reader handles; 0 otherwise. */
size_t tensor_pb_dtype_size(int32_t dtype);

#endif
