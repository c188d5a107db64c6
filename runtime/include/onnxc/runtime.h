/* onnxc runtime: load a model library compiled by `onnxc compile` and run it. C99, no exceptions, never
 * aborts the host program: every call returns a status and leaves a message (onnxc_last_error(), and
 * onnxc_session_last_error() for calls on a session).
 *
 * Usage (error handling shortened to CHECK, which would print onnxc_last_error() and bail out):
 *
 *   onnxc_model *model = NULL;
 *   CHECK(onnxc_model_open("./libencoder.so", &model));        // or onnxc_model_from_desc(onnxc_model_encoder(), &model)
 *   onnxc_session *session = NULL;
 *   CHECK(onnxc_session_create(model, NULL, &session));         // NULL options = onnxc_session_options_default
 *   int64_t dims[3] = {2, 16, 512};                             // batch 2, seq 16
 *   onnxc_tensor src = {ONNXC_DTYPE_FLOAT, 3, dims, src_data};  // borrowed until onnxc_session_run returns
 *   CHECK(onnxc_session_set_input_by_name(session, "src", &src));
 *   CHECK(onnxc_session_run(session));
 *   onnxc_tensor out;
 *   CHECK(onnxc_session_get_output(session, 0, &out));          // out.data, out.dims: owned by the session
 *   ... read out.data (out.rank dims at out.dims) until the next run or onnxc_session_free ...
 *   onnxc_session_free(session);
 *   onnxc_model_free(model);                                    // either order: sessions keep the model alive
 *
 * Ownership and lifetime rules, stated once here and again on each call:
 *  - Strings and arrays returned by the runtime are owned by it: model strings live until the model's last
 *    reference is gone; session outputs live until the next run on that session or its free.
 *  - Input data is borrowed, never copied: it must stay valid and unchanged until onnxc_session_run
 *    returns. A run consumes its inputs: set every input again before the next run.
 *  - Out-parameters are set (to NULL or zero where they are handles/tensors) on failure too.
 *
 * Threads:
 *  - A model is immutable and may be shared by sessions on any threads; creating and freeing sessions of
 *    one model on several threads at once is safe (the model's reference count is atomic).
 *  - A session is used by one thread at a time. It may be handed from one thread to another between
 *    calls (with the usual happens-before, e.g. a mutex or a thread join); it holds no thread-local state.
 *    Outputs read after the hand-over are those of the last run.
 *  - Distinct sessions may run concurrently, of one model or of several.
 *  - The Halide thread pool belongs to the model library (one per loaded library), not to a session:
 *    sessions of one model running at once share its workers (see onnxc_session_options.num_threads).
 *  - onnxc_last_error() is per thread; onnxc_session_last_error() per session.
 *  Tested by tests/runtime/threads_test.cpp (N sessions on N threads, one session handed between threads).
 *
 * Freeing:
 *  - onnxc_model_free and onnxc_session_free accept NULL. Freeing a handle twice is detected and refused
 *    (the call does nothing but set onnxc_last_error()), as is freeing a pointer the runtime never
 *    returned: the runtime keeps the set of live handles. This is a safety net, not a licence: once the
 *    address is reused by a new handle, a stale second free releases that new handle.
 *  - Any other call on a freed handle is undefined behaviour (it reads freed memory).
 */
#ifndef ONNXC_RUNTIME_H
#define ONNXC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "onnxc/model_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ONNXC_API __attribute__((visibility("default")))
#else
#define ONNXC_API
#endif

/* ---- status and errors ---------------------------------------------------------------------------- */

typedef enum onnxc_status {
  ONNXC_OK = 0,
  ONNXC_ERR_INVALID_ARGUMENT = 1, /* NULL pointer, index out of range, input not set, ... */
  ONNXC_ERR_NOT_FOUND = 2,        /* no input/output of that name */
  ONNXC_ERR_DTYPE_MISMATCH = 3,   /* an input's dtype differs from the model's */
  ONNXC_ERR_SHAPE_MISMATCH = 4,   /* rank, a fixed dim, or an inconsistent symbol; bad shape arithmetic */
  ONNXC_ERR_OUT_OF_MEMORY = 5,
  ONNXC_ERR_KERNEL_FAILED = 6,    /* a kernel (or a device copy) returned an error */
  ONNXC_ERR_LOAD_FAILED = 7,      /* dlopen/dlsym failed or the descriptor is malformed */
  ONNXC_ERR_UNSUPPORTED = 8,      /* e.g. a dtype or ABI version this runtime does not handle */
  ONNXC_ERR_INTERNAL = 9          /* a runtime bug */
} onnxc_status;

