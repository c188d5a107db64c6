/* onnxc artifact contract: the plain-data descriptor a compiled model library exports and the
 * runtime executes. Written by codegen (a generated C file), read by runtime/. Nothing here points
 * into the compiler: every field is a constant array in the generated library.
 *
 * Conventions
 *  - dtype: ONNX TensorProto.DataType numbers (1 = float32, 7 = int64, 9 = bool, ...). Bool tensors
 *    are one byte per element (0/1).
 *  - Shapes are row-major (ONNX order, outermost first). Each dim is an expression id (below).
 *  - Kernels are Halide `argv` entry points: int fn(void **args). args[i] is a halide_buffer_t* for a
 *    tensor argument and an int64_t* for a scalar argument. Halide buffers list dims innermost first:
 *    buffer dim 0 is the tensor's last ONNX axis. Strides are dense row-major.
 *
 * What the runtime does with a descriptor (codegen can rely on it; runtime/src is the reference)
 *  - Buffers: every dim has min 0; extents and strides fit in int32 (a larger tensor is an error
 *    before any kernel runs), and the element count stays below 2^31 unless the target string has
 *    "large_buffers". Halide types: float32/64/16 -> Float(32/64/16), bfloat16 -> BFloat(16), intN ->
 *    Int(N), uintN -> UInt(N), bool -> Bool() (UInt(1), one byte of storage): declare bool buffers with
 *    Bool(), since Halide checks the type's bits. An empty tensor still gets a non-NULL host pointer.
 *  - Scalar arguments are always int64: declare them Param<int64_t> and cast inside the kernel.
 *  - Memory: INTERMEDIATE and OUTPUT tensors that are not views live in one arena, at 64-byte aligned
 *    offsets, from the first step that touches them (or a view of them) to the last; a tensor listed
 *    in outputs[] (or the base of one that is a view) lives to the end. Two tensors live in a common
 *    step never share bytes, so a step's inputs and outputs never alias: no in-place kernels. INPUT
 *    data is the caller's (any alignment: kernels must not assume host alignment); WEIGHT bytes are
 *    weights + weight_offset (read-only: never an output).
 *  - Views: no copy; a view's bytes (dense, of its own dims and dtype) must fit in its base's. Views
 *    may chain. A kernel may read through a view; it may write through one only if nothing else reads
 *    the base in that step.
 *  - Steps run in order on the calling thread. A step writes the arena tensors it is the first step
 *    to touch; it is skipped when every such tensor has 0 elements (with no such tensor it always
 *    runs). Any non-zero return from fn fails the run with the step index and kernel name, plus the
 *    Halide message when set_error_handler (or an exported halide_set_error_handler) is available.
 *  - Every symbol used by a tensor dim or a scalar must be exactly one dim of some input, or be bound by
 *    a host step (onnxc_step): that is where its value comes from. Input dims may also be expressions
 *    of symbols (checked, not solved).
 *  - Memory with symbols bound from data: tensors whose dims use only input-bound symbols are planned
 *    before the run, in the arena. A tensor whose bytes (its root's dims) use a symbol bound by step k
 *    is placed when step k binds it, in a block of its own that the session keeps (and reuses) for
 *    the rest of the run and past it (outputs are read after the run). Host steps run on the host:
 *    a CUDA library has none.
 *  - CUDA libraries: the arena has a device twin, one device allocation per session laid out by the
 *    same offsets; every arena tensor's buffer has its range there as its device handle (wrapped, so
 *    kernels never allocate or free it), views the range of their base. Inputs have their own device
 *    allocations (or the caller's memory), weights theirs, uploaded once.
 *  - A .so should export only onnxc_model_<NAME> and onnxc_model_entry (a version script with
 *    `local: *;`): the library's Halide runtime then stays private to it, even in a program that also
 *    links Halide or another model.
 */
