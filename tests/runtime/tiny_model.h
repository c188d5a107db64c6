/* The hand-written test model's descriptor, as `onnxc compile --name tiny` would declare it. */
#ifndef ONNXC_TESTS_RUNTIME_TINY_MODEL_H
#define ONNXC_TESTS_RUNTIME_TINY_MODEL_H

#include "onnxc/model_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

const onnxc_model_desc *onnxc_model_tiny(void);

/* The kernels' argv entry points (also used by tests that build variants of the descriptor). */
int add_bias3_argv(void **args);
int scale1_argv(void **args);
int mul_rows_sum_argv(void **args);
int positive_argv(void **args);

#ifdef __cplusplus
}
#endif

#endif