/* A static string naming the status ("ONNXC_ERR_SHAPE_MISMATCH"); never NULL. */
ONNXC_API const char *onnxc_status_string(onnxc_status status);

/* The message of the most recent failed call on this thread (any handle or none); "" if none failed yet.
 * Owned by the runtime (thread-local), valid until the next failing call on this thread. */
ONNXC_API const char *onnxc_last_error(void);

/* ---- tensors -------------------------------------------------------------------------------------- */

/* ONNX TensorProto.DataType numbers for the dtypes the runtime handles. Bool is one byte per element.
 * Strings: data is an array of `const char *`, one per element (NUL-terminated, so a string cannot hold a
 * NUL byte; NULL reads as ""). An input's array and strings are borrowed like any input data; an output's
 * array and strings are owned by the session, like any output, until its next run or its free. */
enum onnxc_dtype {
  ONNXC_DTYPE_FLOAT = 1,
  ONNXC_DTYPE_UINT8 = 2,
  ONNXC_DTYPE_INT8 = 3,
  ONNXC_DTYPE_UINT16 = 4,
  ONNXC_DTYPE_INT16 = 5,
  ONNXC_DTYPE_INT32 = 6,
  ONNXC_DTYPE_INT64 = 7,
  ONNXC_DTYPE_STRING = 8, /* one `const char *` per element: NUL-terminated bytes (UTF-8 passes through) */
  ONNXC_DTYPE_BOOL = 9,
  ONNXC_DTYPE_FLOAT16 = 10,
  ONNXC_DTYPE_DOUBLE = 11,
  ONNXC_DTYPE_UINT32 = 12,
  ONNXC_DTYPE_UINT64 = 13,
  ONNXC_DTYPE_BFLOAT16 = 16,
  /* 8-bit floats, one byte per element holding its bits (ONNX's layouts; ir/float8.h in the compiler) */
  ONNXC_DTYPE_FLOAT8E4M3FN = 17,
  ONNXC_DTYPE_FLOAT8E4M3FNUZ = 18,
  ONNXC_DTYPE_FLOAT8E5M2 = 19,
  ONNXC_DTYPE_FLOAT8E5M2FNUZ = 20,
  ONNXC_DTYPE_FLOAT8E8M0 = 24,
  /* The 4-bit float E2M1, held unpacked: its 4-bit code (sign in bit 3) in the low bits of a byte. */
  ONNXC_DTYPE_FLOAT4E2M1 = 23,
  /* The sub-byte integers, held unpacked: one element per byte, signed ones sign-extended. */
  ONNXC_DTYPE_UINT4 = 21,
  ONNXC_DTYPE_INT4 = 22,
  ONNXC_DTYPE_UINT2 = 25,
  ONNXC_DTYPE_INT2 = 26
};

/* Bytes per element of an ONNX dtype; 0 for a dtype the runtime does not handle. */
ONNXC_API size_t onnxc_dtype_size(int32_t dtype);
/* A static name ("float32", "int64", "bool"); "unsupported" for a dtype the runtime does not handle. */
ONNXC_API const char *onnxc_dtype_name(int32_t dtype);

/* A dense row-major tensor (ONNX axis order, outermost first). Nothing here is owned by the struct: who
 * owns dims and data is said by the call that takes or fills it. data may be NULL when a dim is 0. */
typedef struct onnxc_tensor {
  int32_t dtype;        /* ONNX dtype number (enum onnxc_dtype) */
  int32_t rank;
  const int64_t *dims;  /* rank entries */
  void *data;
} onnxc_tensor;

/* ---- models --------------------------------------------------------------------------------------- */

typedef struct onnxc_model onnxc_model;

