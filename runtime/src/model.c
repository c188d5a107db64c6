/* The loaded model: validation, the data derived once per model, reference counts, and the model
 * introspection calls. Opening a library or a static descriptor is model_open.c's. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "handles.h"
#include "cuda_driver.h"
#include "kernel_errors.h"
#include "model.h"
#include "model_validate.h"
#include "known_at.h"

static void destroy(onnxc_model *model) {
  const onnxc_model_desc *d = model->desc;
  if (model->expr_text) {
    for (uint32_t i = 0; i < d->n_exprs; i++) free(model->expr_text[i]);
  }
  onnxc_io_info *lists[2] = {model->inputs, model->outputs};
  uint32_t counts[2] = {d ? d->n_inputs : 0, d ? d->n_outputs : 0};
  for (int l = 0; l < 2; l++) {
    for (uint32_t i = 0; lists[l] && i < counts[l]; i++) {
      free(lists[l][i].dims);
      free(lists[l][i].dim_names);
    }
    free(lists[l]);
  }
  free(model->expr_text);
  free(model->root);
  free(model->first_use);
  free(model->last_use);
  free(model->symbol_step);
  free(model->tensor_step);
  free(model->dim_offset);
  free(model->arg_offset);
  onnxc_weights_release(&model->weights);
  if (model->library) dlclose(model->library);
  free(model);
}

static bool build_io(onnxc_model *model, const int32_t *ids, uint32_t n, onnxc_io_info **out) {
  *out = calloc(n ? n : 1, sizeof **out);
  if (!*out) return false;
  for (uint32_t i = 0; i < n; i++) {
    const onnxc_tensor_desc *td = &model->desc->tensors[ids[i]];
    onnxc_io_info *io = &(*out)[i];
    io->tensor = ids[i];
    io->dims = calloc((size_t)td->rank + 1, sizeof *io->dims);
    io->dim_names = calloc((size_t)td->rank + 1, sizeof *io->dim_names);
    if (!io->dims || !io->dim_names) return false;
    for (int32_t a = 0; a < td->rank; a++) {
      int64_t v;
      if (onnxc_expr_is_const(&model->exprs, (uint32_t)td->dims[a], &v)) {
        io->dims[a] = v;
      } else {
        io->dims[a] = -1;
        io->dim_names[a] = model->expr_text[td->dims[a]];
      }
    }
  }
  return true;
}

/* Everything derived from a validated descriptor. False only when out of memory. */
static bool derive(onnxc_model *model) {
  const onnxc_model_desc *d = model->desc;
  model->exprs = (onnxc_expr_table){d->n_exprs, d->expr_start, d->expr_code, d->n_symbols};
  size_t nt = (size_t)d->n_tensors + 1;
  model->expr_text = calloc((size_t)d->n_exprs + 1, sizeof *model->expr_text);
  model->root = calloc(nt, sizeof *model->root);
  model->first_use = calloc(nt, sizeof *model->first_use);
  model->last_use = calloc(nt, sizeof *model->last_use);
  model->dim_offset = calloc(nt, sizeof *model->dim_offset);
  model->arg_offset = calloc((size_t)d->n_steps + 1, sizeof *model->arg_offset);
  model->symbol_step = calloc((size_t)d->n_symbols + 1, sizeof *model->symbol_step);
  model->tensor_step = calloc(nt, sizeof *model->tensor_step);
  if (!model->expr_text || !model->root || !model->first_use || !model->last_use || !model->dim_offset ||
      !model->arg_offset || !model->symbol_step || !model->tensor_step) {
    return false;
  }
  for (uint32_t i = 0; i < d->n_exprs; i++) {
    model->expr_text[i] = onnxc_expr_render(&model->exprs, d->symbols, i);
    if (!model->expr_text[i]) return false;
  }
  for (uint32_t t = 0; t < d->n_tensors; t++) {
    int32_t r = (int32_t)t;
    while (d->tensors[r].kind == ONNXC_TENSOR_VIEW) r = d->tensors[r].view_of;
    model->root[t] = r;
    model->dim_offset[t + 1] = model->dim_offset[t] + (uint32_t)d->tensors[t].rank;
  }
  for (uint32_t k = 0; k < d->n_steps; k++) {
    model->arg_offset[k + 1] = model->arg_offset[k] + (uint32_t)d->steps[k].n_args;
  }
  onnxc_compute_lifetimes(d, model->kinds, model->root, model->first_use, model->last_use);
  onnxc_symbol_steps(d, model->kinds, model->symbol_step);
  onnxc_tensor_steps(d, &model->exprs, model->symbol_step, model->tensor_step);
  model->large_buffers = d->target && strstr(d->target, "large_buffers") != NULL;
  return build_io(model, d->inputs, d->n_inputs, &model->inputs) &&
         build_io(model, d->outputs, d->n_outputs, &model->outputs);
}

