/* Session lifetime, options, run and outputs: the public face of the executor (plan.c, execute.c). */
#include <stdlib.h>
#include <string.h>

#include "cache_api.h"
#include "cuda_session.h"
#include "execute.h"
#include "kv_cache.h"
#include "handles.h"
#include "plan.h"
#include "step_host.h"
#include "value_store.h"

#define DEFAULT_CACHED_PLANS 8
#define MAX_CACHED_PLANS 1024

void onnxc_session_options_default(onnxc_session_options *options) {
  if (!options) return;
  memset(options, 0, sizeof *options);
  options->num_threads = 0;
  options->max_cached_plans = DEFAULT_CACHED_PLANS;
  options->max_arena_bytes = 0;
}

static void destroy(onnxc_session *s) {
  if (s->buffers && s->device_bytes && s->device_wrapped) onnxc_release_device_buffers(s);
  for (uint32_t i = 0; s->plans && i < s->options.max_cached_plans; i++) onnxc_free_plan(s->plans[i]);
  free(s->plans);
  free(s->bound);
  free(s->input_data);
  free(s->input_dims);
  free(s->symbols);
  free(s->symbol_input);
  free(s->symbol_axis);
  free(s->buffers);
  free(s->dims);
  free(s->scalars);
  free(s->args);
  free(s->device_bytes);
  free(s->device_wrapped);
  free(s->input_on_device);
  free(s->run_dims);
  free(s->run_bytes);
  onnxc_free_blocks(s);
  onnxc_host_states_free(s);
  free(s->blocks);
  free(s->block_bytes);
  free(s->loop_iter);
  onnxc_values_free(s->values, s->model->desc->n_tensors);
  onnxc_cache_free(s);
  free(s->arena);
  onnxc_model_release(s->model);
  free(s);
}

/* args[j] of every step points at its tensor's buffer or at scalar slot j, once and for all. */
static void wire_args(onnxc_session *s) {
  const onnxc_model *m = s->model;
  for (uint32_t k = 0; k < m->desc->n_steps; k++) {
    const onnxc_step *step = &m->desc->steps[k];
    for (int32_t i = 0; i < step->n_args; i++) {
      uint32_t j = m->arg_offset[k] + (uint32_t)i;
      s->args[j] = step->args[i] >= 0 ? (void *)&s->buffers[step->args[i]] : (void *)&s->scalars[j];
    }
  }
}

static bool allocate(onnxc_session *s) {
  const onnxc_model *m = s->model;
  const onnxc_model_desc *d = m->desc;
  size_t inputs = (size_t)d->n_inputs + 1, symbols = (size_t)d->n_symbols + 1, tensors = (size_t)d->n_tensors + 1;
  size_t dims = (size_t)m->dim_offset[d->n_tensors] + 1, args = (size_t)m->arg_offset[d->n_steps] + 1;
  s->plans = calloc(s->options.max_cached_plans, sizeof *s->plans);
  s->bound = calloc(inputs, sizeof *s->bound);
  s->input_data = calloc(inputs, sizeof *s->input_data);
  s->input_dims = calloc(dims, sizeof *s->input_dims);
  s->symbols = calloc(symbols, sizeof *s->symbols);
  s->symbol_input = calloc(symbols, sizeof *s->symbol_input);
  s->symbol_axis = calloc(symbols, sizeof *s->symbol_axis);
  s->buffers = calloc(tensors, sizeof *s->buffers);
  s->dims = calloc(dims, sizeof *s->dims);
  s->scalars = calloc(args, sizeof *s->scalars);
  s->args = calloc(args, sizeof *s->args);
  s->device_bytes = calloc(tensors, sizeof *s->device_bytes);
  s->device_wrapped = calloc(tensors, sizeof *s->device_wrapped);
  s->input_on_device = calloc(inputs, sizeof *s->input_on_device);
  s->run_dims = calloc(dims, sizeof *s->run_dims);
  s->run_bytes = calloc(tensors, sizeof *s->run_bytes);
  s->blocks = calloc((size_t)d->n_steps + 1, sizeof *s->blocks);
  s->block_bytes = calloc((size_t)d->n_steps + 1, sizeof *s->block_bytes);
  s->loop_iter = calloc((size_t)d->n_steps + 1, sizeof *s->loop_iter);
  s->values = onnxc_values_create(d->n_tensors);
  s->arena = aligned_alloc(ONNXC_ARENA_ALIGNMENT, ONNXC_ARENA_ALIGNMENT); /* non-NULL even when unused */
  return s->plans && s->bound && s->input_data && s->input_dims && s->symbols && s->symbol_input && s->symbol_axis &&
         s->buffers && s->dims && s->scalars && s->args && s->device_bytes && s->device_wrapped &&
         s->input_on_device && s->run_dims && s->run_bytes && s->blocks && s->block_bytes && s->loop_iter && s->values && s->arena &&
         onnxc_host_states_create(s);
}