#ifndef ONNXC_MODEL_ABI_H
#define ONNXC_MODEL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version 2 added step kinds (kernel, host op) and symbols bound from data (onnxc_step's kind, n_binds,
 * binds). Version 3 added control steps (BRANCH, JUMP: an ONNX If), which a version 2 runtime would
 * misread as kernel calls. Version 4 added loops (LOOP, NEXT and the scan host ops: ONNX Loop and Scan).
 * Version 5 added run-time sequences and optionals (onnxc_tensor_desc's value, the value host ops).
 * Version 6 appended device_sync to onnxc_model_desc: a v5 descriptor ends before it, so reading it from
 * a v5 library would read past the library's struct. (Host ops added within a version are refused by an
 * older runtime by their number, with a message: no version change is needed for them.)
 * Version 7 appended the CUDA hooks a session needs for its device arena, caller device pointers and a
 * caller's stream (device_malloc .. set_cuda_get_stream).
 * Version 8 appended weights_copy_size (the prefix of the weights blob a runtime may copy out of the
 * library's pages). A version 7 library still loads: the runtime reads none of the new field and may
 * copy its whole blob, as before.
 * A library of another version is refused at load with a message, before any other field is read. */
#define ONNXC_ABI_VERSION 8
/* The oldest library version this runtime loads (older fields only: see onnxc_model_desc). */
#define ONNXC_ABI_VERSION_MIN 7

/* Shape expressions are integer programs in reverse Polish notation over int64. Expression i is
 * expr_code[expr_start[i] .. expr_start[i + 1]). CONST and SYM take one immediate word. Division
 * rounds toward negative infinity (floor), as symbolic shape arithmetic does. */
enum onnxc_expr_op {
  ONNXC_EXPR_CONST = 0,    /* push the next word */
  ONNXC_EXPR_SYM = 1,      /* push the value of symbol[next word] */
  ONNXC_EXPR_ADD = 2,
  ONNXC_EXPR_SUB = 3,
  ONNXC_EXPR_MUL = 4,
  ONNXC_EXPR_FLOORDIV = 5,
  ONNXC_EXPR_CEILDIV = 6,
  ONNXC_EXPR_MOD = 7,
  ONNXC_EXPR_MIN = 8,
  ONNXC_EXPR_MAX = 9,
  ONNXC_EXPR_NEG = 10
};

enum onnxc_tensor_kind {
  ONNXC_TENSOR_INPUT = 0,        /* bound by the user */
  ONNXC_TENSOR_OUTPUT = 1,       /* produced by a step, returned to the user */
  ONNXC_TENSOR_INTERMEDIATE = 2, /* lives in the arena between its first and last use */
  ONNXC_TENSOR_WEIGHT = 3,       /* constant bytes at weights + weight_offset */
  ONNXC_TENSOR_VIEW = 4          /* same bytes as tensor view_of, other shape (Reshape & co.) */
};

/* What an entry holds (ABI v5). A TENSOR is everything above. The others are run-time values: the session
 * keeps their tensors in lists of their own, never in the arena, and only value host ops (numbered from
 * 32, below) read or write them. Such an entry has kind INPUT, OUTPUT or INTERMEDIATE, rank 0 and dims
 * NULL (the element shapes are data), and dtype its elements' dtype. */
enum onnxc_value_kind {
  ONNXC_VALUE_TENSOR = 0,
  ONNXC_VALUE_SEQUENCE = 1,          /* a list of tensors of one dtype (ONNX seq(tensor)) */
  ONNXC_VALUE_OPTIONAL_TENSOR = 2,   /* one tensor or none (ONNX optional(tensor)) */
  ONNXC_VALUE_OPTIONAL_SEQUENCE = 3  /* a sequence or none (ONNX optional(seq(tensor))) */
};

typedef struct onnxc_tensor_desc {
  const char *name;      /* the ONNX value name */
  int32_t dtype;         /* ONNX TensorProto.DataType */
  int32_t kind;          /* enum onnxc_tensor_kind */
  int32_t rank;
  const int32_t *dims;   /* rank expression ids */
  int32_t view_of;       /* VIEW: the tensor whose bytes this is; else -1 */
  uint64_t weight_offset;/* WEIGHT: byte offset into the weights blob (64-byte aligned) */
  uint64_t weight_bytes; /* WEIGHT: byte count */
  int32_t value;         /* enum onnxc_value_kind; 0 (TENSOR) when left out of an initializer */
} onnxc_tensor_desc;

typedef struct onnxc_kernel_desc {
  const char *name;                 /* symbol name, for messages and profiles */
  int (*fn)(void **args);           /* Halide argv entry point; 0 on success */
} onnxc_kernel_desc;

enum onnxc_step_kind {
  ONNXC_STEP_KERNEL = 0, /* call kernels[kernel] (a Halide argv entry point) */
  ONNXC_STEP_HOST = 1,   /* run host op `kernel` (enum onnxc_host_op), implemented in the runtime in C */
  ONNXC_STEP_BRANCH = 2, /* args {cond}: when bool tensor cond's first element is 0, go on at step `kernel` */
  ONNXC_STEP_JUMP = 3,   /* no args: go on at step `kernel` */
  ONNXC_STEP_LOOP = 4,   /* args {iter, trip, cond}: the head of a loop; leaves it for step `kernel` (below) */
  ONNXC_STEP_NEXT = 5    /* no args: the end of a loop's body: back to its LOOP step `kernel` */
};

/* Host ops: what no kernel over shapes known before the step can express, because an output's size
 * depends on input data. Each has a fixed argument list (tensors, then int64 scalars) and binds its data
 * dims in a fixed order; see runtime/src/host_ops.c (the table) and host_*.c. X: data, Y: outputs. Optional ONNX inputs are
 * always passed (codegen supplies the defaults as weights).
 *  NONZERO      args {X, Y}                                      binds {count}      Y int64 [rank(X), count]
 *  COMPRESS     args {X, condition, Y, axis (-1: flattened)}     binds {count}
 *  UNIQUE       args {X, Y, indices, inverse, counts, axis (-1: flattened), sorted}   binds {unique count}
 *  NMS          args {boxes, scores, max_per_class (int64 [0] or [1]), iou_threshold (float32 [0] or [1]),
 *                     score_threshold (float32 [0] or [1]), Y, center_point_box}      binds {selected}
 *  REDUCE_SUM   args {X, axes (int64 [k]), Y, keepdims, noop_with_empty_axes}   binds {each dim of Y}
 *  REDUCE       args {X, axes (int64 [k]), Y, keepdims, noop_with_empty_axes, kind}   binds {each dim of Y}
 *               kind: 0 Sum, 1 Mean, 2 Max, 3 Min, 4 Prod, 5 L1, 6 L2, 7 LogSum, 8 LogSumExp, 9 SumSquare
 *  TFIDF        args {X (int32/int64 [C] or [B, C]), pool (int64), ngram_counts (int64), ngram_indexes (int64),
 *                     weights (float32 [W] or [0], per output column), Y (float32), min_gram_length, max_gram_length,
 *                     max_skip_count, mode (0 TF, 1 IDF, 2 TFIDF)}              binds {} (Y's shape is static)
 *  VALUE_SIZE   args {X (integer, one element)}                  binds {X's value} (a size given as data)
 *  STRING_NORMALIZER args {X (string [C] or [1, C]), stopwords (uint8: each word and a NUL byte; one NUL if none),
 *                     Y, case_change (0 none, 1 lower, 2 upper), is_case_sensitive, stopword count}
 *                                                                  binds {Y's last dim}
 *  STRING_CAST  args {X, Y}: string to float32/float64/int32/int64, those to string, or string to string  binds {}
 *  STRING_CONCAT args {A, B, Y} (strings): Y = A + B elementwise, numpy broadcasting   binds {}
 *  CACHE_APPEND args {past, new, present, axis, heads}                   binds {}
 *               present = past with new's rows appended along axis (a KV cache). new is shaped like
 *               past, or with heads = H > 0 it is [b, s, H * d] for a past [b, H, P, d] (axis 2). When
 *               present and past share their bytes (a session keeping its cache), only new's rows are
 *               written; present and past may then have strides that are not dense (capacity along axis).
 *  CACHE_SCATTER args {past, update, write_indices (int64 [b], or 0 elements: 0), present, axis, circular}
 *               binds {}   ONNX TensorScatter: present = past with update's rows written along axis from
 *               write_indices[b] (modulo the length when circular; rows outside the cache left out).
 *               When present is past's buffer (a session keeping its cache), only those rows are written.
 *  STRING_SPLIT args {X (strings), delimiter (uint8: bytes and a NUL), Y (strings [X..., k]), Z (int64 [X...]),
 *                     maxsplit (< 0: none), whitespace (split on runs of whitespace, ignoring delimiter)}
 *                                                                  binds {k: the most parts of any string}
 *  REGEX_FULL_MATCH args {X (strings), pattern (uint8: RE2 text and a NUL), Y (bool [X...])}   binds {}
 *  STRING_EQUAL args {A, B (strings), Y (bool)}: Equal, Y = A == B (same bytes), numpy broadcasting   binds {}
 * String tensors (dtype 8) hold one `const char *` per element (see runtime.h); only host ops touch them.
 * Loop host ops (numbered from 16): what a loop body does with whole slices.
 *  SCAN_SLICE   args {X, iter (int64, 1 element), Y, axis, reverse}     binds {}
 *               Y = X's slice iter (reverse: dim - 1 - iter) along axis, that axis removed.
 *  SCAN_APPEND  args {X}                                                 binds {}
 *               appends X's bytes to the session's list for this step (one item per iteration).
 *  SCAN_COLLECT args {Y, append step, axis, reverse}                     binds {item count}
 *               Y = the items SCAN_APPEND step `append step` gathered since the last collect, stacked
 *               along a new axis `axis` (reverse: last item first); empties the list.
 * Value host ops (numbered from 32): what moves sequences and optionals (S: a SEQUENCE or OPTIONAL_SEQUENCE
 * entry, O: an OPTIONAL_* entry, V: any value entry, T: a tensor). pos is an int64 tensor of 0 elements
 * (absent) or 1; a negative pos counts from the end; one out of range fails the run. Reading an empty
 * optional where a value is needed fails the run.
 *  VALUE_COPY   args {V, V}          Identity, Optional(seq), OptionalGetElement of an optional sequence
 *  VALUE_EMPTY  args {V}             SequenceEmpty (a sequence of 0 tensors), Optional() (an empty optional)
 *  SEQ_INSERT   args {S, T, pos, S}  SequenceInsert (absent pos: at the back)
 *  SEQ_AT       args {S, pos, T}     binds {each dim of T}  SequenceAt
 *  SEQ_ERASE    args {S, pos, S}     SequenceErase (absent pos: the last)
 *  SEQ_LENGTH   args {S, T int64 []} SequenceLength
 *  OPT_WRAP     args {T, O}          Optional(tensor)
 *  OPT_HAS      args {V, T bool []}  OptionalHasElement (a non-optional V always has one)
 *  OPT_GET      args {O, T}          binds {each dim of T}  OptionalGetElement of an optional tensor
 *  SPLIT_TO_SEQ args {T, split (int64: 0 elements absent, [] a part length, [k] the lengths), S, axis, keepdims}
 *                                    SplitToSequence into a run-time sequence (keepdims only without split) */
enum onnxc_host_op {
  ONNXC_HOST_NONZERO = 0,
  ONNXC_HOST_COMPRESS = 1,
  ONNXC_HOST_UNIQUE = 2,
  ONNXC_HOST_NMS = 3,
  ONNXC_HOST_REDUCE_SUM = 4,
  ONNXC_HOST_TFIDF = 5,
  ONNXC_HOST_VALUE_SIZE = 6,
  ONNXC_HOST_STRING_NORMALIZER = 7,
  ONNXC_HOST_STRING_CAST = 8,
  ONNXC_HOST_STRING_CONCAT = 9,
  ONNXC_HOST_CACHE_APPEND = 10,
  ONNXC_HOST_CACHE_SCATTER = 11,
  ONNXC_HOST_REDUCE = 12,
  ONNXC_HOST_STRING_SPLIT = 13,
  ONNXC_HOST_REGEX_FULL_MATCH = 14,
  ONNXC_HOST_STRING_EQUAL = 15,
  ONNXC_HOST_SCAN_SLICE = 16,
  ONNXC_HOST_SCAN_APPEND = 17,
  ONNXC_HOST_SCAN_COLLECT = 18,
  ONNXC_HOST_VALUE_COPY = 32,
  ONNXC_HOST_VALUE_EMPTY = 33,
  ONNXC_HOST_SEQ_INSERT = 34,
  ONNXC_HOST_SEQ_AT = 35,
  ONNXC_HOST_SEQ_ERASE = 36,
  ONNXC_HOST_SEQ_LENGTH = 37,
  ONNXC_HOST_OPT_WRAP = 38,
  ONNXC_HOST_OPT_HAS = 39,
  ONNXC_HOST_OPT_GET = 40,
  ONNXC_HOST_SPLIT_TO_SEQ = 41
};

/* One step of the plan. KERNEL: call kernels[kernel] with args. An arg >= 0 is a tensor id (passed as a
 * halide_buffer_t*); an arg < 0 is a scalar: the value of expression (-arg - 1), passed as an int64_t*.
 * HOST: run host op `kernel` over the same kind of args.
 *
 * Symbols bound from data: a host step computes its data dims (the count of non-zeros, ...) and binds
 * binds[i] to data dim i (binds[i] = -1: that dim's size is already known: the op only checks that its
 * output has it). A bound symbol is listed by exactly one step and is no input dim. Everything that
 * uses it (tensor dims, scalars) is touched only from that step on (its outputs) or after it: the
 * runtime evaluates those shapes when the step binds the symbol, not before the run. Steps run in order.
 *
 * Control steps (an ONNX If): BRANCH reads its condition on the host and either falls through into the
 * then-range or goes on at step `kernel`; the then-range ends with a JUMP past the else-range. Targets
 * lie strictly after the step and at most at n_steps (the end): control only moves forward, so a plan
 * is still a straight line whose skipped ranges are never entered. Liveness is computed over that line,
 * so a tensor used in either range stays alive across both, which is what a skipped range needs. Both
 * ranges write the If's outputs (a copy step each). A step inside a range that writes no tensor first
 * touched there always runs (the empty-output skip above counts first touches only). Control steps bind
 * no symbols and are host-only: a CUDA library has none.
 *
 * Loops (an ONNX Loop or Scan): LOOP at step h with target t heads the range h+1 .. t-2 (the body),
 * and step t-1 is the NEXT that goes back to h; no other step goes backward. The runtime keeps the
 * iteration count itself: arriving at h from an earlier step starts it at 0, arriving from its NEXT
 * adds 1. LOOP writes the count into `iter` (an int64 arena tensor of one element) and enters the body
 * when count < trip and cond's first element is not 0, else goes on at t. trip is an int64 tensor of
 * one element, a scalar, or an int64 tensor of 0 elements (no limit). Loop ranges nest (they never
 * cross), and no forward jump enters or leaves a body except LOOP's own exit. Liveness: a tensor that
 * any step of a body touches is live over the whole range h .. t-1 (the next iteration reads it again).
 * Symbols bound inside a body (or a branch) are refused, as for If: they would be bound many times. */
typedef struct onnxc_step {
  int32_t kernel;        /* KERNEL: index into kernels; HOST: enum onnxc_host_op; control steps: target step */
  int32_t n_args;
  const int32_t *args;
  int32_t kind;          /* enum onnxc_step_kind; 0 (KERNEL) when left out of an initializer */
  int32_t n_binds;       /* HOST: how many data dims the op binds (its count above); other kinds: 0 */
  const int32_t *binds;  /* n_binds symbol ids, or -1 */
} onnxc_step;

/* What one step computes, for profiles (onnxc bench --profile): the ONNX nodes its kernel covers and
 * the floating-point operations it does, as an expression id (a function of the symbols); -1 where
 * not counted (only matrix products are). */
typedef struct onnxc_step_info {
  const char *nodes;  /* "MatMul 'fc1', Add 'fc1/bias'" */
  int32_t flops;      /* expression id, or -1 */
} onnxc_step_info;

/* Same signature as Halide's halide_error_handler_t (kept free of Halide's headers). */
typedef void (*onnxc_halide_error_handler)(void *user_context, const char *message);

/* The same as Halide's halide_cuda_acquire_context_t, halide_cuda_release_context_t and
 * halide_cuda_get_stream_t (HalideRuntimeCuda.h): a CUcontext and a CUstream as void *. */
#ifdef __cplusplus
typedef int (*onnxc_cuda_acquire_context_fn)(void *user_context, void **context, bool create);
#else
typedef int (*onnxc_cuda_acquire_context_fn)(void *user_context, void **context, _Bool create);
#endif
typedef int (*onnxc_cuda_release_context_fn)(void *user_context);
typedef int (*onnxc_cuda_get_stream_fn)(void *user_context, void *context, void **stream);

typedef struct onnxc_model_desc {
  uint32_t abi_version;             /* ONNXC_ABI_VERSION */
  const char *name;                 /* the --name given to onnxc compile */
  const char *target;               /* Halide target string the kernels were built for */
  const char *producer;             /* "onnxc 0.1.0" */

  uint32_t n_symbols;               /* dynamic dims: "batch", "seq", ... */
  const char *const *symbols;

  uint32_t n_exprs;
  const uint32_t *expr_start;       /* n_exprs + 1 entries */
  const int64_t *expr_code;

  uint32_t n_tensors;
  const onnxc_tensor_desc *tensors;
  uint32_t n_inputs;
  const int32_t *inputs;            /* tensor ids, in graph input order */
  uint32_t n_outputs;
  const int32_t *outputs;           /* tensor ids, in graph output order */

  uint32_t n_kernels;
  const onnxc_kernel_desc *kernels;
  uint32_t n_steps;
  const onnxc_step *steps;

  const uint8_t *weights;           /* embedded weights blob, 64-byte aligned; NULL if none */
  uint64_t weights_size;

  /* The library's own Halide runtime hooks (each library carries its own runtime). */
  int (*set_num_threads)(int n);    /* halide_set_num_threads; returns the old value */
  int uses_cuda;                    /* kernels run on a CUDA device through Halide's CUDA runtime */
  /* CUDA libraries only (else NULL): halide_copy_to_host and halide_device_free of the library's
   * runtime. The runtime marks inputs host_dirty, and after a run copies outputs to host. */
  int (*copy_to_host)(void *user_context, void *halide_buffer);
  int (*device_free)(void *user_context, void *halide_buffer);

  /* Optional (NULL if absent): halide_set_error_handler of the library's runtime. The runtime installs
   * its own handler through it, so a failing kernel's Halide message (not only its error code) reaches
   * onnxc_session_last_error instead of stderr. Appended to v1: a generated file that leaves it out
   * zero-initializes it, and the runtime then only reports the error code (for a dlopen()ed library it
   * first tries dlsym("halide_set_error_handler"), which works when the library exports it). */
  onnxc_halide_error_handler (*set_error_handler)(onnxc_halide_error_handler handler);

  /* Appended to v1: the thread count given to `onnxc compile --threads`, used when a session's
   * options ask for 0 (the default); 0 here too means all cores (or $HL_NUM_THREADS). */
  int32_t default_num_threads;

  /* Appended to v1 (NULL if absent): n_steps entries describing each step for profiles. */
  const onnxc_step_info *step_info;

  /* Version 6, CUDA libraries only (else NULL): halide_cuda_device_sync of the library's runtime,
   * which waits until the device has finished the work queued so far (the buffer argument is unused;
   * the runtime passes NULL). Kernels return once their launches are queued, so while a profiler is
   * set the runtime waits after every step: each step's time is then its work on the GPU. */
  int (*device_sync)(void *user_context, void *halide_buffer);

  /* Version 7, CUDA libraries only (else NULL): the library's Halide runtime calls through which a
   * session keeps its device arena (one allocation, each arena tensor a range of it), wraps a caller's
   * device pointers and runs on the caller's context and stream (runtime/src/cuda_*.c).
   * device_malloc: halide_device_malloc; wrap_native/detach_native: halide_device_wrap_native and
   * halide_device_detach_native (a wrapped buffer does not own its memory); device_interface:
   * halide_cuda_device_interface; the setters: halide_set_cuda_acquire_context,
   * halide_set_cuda_release_context and halide_set_cuda_get_stream (each returns the handler it replaced). */
  int (*device_malloc)(void *user_context, void *halide_buffer, const void *device_interface);
  int (*wrap_native)(void *user_context, void *halide_buffer, uint64_t handle, const void *device_interface);
  int (*detach_native)(void *user_context, void *halide_buffer);
  const void *(*device_interface)(void);
  onnxc_cuda_acquire_context_fn (*set_cuda_acquire_context)(onnxc_cuda_acquire_context_fn handler);
  onnxc_cuda_release_context_fn (*set_cuda_release_context)(onnxc_cuda_release_context_fn handler);
  onnxc_cuda_get_stream_fn (*set_cuda_get_stream)(onnxc_cuda_get_stream_fn handler);

  /* Version 8: the blob's bytes [0, weights_copy_size) hold the weights some kernel reads in whole;
   * [weights_copy_size, weights_size) only weights that are ever only gathered from (an embedding
   * table: a run reads a few rows). A runtime that copies the blob into its own memory copies only the
   * prefix and reads the rest from the library's pages, so rows no run gathers never become resident.
   * No weight straddles the line; codegen starts the gathered part on a 4 KiB boundary of the blob. */
  uint64_t weights_copy_size;
} onnxc_model_desc;

/* Every compiled library defines `const onnxc_model_desc *onnxc_model_<NAME>(void)` (declared in the
 * generated NAME.h) and the weak alias below, which the runtime looks up after dlopen. */
typedef const onnxc_model_desc *(*onnxc_model_entry_fn)(void);
#define ONNXC_MODEL_ENTRY_SYMBOL "onnxc_model_entry"

#ifdef __cplusplus
}
#endif

#endif /* ONNXC_MODEL_ABI_H */
