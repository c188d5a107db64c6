/* Value host ops (ABI v5): the steps that move run-time sequences and optionals (Identity, SequenceEmpty,
 * SequenceInsert/At/Erase/Length, Optional, OptionalHasElement, OptionalGetElement). A value argument's
 * contents live in value stores (value_store.h, reached through c->value), not in its buffer; tensors are copied in and
 * out, so a value never points into the arena. */
#include <stdio.h>
#include <string.h>

#include "host_op.h"

static const onnxc_tensor_desc *arg_desc(const onnxc_model_desc *d, const int32_t *tensors, int i) {
  return &d->tensors[tensors[i]];
}

static bool is_seq(int32_t value) { return value == ONNXC_VALUE_SEQUENCE || value == ONNXC_VALUE_OPTIONAL_SEQUENCE; }
static bool is_opt(int32_t value) { return value == ONNXC_VALUE_OPTIONAL_TENSOR || value == ONNXC_VALUE_OPTIONAL_SEQUENCE; }

/* Load-time checks: each argument's value kind, and dtypes that must agree. */
static bool want(bool ok, char *why, size_t cap, const char *what) {
  if (!ok) snprintf(why, cap, "%s", what);
  return ok;
}

static bool check_copy(const onnxc_model_desc *d, const int32_t *a, char *why, size_t cap) {
  const onnxc_tensor_desc *x = arg_desc(d, a, 0), *y = arg_desc(d, a, 1);
  return want(x->value != ONNXC_VALUE_TENSOR && y->value != ONNXC_VALUE_TENSOR && is_seq(x->value) == is_seq(y->value) &&
                  x->dtype == y->dtype,
              why, cap, "copies a value into one of another kind or dtype");
}

static bool check_empty(const onnxc_model_desc *d, const int32_t *a, char *why, size_t cap) {
  int32_t v = arg_desc(d, a, 0)->value;
  return want(v != ONNXC_VALUE_TENSOR, why, cap, "its output is not a sequence or optional");
}

static bool is_pos(const onnxc_tensor_desc *p) { return p->value == ONNXC_VALUE_TENSOR && p->dtype == 7 && p->rank <= 1; }

static bool check_insert(const onnxc_model_desc *d, const int32_t *a, char *why, size_t cap) {
  const onnxc_tensor_desc *s = arg_desc(d, a, 0), *t = arg_desc(d, a, 1), *y = arg_desc(d, a, 3);
  return want(is_seq(s->value) && is_seq(y->value) && t->value == ONNXC_VALUE_TENSOR && t->dtype == s->dtype &&
                  y->dtype == s->dtype && is_pos(arg_desc(d, a, 2)),
              why, cap, "needs sequence, tensor of its dtype, int64 position, sequence");
}

static bool check_at(const onnxc_model_desc *d, const int32_t *a, char *why, size_t cap) {
  const onnxc_tensor_desc *s = arg_desc(d, a, 0), *y = arg_desc(d, a, 2);
  return want(is_seq(s->value) && is_pos(arg_desc(d, a, 1)) && y->value == ONNXC_VALUE_TENSOR && y->dtype == s->dtype, why,
              cap, "needs sequence, int64 position, tensor of its dtype");
}

static bool check_erase(const onnxc_model_desc *d, const int32_t *a, char *why, size_t cap) {
  const onnxc_tensor_desc *s = arg_desc(d, a, 0), *y = arg_desc(d, a, 2);
  return want(is_seq(s->value) && is_pos(arg_desc(d, a, 1)) && is_seq(y->value) && y->dtype == s->dtype, why, cap,
              "needs sequence, int64 position, sequence");
}

static bool check_length(const onnxc_model_desc *d, const int32_t *a, char *why, size_t cap) {
  const onnxc_tensor_desc *s = arg_desc(d, a, 0), *y = arg_desc(d, a, 1);
  return want(is_seq(s->value) && y->value == ONNXC_VALUE_TENSOR && y->dtype == 7 && y->rank == 0, why, cap,
              "needs sequence, int64 scalar");
}

