/* VALUE_SIZE: binds a symbol to the value of a one-element integer tensor, for sizes a model gives as
 * data (HannWindow's size, STFT's frame_length, MelWeightMatrix's num_mel_bins). The kernels that use
 * the size run after this step, over tensors the runtime shapes and places when the symbol is bound. */
#include <stdio.h>
#include <string.h>

#include "host_op.h"

static bool check_value_size(const onnxc_model_desc *d, const int32_t *t, char *why, size_t cap) {
  const onnxc_tensor_desc *x = &d->tensors[t[0]];
  bool integer = x->dtype == 2 || x->dtype == 3 || x->dtype == 4 || x->dtype == 5 || x->dtype == 6 || x->dtype == 7 ||
                 x->dtype == 12 || x->dtype == 13;
  if (!integer || x->rank > 1) {
    snprintf(why, cap, "the size must be an integer tensor of rank 0 or 1");
    return false;
  }
  return true;
}

static onnxc_status run_value_size(onnxc_host_call *c) {
  const onnxc_host_tensor *x = &c->t[0];
  const char *name = onnxc_host_arg_name(c, 0);
  if (x->numel != 1) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u: size '%s' must hold one value, it holds %llu", c->step, name,
                      (unsigned long long)x->numel);
  }
  int64_t v = 0;
  switch (x->dtype) {
    case 2: v = *(const uint8_t *)x->data; break;
    case 3: v = *(const int8_t *)x->data; break;
    case 4: v = *(const uint16_t *)x->data; break;
    case 5: v = *(const int16_t *)x->data; break;
    case 6: v = *(const int32_t *)x->data; break;
    case 12: v = *(const uint32_t *)x->data; break;
    case 13: v = (int64_t)(*(const uint64_t *)x->data & INT64_MAX); break;
    default: memcpy(&v, x->data, sizeof v); break;
  }
  if (v < 0) {
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "step %u: size '%s' is %lld; a size cannot be negative", c->step, name,
                      (long long)v);
  }
  return onnxc_host_bind(c, &v);
}

const onnxc_host_op_info onnxc_host_value_size = {.name = "ValueSize", .n_inputs = 1, .n_outputs = 0, .n_scalars = 0,
    .n_binds = 1, .check = check_value_size, .run = run_value_size};
