/* The session's state, shared by the executor (plan.c, execute.c and the step kinds' files) and the
 * public API over it (session.c, bind.c, values_api.c). Host ops never see it (host_op.h). */
#ifndef ONNXC_RUNTIME_SESSION_STATE_H
#define ONNXC_RUNTIME_SESSION_STATE_H

#include <HalideRuntime.h>
#include <stdbool.h>

#include "error.h"
#include "model.h"

/* Arena offsets, tensor bytes and the arena base are multiples of this (a cache line; AVX-512 vector). */
#define ONNXC_ARENA_ALIGNMENT 64

/* Everything that depends on the input shapes, i.e. on the values of the symbols bound by input dims:
 * built once per distinct set of values and cached. Tensors and scalars that use symbols bound from data
 * (model->tensor_step >= 0) are left out: step_host.c evaluates and places them during each run. */
typedef struct onnxc_plan {
  int64_t *symbols;    /* n_symbols: the key */
  int64_t *dims;       /* model->dim_offset[n_tensors]: every tensor's evaluated dims */
  uint64_t *bytes;     /* n_tensors: dense size */
  uint64_t *offset;    /* n_tensors: arena offset (arena roots only) */
  int64_t *scalars;    /* model->arg_offset[n_steps]: the value of each scalar argument slot */
  uint64_t arena_bytes;
  uint64_t last_used;  /* session clock, for least-recently-used eviction */
} onnxc_plan;

/* One KV cache the session keeps (kv_cache.c): a CACHE_APPEND step from input `past` to output `present`. */
typedef struct onnxc_cache_slot {
  uint32_t step;
  int32_t past, present;  /* tensor ids */
  int32_t input, output;  /* their input and output indices */
  int32_t axis;
  bool own_capacity;      /* present is shaped like past: the model's own length is the capacity (CACHE_SCATTER) */
  uint8_t *data;          /* capacity positions along axis; NULL until the first run */
  uint64_t bytes;
  int64_t dims[8];        /* present's dims after the last run (filled) */
  int32_t rank;
  bool filled;            /* holds a present: a run without its past set reads it */
  bool fed;               /* this run's past is the cache */
} onnxc_cache_slot;

struct onnxc_session {
  onnxc_model *model;
  onnxc_session_options options;
  char error[ONNXC_ERROR_CAPACITY];

  /* Inputs bound since the last run (borrowed data, copied dims). */
  bool *bound;             /* n_inputs */
  void **input_data;       /* n_inputs */
  int64_t *input_dims;     /* model->dim_offset[n_tensors], at each input tensor's offset */
  int64_t *symbols;        /* n_symbols: values bound so far */
  int32_t *symbol_input;   /* n_symbols: the input that bound it, -1 if none yet */
  int32_t *symbol_axis;    /* n_symbols: and its axis */

  /* Kernel arguments: one halide_buffer_t per tensor, one int64 per scalar slot; args point at them. */
  halide_buffer_t *buffers;  /* n_tensors */
  halide_dimension_t *dims;  /* model->dim_offset[n_tensors] */
  int64_t *scalars;          /* model->arg_offset[n_steps] */
  void **args;               /* model->arg_offset[n_steps] */
  uint64_t *device_bytes;    /* n_tensors (CUDA): size of the device allocation Halide made for a root, 0 if none */
  bool *device_wrapped;      /* n_tensors (CUDA): the root's device handle is a range of the device arena or a
                                caller's pointer (detached, never freed); else Halide's own allocation */

  /* This run's shapes: the plan's, plus those bound from data as host steps run. Outputs read them. */
  int64_t *run_dims;         /* model->dim_offset[n_tensors] */
  uint64_t *run_bytes;       /* n_tensors */
  uint8_t **blocks;          /* n_steps: host step k's block for the tensors its binds size; kept, reused */
  uint64_t *block_bytes;     /* n_steps: their capacities */
  void **host_state;         /* n_steps: host step k's op state (its table entry's state_bytes), or NULL */
  int64_t *loop_iter;        /* n_steps: each LOOP step's iteration count */
  struct onnxc_value_store *values; /* value_store.h: n_tensors; the contents of sequences and optionals */

  onnxc_plan **plans;        /* options.max_cached_plans slots */
  uint64_t clock;
  const onnxc_plan *outputs; /* plan of the last successful run; NULL when outputs are not readable */

  onnxc_profile_callback profiler; /* NULL: runs are not timed */
  void *profiler_user;

  onnxc_cache_slot *cache;   /* n_cache KV caches kept between runs (onnxc_session_keep_cache) */
  uint32_t n_cache;
  int64_t cache_capacity;

  uint8_t *arena;            /* ONNXC_ARENA_ALIGNMENT-aligned, never NULL after creation */
  uint64_t arena_bytes;

  /* CUDA libraries (cuda_session.c): the device arena, one device allocation holding every arena tensor
   * at its plan offset (as the host arena does), grown with the largest plan; the caller's device
   * pointers and context/stream (cuda_api.c). */
  halide_buffer_t device_arena;         /* uint8 [64, bytes / 64]; device 0 until the first run */
  halide_dimension_t device_arena_dims[2];
  uint64_t device_arena_bytes;
  bool *input_on_device;     /* n_inputs: input_data[i] is a device address (onnxc_session_set_input_device) */
  bool outputs_on_device;    /* runs leave outputs on the device; get_output copies one when asked */
  void *cuda_context;        /* CUcontext and CUstream the kernels run in and on; NULL: the device's */
  void *cuda_stream;         /*   primary context, its default stream */
};

/* bind.c: binds input i after checking it against the model; on_device: x->data is a device address. */
onnxc_status onnxc_bind_input(onnxc_session *s, size_t i, const onnxc_tensor *x, bool on_device);
/* session.c: describes output `index` of the last run (dims, dtype, host data) after the checks every
 * reader of an output makes; sets no error text of the session. */
onnxc_status onnxc_output_tensor(onnxc_session *s, size_t index, onnxc_tensor *out, const char *call);
/* bind.c: clears every binding (after a run). */
void onnxc_unbind_inputs(onnxc_session *s);
/* bind.c: all inputs set, and input dims that are expressions of symbols agree with them. */
onnxc_status onnxc_check_bound_inputs(onnxc_session *s);

#endif