static bool check_wrap(const onnxc_model_desc *d, const int32_t *a, char *why, size_t cap) {
  const onnxc_tensor_desc *x = arg_desc(d, a, 0), *y = arg_desc(d, a, 1);
  return want(x->value == ONNXC_VALUE_TENSOR && y->value == ONNXC_VALUE_OPTIONAL_TENSOR && x->dtype == y->dtype, why, cap,
              "needs tensor, optional tensor of its dtype");
}

static bool check_has(const onnxc_model_desc *d, const int32_t *a, char *why, size_t cap) {
  const onnxc_tensor_desc *x = arg_desc(d, a, 0), *y = arg_desc(d, a, 1);
  return want(x->value != ONNXC_VALUE_TENSOR && y->value == ONNXC_VALUE_TENSOR && y->dtype == 9 && y->rank == 0, why, cap,
              "needs sequence or optional, bool scalar");
}

static bool check_get(const onnxc_model_desc *d, const int32_t *a, char *why, size_t cap) {
  const onnxc_tensor_desc *x = arg_desc(d, a, 0), *y = arg_desc(d, a, 1);
  return want(x->value == ONNXC_VALUE_OPTIONAL_TENSOR && y->value == ONNXC_VALUE_TENSOR && x->dtype == y->dtype, why, cap,
              "needs optional tensor, tensor of its dtype");
}

/* The store behind tensor argument i of the call. */
static onnxc_value_store *store(onnxc_host_call *c, int i) { return c->value[i]; }

static const char *arg_name(onnxc_host_call *c, int i) { return onnxc_host_arg_name(c, i); }

static const char *op_name(onnxc_host_call *c) { return c->op->name; }

/* The value kind of tensor argument i (model_abi.h's ONNXC_VALUE_*). */
static int32_t arg_kind(onnxc_host_call *c, int i) { return c->desc->tensors[c->desc->steps[c->step].args[i]].value; }

/* An empty optional where the op needs its contents fails the run, naming the value. */
static onnxc_status need_present(onnxc_host_call *c, int i) {
  if (store(c, i)->present) return ONNXC_OK;
  return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "step %u (%s): '%s' is an empty optional", c->step, op_name(c), arg_name(c, i));
}

/* Position argument i: absent (0 elements) -> `fallback`; negative counts from `count`; must lie in
 * 0..limit. */
static onnxc_status position(onnxc_host_call *c, int i, int64_t count, int64_t fallback, int64_t limit, uint32_t *out) {
  int64_t p = fallback;
  if (c->t[i].numel > 0) {
    p = *(const int64_t *)c->t[i].data;
    if (p < 0) p += count;
  }
  if (p < 0 || p > limit) {
    int64_t given = c->t[i].numel > 0 ? *(const int64_t *)c->t[i].data : fallback;
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "step %u (%s): position %lld is out of range for sequence '%s' of %lld tensors",
                      c->step, op_name(c), (long long)given, arg_name(c, 0), (long long)count);
  }
  *out = (uint32_t)p;
  return ONNXC_OK;
}

static onnxc_status run_copy(onnxc_host_call *c) {
  bool want_present = !is_opt(arg_kind(c, 1));
  if (want_present) {
    onnxc_status st = need_present(c, 0);
    if (st != ONNXC_OK) return st;
  }
  return onnxc_value_copy(store(c, 1), store(c, 0));
}

static onnxc_status run_empty(onnxc_host_call *c) {
  onnxc_value_store *y = store(c, 0);
  onnxc_value_clear(y);
  int32_t kind = arg_kind(c, 0);
  y->present = is_seq(kind) && !is_opt(kind);
  return ONNXC_OK;
}

static onnxc_status run_insert(onnxc_host_call *c) {
  onnxc_status st = need_present(c, 0);
  if (st != ONNXC_OK) return st;
  onnxc_value_store *s = store(c, 0), *y = store(c, 3);
  uint32_t at;
  st = position(c, 2, s->count, s->count, s->count, &at);
  if (st == ONNXC_OK) st = onnxc_value_copy(y, s);
  const onnxc_host_tensor *t = &c->t[1];
  if (st == ONNXC_OK) st = onnxc_value_insert(y, at, t->dtype, t->rank, t->dims, t->data, t->numel * onnxc_dtype_size(t->dtype));
  return st;
}

