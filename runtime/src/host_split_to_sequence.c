/* SplitToSequence into a run-time sequence (SPLIT_TO_SEQ, model_abi.h): X cut along `axis` into parts
 * whose count and lengths come from the split input's data. split: 0 elements (absent): parts of
 * length 1, the axis removed when keepdims is 0; a scalar: parts of that length, the last one shorter
 * when it does not divide the dim; a 1-D tensor: the parts' lengths, which must add up to the dim. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_op.h"

static bool check(const onnxc_model_desc *d, const int32_t *a, char *why, size_t cap) {
  const onnxc_tensor_desc *x = &d->tensors[a[0]], *split = &d->tensors[a[1]], *s = &d->tensors[a[2]];
  bool ok = x->value == ONNXC_VALUE_TENSOR && x->rank >= 1 && x->dtype != 8 && split->value == ONNXC_VALUE_TENSOR &&
            split->dtype == 7 && split->rank <= 1 && s->value == ONNXC_VALUE_SEQUENCE && s->dtype == x->dtype;
  if (!ok) snprintf(why, cap, "needs a numeric tensor of rank >= 1, int64 split (scalar or 1-D), sequence of its dtype");
  return ok;
}

static onnxc_status fail(const onnxc_host_call *c, const char *what, long long a, long long b) {
  return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "step %u (SplitToSequence): %s (%lld, %lld) for '%s'", c->step, what, a, b,
                    onnxc_host_arg_name(c, 0));
}

static onnxc_status run(onnxc_host_call *c) {
  const onnxc_host_tensor *x = &c->t[0], *split = &c->t[1];
  onnxc_value_store *seq = c->value[2];
  int32_t axis = (int32_t)c->scalar[0];
  bool keepdims = c->scalar[1] != 0;
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank) return fail(c, "axis out of range (axis, rank)", c->scalar[0], x->rank);
  const int64_t dim = x->dims[axis];
  const int64_t *sizes = split->data;
  const bool each_one = split->numel == 0, chunk = split->rank == 0;
  int64_t parts = each_one ? dim : chunk ? (sizes[0] > 0 ? (dim + sizes[0] - 1) / sizes[0] : -1) : (int64_t)split->numel;
  if (chunk && sizes[0] <= 0) return fail(c, "split length must be positive (split, dim)", sizes[0], dim);
  if (!each_one && !chunk) {
    int64_t total = 0;
    for (int64_t i = 0; i < parts; ++i) {
      if (sizes[i] < 0) return fail(c, "negative split length (index, length)", i, sizes[i]);
      total += sizes[i];
    }
    if (total != dim) return fail(c, "split lengths do not add up to the axis (sum, dim)", total, dim);
  }
  /* Rows of X: outer blocks before the axis, each `dim` slices of `inner` bytes. */
  uint64_t outer = 1, inner = (uint64_t)onnxc_dtype_size(x->dtype);
  for (int32_t i = 0; i < axis; ++i) outer *= (uint64_t)x->dims[i];
  for (int32_t i = axis + 1; i < x->rank; ++i) inner *= (uint64_t)x->dims[i];
  int64_t longest = each_one ? 1 : chunk ? sizes[0] : 0;
  for (int64_t i = 0; !each_one && !chunk && i < parts; ++i) longest = sizes[i] > longest ? sizes[i] : longest;
  uint64_t scratch_bytes = outer * (uint64_t)(longest < dim ? longest : dim) * inner;
  char *scratch = scratch_bytes > 0 ? malloc((size_t)scratch_bytes) : NULL;
  if (scratch_bytes > 0 && !scratch) return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "step %u (SplitToSequence): no memory", c->step);
  onnxc_value_clear(seq);
  seq->present = true;
  onnxc_status st = ONNXC_OK;
  int64_t start = 0;
  for (int64_t p = 0; p < parts && st == ONNXC_OK; ++p) {
    int64_t len = each_one ? 1 : chunk ? (dim - start < sizes[0] ? dim - start : sizes[0]) : sizes[p];
    uint64_t part_row = (uint64_t)len * inner;
    for (uint64_t o = 0; part_row > 0 && o < outer; ++o)
      memcpy(scratch + o * part_row, (const char *)x->data + (o * (uint64_t)dim + (uint64_t)start) * inner, (size_t)part_row);
    int64_t dims[ONNXC_MAX_RANK];
    int32_t rank = 0;
    for (int32_t i = 0; i < x->rank; ++i) {
      if (i != axis) dims[rank++] = x->dims[i];
      else if (!(each_one && !keepdims)) dims[rank++] = len;
    }
    st = onnxc_value_insert(seq, (uint32_t)p, x->dtype, rank, dims, scratch, outer * part_row);
    start += len;
  }
  free(scratch);
  return st;
}

const onnxc_host_op_info onnxc_host_split_to_seq = {.name = "SplitToSequence", .n_inputs = 2, .n_outputs = 1,
                                                     .n_scalars = 2, .n_binds = 0, .takes_values = true,
                                                     .check = check, .run = run};