/* dlopen()s a compiled model library (RTLD_NOW | RTLD_LOCAL), looks up ONNXC_MODEL_ENTRY_SYMBOL and
 * validates its descriptor. On success *out is a new reference the caller releases with
 * onnxc_model_free; the library stays loaded while the model or any of its sessions lives. */
ONNXC_API onnxc_status onnxc_model_open(const char *library_path, onnxc_model **out);

/* Wraps the descriptor of a statically linked model library (onnxc_model_<NAME>()). The descriptor is
 * borrowed and must outlive the model (it is static data in the library, so it does). *out: as above. */
ONNXC_API onnxc_status onnxc_model_from_desc(const onnxc_model_desc *desc, onnxc_model **out);

/* Releases the caller's reference. Sessions hold their own, so this may come before onnxc_session_free.
 * NULL is a no-op; a model already freed by the caller is refused (see "Freeing" above). */
ONNXC_API void onnxc_model_free(onnxc_model *model);

/* The descriptor the model runs (borrowed, lives as long as the model). NULL for a NULL model. */
ONNXC_API const onnxc_model_desc *onnxc_model_desc_of(const onnxc_model *model);

/* Bytes of the model's weights copied into the process's own memory at open (0 when they are read from
 * the library's pages: a small blob, ONNXC_WEIGHTS=mapped, a CUDA model or onnxc_model_from_desc).
 * Weights that are only ever gathered from (embedding tables) are never copied. */
ONNXC_API uint64_t onnxc_model_copied_weight_bytes(const onnxc_model *model);

/* The model's name and Halide target string (owned by the model); "" for a NULL model. */
ONNXC_API const char *onnxc_model_name(const onnxc_model *model);
ONNXC_API const char *onnxc_model_target(const onnxc_model *model);

/* Input and output counts; 0 for a NULL model. */
ONNXC_API size_t onnxc_model_num_inputs(const onnxc_model *model);
ONNXC_API size_t onnxc_model_num_outputs(const onnxc_model *model);

/* What the model declares for one input or output. Every pointer is owned by the model. */
typedef struct onnxc_value_info {
  const char *name;
  int32_t dtype;
  int32_t rank;
  const int64_t *dims;           /* rank entries: the size of a fixed dim, -1 for a dynamic one */
  const char *const *dim_names;  /* rank entries: NULL for a fixed dim, else the symbol ("batch") or, for
                                    a derived dim, its expression ("seq + 1") */
} onnxc_value_info;

ONNXC_API onnxc_status onnxc_model_input_info(const onnxc_model *model, size_t index, onnxc_value_info *out);
ONNXC_API onnxc_status onnxc_model_output_info(const onnxc_model *model, size_t index, onnxc_value_info *out);

/* Index of the input/output with this name; ONNXC_ERR_NOT_FOUND if there is none. */
ONNXC_API onnxc_status onnxc_model_input_index(const onnxc_model *model, const char *name, size_t *index);
ONNXC_API onnxc_status onnxc_model_output_index(const onnxc_model *model, const char *name, size_t *index);

/* ---- sessions ------------------------------------------------------------------------------------- */

typedef struct onnxc_session onnxc_session;

typedef struct onnxc_session_options {
  /* Worker threads of the library's Halide thread pool; 0 = the library's default (`onnxc compile
   * --threads N`), and where that is 0 too, all cores (or $HL_NUM_THREADS). The pool
   * belongs to the model library, not the session: it is set before each run, and sessions of one model
   * running at once with different counts share whichever was set last. */
  int32_t num_threads;
  /* Memory plans kept for distinct input shapes (least recently used is dropped); 0 = 8. */
  uint32_t max_cached_plans;
  /* Largest arena (bytes of intermediates and outputs) a run may allocate; 0 = no limit. A run that
   * needs more fails with ONNXC_ERR_OUT_OF_MEMORY and a message giving the size. */
  uint64_t max_arena_bytes;
} onnxc_session_options;

/* Fills *options with the defaults (all cores, 8 cached plans, no arena limit). */
ONNXC_API void onnxc_session_options_default(onnxc_session_options *options);

/* Creates a session: per-shape memory plans, an arena and kernel arguments for one model. options may be
 * NULL (defaults); it is copied. The session takes its own reference on model. *out is owned by the
 * caller, released with onnxc_session_free. */