static onnxc_status run_erase(onnxc_host_call *c) {
  onnxc_status st = need_present(c, 0);
  if (st != ONNXC_OK) return st;
  onnxc_value_store *s = store(c, 0), *y = store(c, 2);
  uint32_t at;
  st = position(c, 1, s->count, (int64_t)s->count - 1, (int64_t)s->count - 1, &at);
  if (st == ONNXC_OK) st = onnxc_value_copy(y, s);
  if (st == ONNXC_OK) onnxc_value_erase(y, at);
  return st;
}

/* Writes item into output tensor argument `out`, binding its dims (SequenceAt, OptionalGetElement). */
static onnxc_status emit_item(onnxc_host_call *c, int out, const onnxc_item *item) {
  const onnxc_host_tensor *y = &c->t[out];
  if (item->rank != y->rank) {
    return onnxc_fail(ONNXC_ERR_SHAPE_MISMATCH, "step %u (%s): the tensor read has rank %d but output '%s' has rank %d", c->step,
                      op_name(c), item->rank, arg_name(c, out), y->rank);
  }
  onnxc_status st = onnxc_host_bind(c, item->dims);
  if (st == ONNXC_OK) st = onnxc_host_check_dims(c, out, item->dims, item->rank);
  if (st == ONNXC_OK && item->bytes > 0) memcpy(c->t[out].data, item->data, (size_t)item->bytes);
  return st;
}

static onnxc_status run_at(onnxc_host_call *c) {
  onnxc_status st = need_present(c, 0);
  if (st != ONNXC_OK) return st;
  onnxc_value_store *s = store(c, 0);
  uint32_t at;
  st = position(c, 1, s->count, -1, (int64_t)s->count - 1, &at);
  return st == ONNXC_OK ? emit_item(c, 2, &s->items[at]) : st;
}

static onnxc_status run_length(onnxc_host_call *c) {
  onnxc_status st = need_present(c, 0);
  if (st == ONNXC_OK) *(int64_t *)c->t[1].data = store(c, 0)->count;
  return st;
}

static onnxc_status run_wrap(onnxc_host_call *c) {
  onnxc_value_store *y = store(c, 1);
  const onnxc_host_tensor *t = &c->t[0];
  onnxc_value_clear(y);
  return onnxc_value_insert(y, 0, t->dtype, t->rank, t->dims, t->data, t->numel * onnxc_dtype_size(t->dtype));
}

static onnxc_status run_has(onnxc_host_call *c) {
  *(uint8_t *)c->t[1].data = store(c, 0)->present ? 1 : 0;
  return ONNXC_OK;
}

static onnxc_status run_get(onnxc_host_call *c) {
  onnxc_status st = need_present(c, 0);
  return st == ONNXC_OK ? emit_item(c, 1, &store(c, 0)->items[0]) : st;
}

/* Sequence and optional ops: one output, no scalars, arguments read through c->value. */
#define VALUE_OP(entry, op_name, n_in, binds, check_fn, run_fn)                                                    \
  const onnxc_host_op_info entry = {.name = op_name, .n_inputs = n_in, .n_outputs = 1, .n_scalars = 0,              \
                                    .n_binds = binds, .takes_values = true, .check = check_fn, .run = run_fn};
VALUE_OP(onnxc_host_value_copy, "Identity", 1, 0, check_copy, run_copy)
VALUE_OP(onnxc_host_value_empty, "SequenceEmpty", 0, 0, check_empty, run_empty)
VALUE_OP(onnxc_host_seq_insert, "SequenceInsert", 3, 0, check_insert, run_insert)
VALUE_OP(onnxc_host_seq_at, "SequenceAt", 2, -1, check_at, run_at)
VALUE_OP(onnxc_host_seq_erase, "SequenceErase", 2, 0, check_erase, run_erase)
VALUE_OP(onnxc_host_seq_length, "SequenceLength", 1, 0, check_length, run_length)
VALUE_OP(onnxc_host_opt_wrap, "Optional", 1, 0, check_wrap, run_wrap)
VALUE_OP(onnxc_host_opt_has, "OptionalHasElement", 1, 0, check_has, run_has)
VALUE_OP(onnxc_host_opt_get, "OptionalGetElement", 1, -1, check_get, run_get)
