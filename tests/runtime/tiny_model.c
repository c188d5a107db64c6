/* A hand-written descriptor in the form codegen generates, over the kernels of tiny_kernels_generator:
 *
 *   x [batch, seq, 8] f32, m [batch, seq] f32 (inputs); w [8] f32 (weight)
 *   step 0  h  = add_bias3(x, w)                 h [batch, seq, 8]
 *   step 1  s  = scale1(hv, seq + 1)             hv = view of h as [batch*seq*8]; s [batch*seq*8]
 *   step 2  y, z = mul_rows_sum(sv, m)           sv = view of s as [batch, seq, 8]; y = sv * m; z = sum(y, -1)
 *   step 3  p  = positive(z)                     p [batch, seq] bool
 *   outputs: y, z, p, hflat (a view of the intermediate h as [batch, seq*8]: h must live to the end)
 */
#include "tiny_model.h"

#include <HalideRuntime.h>
#include <stddef.h>

enum { BATCH, SEQ };
static const char *const symbols[] = {"batch", "seq"};

/* e0 batch, e1 seq, e2 8, e3 batch*seq*8, e4 seq + 1, e5 seq*8 */
static const uint32_t expr_start[] = {0, 2, 4, 6, 14, 19, 24};
static const int64_t expr_code[] = {
    ONNXC_EXPR_SYM, BATCH,
    ONNXC_EXPR_SYM, SEQ,
    ONNXC_EXPR_CONST, 8,
    ONNXC_EXPR_SYM, BATCH, ONNXC_EXPR_SYM, SEQ, ONNXC_EXPR_MUL, ONNXC_EXPR_CONST, 8, ONNXC_EXPR_MUL,
    ONNXC_EXPR_SYM, SEQ, ONNXC_EXPR_CONST, 1, ONNXC_EXPR_ADD,
    ONNXC_EXPR_SYM, SEQ, ONNXC_EXPR_CONST, 8, ONNXC_EXPR_MUL,
};
#define E_SEQ_PLUS_1 4

static const int32_t dims_bsc[] = {0, 1, 2};
static const int32_t dims_bs[] = {0, 1};
static const int32_t dims_c[] = {2};
static const int32_t dims_flat[] = {3};
static const int32_t dims_b_s8[] = {0, 5};

enum { X, M, W, H, HV, S, SV, Y, Z, P, HFLAT, N_TENSORS };
static const onnxc_tensor_desc tensors[] = {
    [X] = {"x", 1, ONNXC_TENSOR_INPUT, 3, dims_bsc, -1, 0, 0, ONNXC_VALUE_TENSOR},
    [M] = {"m", 1, ONNXC_TENSOR_INPUT, 2, dims_bs, -1, 0, 0, ONNXC_VALUE_TENSOR},
    [W] = {"w", 1, ONNXC_TENSOR_WEIGHT, 1, dims_c, -1, 0, 32, ONNXC_VALUE_TENSOR},
    [H] = {"h", 1, ONNXC_TENSOR_INTERMEDIATE, 3, dims_bsc, -1, 0, 0, ONNXC_VALUE_TENSOR},
    [HV] = {"hv", 1, ONNXC_TENSOR_VIEW, 1, dims_flat, H, 0, 0, ONNXC_VALUE_TENSOR},
    [S] = {"s", 1, ONNXC_TENSOR_INTERMEDIATE, 1, dims_flat, -1, 0, 0, ONNXC_VALUE_TENSOR},
    [SV] = {"sv", 1, ONNXC_TENSOR_VIEW, 3, dims_bsc, S, 0, 0, ONNXC_VALUE_TENSOR},
    [Y] = {"y", 1, ONNXC_TENSOR_OUTPUT, 3, dims_bsc, -1, 0, 0, ONNXC_VALUE_TENSOR},
    [Z] = {"z", 1, ONNXC_TENSOR_OUTPUT, 2, dims_bs, -1, 0, 0, ONNXC_VALUE_TENSOR},
    [P] = {"p", 9, ONNXC_TENSOR_OUTPUT, 2, dims_bs, -1, 0, 0, ONNXC_VALUE_TENSOR},
    [HFLAT] = {"hflat", 1, ONNXC_TENSOR_VIEW, 2, dims_b_s8, H, 0, 0, ONNXC_VALUE_TENSOR},
};
static const int32_t inputs[] = {X, M};
static const int32_t outputs[] = {Y, Z, P, HFLAT};

static const onnxc_kernel_desc kernels[] = {
    {"add_bias3", add_bias3_argv},
    {"scale1", scale1_argv},
    {"mul_rows_sum", mul_rows_sum_argv},
    {"positive", positive_argv},
};
static const int32_t args0[] = {X, W, H};
static const int32_t args1[] = {HV, -E_SEQ_PLUS_1 - 1, S};
static const int32_t args2[] = {SV, M, Y, Z};
static const int32_t args3[] = {Z, P};
static const onnxc_step steps[] = {{0, 3, args0, ONNXC_STEP_KERNEL, 0, NULL},
                                   {1, 3, args1, ONNXC_STEP_KERNEL, 0, NULL},
                                   {2, 4, args2, ONNXC_STEP_KERNEL, 0, NULL},
                                   {3, 2, args3, ONNXC_STEP_KERNEL, 0, NULL}};

_Alignas(64) static const float weights[8] = {0.5f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f, 3.5f, -40.0f};

static const onnxc_model_desc desc = {
    .abi_version = ONNXC_ABI_VERSION,
    .name = "tiny",
    .target = "host",
    .producer = "hand-written (tests/runtime)",
    .n_symbols = 2,
    .symbols = symbols,
    .n_exprs = 6,
    .expr_start = expr_start,
    .expr_code = expr_code,
    .n_tensors = N_TENSORS,
    .tensors = tensors,
    .n_inputs = 2,
    .inputs = inputs,
    .n_outputs = 4,
    .outputs = outputs,
    .n_kernels = 4,
    .kernels = kernels,
    .n_steps = 4,
    .steps = steps,
    .weights = (const uint8_t *)weights,
    .weights_size = sizeof weights,
    .set_num_threads = halide_set_num_threads,
    .uses_cuda = 0,
    .copy_to_host = NULL,
    .device_free = NULL,
    .set_error_handler = halide_set_error_handler,
};

const onnxc_model_desc *onnxc_model_tiny(void) { return &desc; }

const onnxc_model_desc *onnxc_model_entry(void) __attribute__((weak, alias("onnxc_model_tiny")));