ONNXC_API onnxc_status onnxc_session_create(onnxc_model *model, const onnxc_session_options *options,
                                            onnxc_session **out);

/* Frees the session, its arena and outputs, and drops its model reference. NULL is a no-op; a session
 * already freed is refused (see "Freeing" above). */
ONNXC_API void onnxc_session_free(onnxc_session *session);

/* Binds input `index`. The tensor struct is read now; its dims are copied; its data is borrowed until
 * the next onnxc_session_run returns. Checks dtype, rank and every dim against the model: a fixed dim must
 * match, and a symbolic dim must agree with the value the same symbol took in the other inputs set since
 * the last run (setting an input again replaces it). */
ONNXC_API onnxc_status onnxc_session_set_input(onnxc_session *session, size_t index, const onnxc_tensor *tensor);
ONNXC_API onnxc_status onnxc_session_set_input_by_name(onnxc_session *session, const char *name,
                                                       const onnxc_tensor *tensor);

/* Runs the model on the bound inputs: resolves every shape, plans memory (cached per distinct input
 * shape), runs each kernel. All inputs must be set. Afterwards (success or not) no input is bound. */
ONNXC_API onnxc_status onnxc_session_run(onnxc_session *session);

/* Describes output `index` of the last successful run. out->dims and out->data are owned by the session
 * and valid until the next onnxc_session_run or onnxc_session_free. out->data points into the session's
 * arena, except for an output that is a graph input (the caller's buffer) or a constant (read-only).
 * For a CUDA library whose session leaves outputs on the device (onnxc_session_set_outputs_on_device),
 * this copies the output to the host first, and a failing copy is ONNXC_ERR_KERNEL_FAILED. */
ONNXC_API onnxc_status onnxc_session_get_output(onnxc_session *session, size_t index, onnxc_tensor *out);
ONNXC_API onnxc_status onnxc_session_get_output_by_name(onnxc_session *session, const char *name,
                                                        onnxc_tensor *out);

/* ---- sequences and optionals ---------------------------------------------------------------------- */

/* A run-time value: a tensor, a sequence of tensors or an optional (enum onnxc_value_kind in model_abi.h;
 * the model's desc says which each input and output is: tensors[inputs[i]].value). A sequence has `count`
 * tensors at `tensors`; an optional tensor has one there when `present`; an optional sequence has `count`
 * when `present`. A plain tensor is tensors[0]. */
typedef struct onnxc_value {
  int32_t kind;                 /* enum onnxc_value_kind */
  int32_t present;              /* optionals: 0 = empty; ignored for the other kinds */
  size_t count;                 /* sequences: the number of tensors */
  const onnxc_tensor *tensors;  /* count (sequence) or 1 (tensor, present optional tensor) entries */
} onnxc_value;

/* Binds input `index` to a value of the kind the model declares. A TENSOR goes to onnxc_session_set_input
 * (borrowed data). The tensors of a sequence or optional are COPIED now (dims and data), so the caller's
 * buffers are free again when this returns; each must have the model's dtype. */
ONNXC_API onnxc_status onnxc_session_set_input_value(onnxc_session *session, size_t index, const onnxc_value *value);

/* Describes output `index` of the last successful run as a value. Everything it points at is owned by the
 * session and valid until the next onnxc_session_run or onnxc_session_free. */
ONNXC_API onnxc_status onnxc_session_get_output_value(onnxc_session *session, size_t index, onnxc_value *out);

/* The message of the most recent failed call on this session; "" if none failed. Owned by the session,
 * valid until its next failing call or its free. "" for a NULL session. */
ONNXC_API const char *onnxc_session_last_error(const onnxc_session *session);

/* The model the session runs (borrowed; the session holds a reference). NULL for a NULL session. */
ONNXC_API onnxc_model *onnxc_session_model(const onnxc_session *session);

/* ---- KV caches (decoder language models) --------------------------------------------------------- */