static onnxc_status create(onnxc_model *model, const onnxc_session_options *options, onnxc_session **out) {
  onnxc_session_options opts;
  onnxc_session_options_default(&opts);
  if (options) opts = *options;
  if (opts.num_threads < 0) {
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_session_create: num_threads is %d; use 0 for all cores", opts.num_threads);
  }
  if (opts.max_cached_plans == 0) opts.max_cached_plans = DEFAULT_CACHED_PLANS;
  if (opts.max_cached_plans > MAX_CACHED_PLANS) opts.max_cached_plans = MAX_CACHED_PLANS;
  onnxc_session *s = calloc(1, sizeof *s);
  if (!s) return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "out of memory creating a session");
  onnxc_model_retain(model);
  s->model = model;
  s->options = opts;
  if (!allocate(s)) {
    destroy(s);
    return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "out of memory creating a session for model '%s'", model->desc->name);
  }
  wire_args(s);
  onnxc_unbind_inputs(s);
  if (!onnxc_handle_register(s)) {
    destroy(s);
    return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "out of memory creating a session for model '%s'", model->desc->name);
  }
  *out = s;
  return ONNXC_OK;
}

onnxc_status onnxc_session_create(onnxc_model *model, const onnxc_session_options *options, onnxc_session **out) {
  if (!out) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_session_create: out is NULL");
  *out = NULL;
  if (!model) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_session_create: model is NULL");
  return create(model, options, out);
}

void onnxc_session_free(onnxc_session *s) {
  if (!s) return;
  if (!onnxc_handle_unregister(s)) {
    onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_session_free: %p is not a live session (freed twice?); ignored",
               (void *)s);
    return;
  }
  destroy(s);
}

/* Grows the arena to hold `bytes` (its old contents are dead between runs). */
static onnxc_status reserve_arena(onnxc_session *s, uint64_t bytes) {
  if (bytes <= s->arena_bytes) return ONNXC_OK;
  uint64_t rounded = (bytes + ONNXC_ARENA_ALIGNMENT - 1) & ~(uint64_t)(ONNXC_ARENA_ALIGNMENT - 1);
  uint8_t *arena = rounded <= SIZE_MAX ? aligned_alloc(ONNXC_ARENA_ALIGNMENT, (size_t)rounded) : NULL;
  if (!arena) {
    return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "cannot allocate the %llu-byte arena for model '%s'", (unsigned long long)rounded,
                      s->model->desc->name);
  }
  free(s->arena);
  s->arena = arena;
  s->arena_bytes = rounded;
  return ONNXC_OK;
}

static onnxc_status run(onnxc_session *s) {
  const onnxc_plan *plan = NULL;
  onnxc_status st = onnxc_cache_feed_inputs(s);
  if (st == ONNXC_OK) st = onnxc_check_bound_inputs(s);
  if (st == ONNXC_OK) st = onnxc_get_plan(s, &plan);
  if (st == ONNXC_OK && s->options.max_arena_bytes && plan->arena_bytes > s->options.max_arena_bytes) {
    st = onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "model '%s' needs a %llu-byte arena for these input shapes but max_arena_bytes is %llu",
                    s->model->desc->name, (unsigned long long)plan->arena_bytes, (unsigned long long)s->options.max_arena_bytes);
  }
  if (st == ONNXC_OK) st = reserve_arena(s, plan->arena_bytes);
  if (st == ONNXC_OK) st = onnxc_execute(s, plan);
  if (st == ONNXC_OK) s->outputs = plan;
  if (st == ONNXC_OK) onnxc_cache_commit(s);
  return st;
}