onnxc_status onnxc_model_create(const onnxc_model_desc *desc, const onnxc_step_kind_info *kinds, void *library,
                                onnxc_model **out) {
  onnxc_status st = onnxc_validate_desc(desc, kinds);
  if (st != ONNXC_OK) return st;
  onnxc_model *model = calloc(1, sizeof *model);
  if (!model) return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "out of memory loading model '%s'", desc->name);
  atomic_init(&model->refs, 1);
  model->desc = desc;
  model->kinds = kinds;
  if (!derive(model)) {
    destroy(model);
    return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "out of memory loading model '%s'", desc->name);
  }
  onnxc_weights_place(desc, library != NULL, &model->weights);
  model->library = library;
  onnxc_halide_error_handler (*set_handler)(onnxc_halide_error_handler) = desc->set_error_handler;
  if (!set_handler && library) {
    /* dlsym returns void *; the cast through a union avoids ISO C's object-to-function pointer warning. */
    union { void *object; onnxc_halide_error_handler (*fn)(onnxc_halide_error_handler); } sym;
    sym.object = dlsym(library, "halide_set_error_handler");
    set_handler = sym.fn;
  }
  if (set_handler) set_handler(onnxc_kernel_error_handler);
  onnxc_cuda_install_hooks(desc);
  if (!onnxc_handle_register(model)) {
    model->library = NULL; /* the caller closes it */
    destroy(model);
    return onnxc_fail(ONNXC_ERR_OUT_OF_MEMORY, "out of memory loading model '%s'", desc->name);
  }
  *out = model;
  return ONNXC_OK;
}

void onnxc_model_retain(onnxc_model *model) { atomic_fetch_add_explicit(&model->refs, 1, memory_order_relaxed); }

void onnxc_model_release(onnxc_model *model) {
  if (model && atomic_fetch_sub_explicit(&model->refs, 1, memory_order_acq_rel) == 1) destroy(model);
}

/* Drops the caller's one reference. A second free finds the handle no longer registered and is
 * refused: it cannot take a reference that belongs to a session. */
void onnxc_model_free(onnxc_model *model) {
  if (!model) return;
  if (!onnxc_handle_unregister(model)) {
    onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_model_free: %p is not a live model (freed twice?); ignored",
               (void *)model);
    return;
  }
  onnxc_model_release(model);
}

const onnxc_model_desc *onnxc_model_desc_of(const onnxc_model *model) { return model ? model->desc : NULL; }

uint64_t onnxc_model_copied_weight_bytes(const onnxc_model *model) { return model ? model->weights.copied : 0; }

const char *onnxc_model_name(const onnxc_model *model) { return model ? model->desc->name : ""; }

const char *onnxc_model_target(const onnxc_model *model) {
  return model && model->desc->target ? model->desc->target : "";
}

size_t onnxc_model_num_inputs(const onnxc_model *model) { return model ? model->desc->n_inputs : 0; }

size_t onnxc_model_num_outputs(const onnxc_model *model) { return model ? model->desc->n_outputs : 0; }

static onnxc_status io_info(const onnxc_model *model, size_t index, onnxc_value_info *out, bool input) {
  const char *fn = input ? "onnxc_model_input_info" : "onnxc_model_output_info";
  if (out) memset(out, 0, sizeof *out);
  if (!model || !out) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, model ? "out" : "model");
  uint32_t n = input ? model->desc->n_inputs : model->desc->n_outputs;
  if (index >= n) {
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "%s index %zu is out of range: model '%s' has %u %ss", input ? "input" : "output",
                      index, model->desc->name, n, input ? "input" : "output");
  }
  const onnxc_io_info *io = input ? &model->inputs[index] : &model->outputs[index];
  const onnxc_tensor_desc *td = &model->desc->tensors[io->tensor];
  *out = (onnxc_value_info){td->name, td->dtype, td->rank, io->dims, io->dim_names};
  return ONNXC_OK;
}

onnxc_status onnxc_model_input_info(const onnxc_model *model, size_t index, onnxc_value_info *out) {
  return io_info(model, index, out, true);
}

onnxc_status onnxc_model_output_info(const onnxc_model *model, size_t index, onnxc_value_info *out) {
  return io_info(model, index, out, false);
}

/* Lists "a, b, c" into buf for not-found messages. */
static void list_names(const onnxc_model *model, bool input, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  uint32_t n = input ? model->desc->n_inputs : model->desc->n_outputs;
  for (uint32_t i = 0; i < n; i++) {
    int32_t t = input ? model->desc->inputs[i] : model->desc->outputs[i];
    onnxc_appendf(buf, cap, &len, "%s'%s'", i ? ", " : "", model->desc->tensors[t].name);
  }
}

static onnxc_status find(const onnxc_model *model, const char *name, size_t *index, bool input) {
  const char *fn = input ? "onnxc_model_input_index" : "onnxc_model_output_index";
  if (!model || !name || !index) {
    return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !model ? "model" : !name ? "name" : "index");
  }
  uint32_t n = input ? model->desc->n_inputs : model->desc->n_outputs;
  for (uint32_t i = 0; i < n; i++) {
    int32_t t = input ? model->desc->inputs[i] : model->desc->outputs[i];
    if (strcmp(model->desc->tensors[t].name, name) == 0) {
      *index = i;
      return ONNXC_OK;
    }
  }
  char names[512];
  list_names(model, input, names, sizeof names);
  return onnxc_fail(ONNXC_ERR_NOT_FOUND, "model '%s' has no %s named '%s'; its %ss are: %s", model->desc->name,
                    input ? "input" : "output", name, input ? "input" : "output", names);
}

onnxc_status onnxc_model_input_index(const onnxc_model *model, const char *name, size_t *index) {
  return find(model, name, index, true);
}

onnxc_status onnxc_model_output_index(const onnxc_model *model, const char *name, size_t *index) {
  return find(model, name, index, false);
}