/* A decoder step reads a past (keys or values of the tokens so far) and returns it with this step's rows
 * appended (present). `onnxc compile` turns each pair whose past is an input and whose present is an
 * output (torch's Concat(past, new), Attention's or GroupQueryAttention's past/present) into one cache
 * pair; onnxc_session_keep_cache makes a session keep their presents and write them in place.
 *
 *   CHECK(onnxc_session_keep_cache(session, prompt_len + max_new_tokens));
 *   bind every input, the pasts as empty tensors (0 positions), run          // prefill
 *   loop: bind the inputs except the pasts, run                             // each decode step reads the
 *                                                                            // previous presents as pasts
 * Pairs, by input and output index; count 0 for a NULL model. */
ONNXC_API size_t onnxc_model_num_cache_pairs(const onnxc_model *model);
ONNXC_API onnxc_status onnxc_model_cache_pair(const onnxc_model *model, size_t pair, size_t *input_index,
                                              size_t *output_index);

/* From the next run on, the session keeps each cache pair's present in a buffer of its own holding
 * `capacity` positions along the sequence axis (allocated at the first run that needs it, owned by the
 * session): a run writes only the new positions there, and a later run whose past input is not set reads
 * that present as its past without a copy (a set past is copied in once). Such an output cannot be read
 * with onnxc_session_get_output (it is laid out with capacity). A run needing more positions than
 * `capacity` fails with ONNXC_ERR_OUT_OF_MEMORY. capacity 0 stops keeping and frees the caches. Calling
 * it again forgets the kept caches (a new sequence). The last run's outputs are no longer readable. */
ONNXC_API onnxc_status onnxc_session_keep_cache(onnxc_session *session, int64_t capacity);

/* The kept cache of output `output_index` after the last run: out->dims are its dims (as
 * onnxc_session_get_output would give them) and out->data its bytes, laid out row-major with *capacity
 * positions along the sequence axis instead of dims[axis] (for TensorScatter's cache, *capacity is the
 * model's own length: dims[axis]). Owned by the session; valid until the next
 * onnxc_session_run, onnxc_session_keep_cache or onnxc_session_free. ONNXC_ERR_NOT_FOUND for an output
 * the session does not keep. */
ONNXC_API onnxc_status onnxc_session_get_cache(onnxc_session *session, size_t output_index, onnxc_tensor *out,
                                               int64_t *capacity);

/* ---- profiling ------------------------------------------------------------------------------------ */

/* One step of a run as a profiler sees it. Strings are the model's (valid while it is loaded). */
typedef struct onnxc_step_profile {
  uint32_t step;       /* index in the plan */
  const char *kernel;  /* the kernel's symbol; steps of equal kernels share it */
  const char *nodes;   /* the ONNX nodes it computes ("" when the library does not say) */
  uint64_t start_ns;   /* CLOCK_MONOTONIC when the kernel was called, and when it returned */
  uint64_t end_ns;
  uint64_t cpu_ns;     /* CPU time of the whole process (all threads) during the step: below
                          (end - start) x threads when other processes share the cores */
  double flops;        /* floating-point operations at this run's shapes; -1 when not counted */
  uint64_t bytes;      /* bytes of every tensor the kernel reads or writes (each counted once) */
} onnxc_step_profile;

typedef void (*onnxc_profile_callback)(void *user, const onnxc_step_profile *step);

/* Calls callback(user, ...) after every step of each later run (NULL turns profiling off). Timing adds
 * two clock reads per step, and only while a callback is set. For a CUDA library the runtime also waits
 * for the GPU after every step while a callback is set, so that start_ns..end_ns spans the step's work
 * on the device (kernel launches return before it is done); runs are then slower than unprofiled ones. */
ONNXC_API onnxc_status onnxc_session_set_profiler(onnxc_session *session, onnxc_profile_callback callback,
                                                  void *user);

/* Bytes of the session's arena now (grows to the largest plan run so far); 0 before the first run. */
ONNXC_API uint64_t onnxc_session_arena_bytes(const onnxc_session *session);

/* ---- CUDA: device memory and the caller's stream ---------------------------------------------------- */