onnxc_status onnxc_session_run(onnxc_session *s) {
  if (!s) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_session_run: session is NULL");
  s->outputs = NULL;
  onnxc_status st = run(s);
  onnxc_unbind_inputs(s);
  return onnxc_keep_error(s->error, st);
}

onnxc_status onnxc_output_tensor(onnxc_session *s, size_t index, onnxc_tensor *out, const char *call) {
  const onnxc_model *m = s->model;
  if (!out) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "%s: out is NULL", call);
  memset(out, 0, sizeof *out);
  if (index >= m->desc->n_outputs) {
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "output index %zu is out of range: model '%s' has %u output%s", index,
                      m->desc->name, m->desc->n_outputs, m->desc->n_outputs == 1 ? "" : "s");
  }
  int32_t t = m->outputs[index].tensor;
  if (!s->outputs) {
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "output '%s' (index %zu) is not available: the last onnxc_session_run failed or none has run",
                      m->desc->tensors[t].name, index);
  }
  if (m->desc->tensors[t].value != ONNXC_VALUE_TENSOR) {
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "output '%s' (index %zu) is a sequence or optional: read it with onnxc_session_get_output_value",
                      m->desc->tensors[t].name, index);
  }
  if (onnxc_cache_of_output(s, t)) {
    return onnxc_fail(ONNXC_ERR_UNSUPPORTED, "output '%s' (index %zu) stays in the session's KV cache (onnxc_session_keep_cache), "
                      "laid out with capacity: it is the next run's past, not a dense tensor to read",
                      m->desc->tensors[t].name, index);
  }
  out->dtype = m->desc->tensors[t].dtype;
  out->rank = m->desc->tensors[t].rank;
  out->dims = &s->run_dims[m->dim_offset[t]];
  out->data = s->buffers[t].host;
  return ONNXC_OK;
}

static onnxc_status get_output(onnxc_session *s, size_t index, onnxc_tensor *out) {
  onnxc_status st = onnxc_output_tensor(s, index, out, "onnxc_session_get_output");
  if (st == ONNXC_OK && s->model->desc->uses_cuda) { /* outputs left on the device are copied when read */
    st = onnxc_cuda_output_to_host(s, (uint32_t)index);
    if (st == ONNXC_OK) out->data = s->buffers[s->model->outputs[index].tensor].host;
    else memset(out, 0, sizeof *out);
  }
  return st;
}

onnxc_status onnxc_session_get_output(onnxc_session *s, size_t index, onnxc_tensor *out) {
  if (!s) {
    if (out) memset(out, 0, sizeof *out);
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_session_get_output: session is NULL");
  }
  return onnxc_keep_error(s->error, get_output(s, index, out));
}

onnxc_status onnxc_session_get_output_by_name(onnxc_session *s, const char *name, onnxc_tensor *out) {
  if (out) memset(out, 0, sizeof *out);
  if (!s) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_session_get_output_by_name: session is NULL");
  size_t index;
  onnxc_status st = onnxc_model_output_index(s->model, name, &index);
  if (st == ONNXC_OK) st = get_output(s, index, out);
  return onnxc_keep_error(s->error, st);
}

const char *onnxc_session_last_error(const onnxc_session *s) { return s ? s->error : ""; }

onnxc_model *onnxc_session_model(const onnxc_session *s) { return s ? s->model : NULL; }

uint64_t onnxc_session_arena_bytes(const onnxc_session *s) { return s ? s->arena_bytes : 0; }

onnxc_status onnxc_session_set_profiler(onnxc_session *s, onnxc_profile_callback callback, void *user) {
  if (!s) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_session_set_profiler: session is NULL");
  s->profiler = callback;
  s->profiler_user = user;
  return ONNXC_OK;
}