/* Where a model's kernels run: ONNXC_DEVICE_CPU, or ONNXC_DEVICE_CUDA for a library compiled with
 * `onnxc compile --target cuda`. The calls below need a CUDA library; on a CPU one they return
 * ONNXC_ERR_UNSUPPORTED and say so.
 *
 * A CUDA session keeps its tensors on the GPU between kernels: weights are uploaded once, and every
 * intermediate and output lives in one device allocation per session (the device arena, laid out by
 * the same plan as the host arena and grown with it: onnxc_session_arena_bytes is its size too).
 * By default inputs are host pointers copied to the GPU by the run, and outputs are copied back
 * before onnxc_session_run returns. With the calls below a caller that has its data on the GPU skips
 * both copies:
 *
 *   CHECK(onnxc_session_set_cuda_stream(session, NULL, stream));    // a cudaStream_t / CUstream, or NULL
 *   CHECK(onnxc_session_set_outputs_on_device(session, 1));
 *   onnxc_tensor src = {ONNXC_DTYPE_FLOAT, 3, dims, (void *)d_src}; // d_src from cudaMalloc / cuMemAlloc
 *   CHECK(onnxc_session_set_input_device(session, 0, &src));
 *   CHECK(onnxc_session_run(session));                              // queues the kernels on `stream`
 *   onnxc_tensor out;
 *   CHECK(onnxc_session_get_output_device(session, 0, &out));      // out.data: a device address
 *   ... kernels of the caller's on `stream` read out.data; cudaStreamSynchronize(stream) before the host does
 */
enum onnxc_device { ONNXC_DEVICE_CPU = 0, ONNXC_DEVICE_CUDA = 1 };
/* ONNXC_DEVICE_CPU for a NULL model. */
ONNXC_API int32_t onnxc_model_device(const onnxc_model *model);

/* The CUDA context (a CUcontext) the session's kernels, copies and device memory use, and the stream (a
 * CUstream or cudaStream_t of that context) they are queued on. context NULL: the primary context of
 * the device ($HL_GPU_DEVICE, else 0), which is the one the CUDA runtime API (cudaMalloc,
 * cudaStreamCreate) uses; stream NULL: that context's default stream. Neither is owned: both must
 * outlive the session's use of them. Changing the context frees the session's device memory (it
 * belongs to the old one) and makes the last run's outputs unreadable. With a stream set, a run only
 * queues work on it: it waits for the stream only to copy outputs to the host (below).
 * Limitation: scratch memory that kernels allocate for themselves comes from a pool of the model
 * library's (Halide's allocation reuse), which is not ordered between streams. Sessions of one library
 * whose work may overlap on the GPU should share a stream, or the caller waits for one session's
 * stream before running another on a different one. */
ONNXC_API onnxc_status onnxc_session_set_cuda_stream(onnxc_session *session, void *context, void *stream);

/* Binds input `index` to device memory: tensor->data is a device address (a CUdeviceptr or cudaMalloc
 * pointer, cast to void *) in the session's context, holding the tensor dense and row-major. Checked as
 * onnxc_session_set_input checks (dtype, rank, dims); the memory is borrowed, never copied, and must hold
 * its data before the kernels on the session's stream read it and stay unchanged until the run's work
 * on that stream is done. Like every input it is bound for the next run only. */
ONNXC_API onnxc_status onnxc_session_set_input_device(onnxc_session *session, size_t index, const onnxc_tensor *tensor);

/* on != 0: later runs leave their outputs on the device and return without copying them (nor waiting
 * for the stream); onnxc_session_get_output then copies one when it is asked for (and waits for the
 * stream). on == 0 (the default): runs copy every output to the host. */
ONNXC_API onnxc_status onnxc_session_set_outputs_on_device(onnxc_session *session, int32_t on);

/* Describes output `index` of the last successful run with out->data its device address (in the
 * device arena; for an output that is an input bound with onnxc_session_set_input_device, the caller's
 * address). Owned by the session and valid until the next run, onnxc_session_set_cuda_stream with
 * another context, or onnxc_session_free. data is NULL for an empty output. An output the GPU does not
 * hold (a constant no kernel read, an input given on the host and never uploaded) is refused with
 * ONNXC_ERR_UNSUPPORTED: read it with onnxc_session_get_output. */
ONNXC_API onnxc_status onnxc_session_get_output_device(onnxc_session *session, size_t index, onnxc_tensor *out);

#ifdef __cplusplus
}
#endif

#endif /* ONNXC_RUNTIME_H */
