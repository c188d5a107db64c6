// A malformed or mismatched descriptor is an error with a message, never a crash: each test corrupts one
// field of the tiny model. Then failures that only show at run time: bad shape arithmetic for the given
// inputs, and kernels that fail (a Halide bounds error, a plain error code).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "desc_builder.h"
#include "onnxc/runtime.h"
#include "tiny_model.h"
#include "tiny_reference.h"

namespace {

using ::testing::HasSubstr;

enum { X, M, W, H, HV, S, SV, Y, Z, P, HFLAT };  // tensor ids of tiny_model.c
enum { E_BATCH, E_SEQ, E_8, E_FLAT, E_SEQ1, E_SEQ8 };

// Loads the descriptor; expects failure with `status` and returns the message.
DescBuilder tiny() { return DescBuilder(*onnxc_model_tiny()); }

TEST(ModelValidation, TheTinyModelCopyLoads) {
  DescBuilder b = tiny();
  onnxc_model *model = nullptr;
  ASSERT_EQ(onnxc_model_from_desc(b.get(), &model), ONNXC_OK) << onnxc_last_error();
  onnxc_model_free(model);
}

TEST(ModelValidation, AbiVersionAndName) {
  DescBuilder b = tiny();
  b.d.abi_version = 1;  // a library built before host steps: refused, its steps are never read
  EXPECT_EQ(load_error(b, ONNXC_ERR_UNSUPPORTED),
            "model library has ABI version 1 but this runtime reads versions 7 to 8: recompile the model with a matching onnxc");
  b.d.abi_version = 2;  // before control steps
  EXPECT_EQ(load_error(b, ONNXC_ERR_UNSUPPORTED),
            "model library has ABI version 2 but this runtime reads versions 7 to 8: recompile the model with a matching onnxc");
  b.d.abi_version = 3;  // before loops
  EXPECT_EQ(load_error(b, ONNXC_ERR_UNSUPPORTED),
            "model library has ABI version 3 but this runtime reads versions 7 to 8: recompile the model with a matching onnxc");
  b.d.abi_version = 4;  // before run-time sequences and optionals
  EXPECT_EQ(load_error(b, ONNXC_ERR_UNSUPPORTED),
            "model library has ABI version 4 but this runtime reads versions 7 to 8: recompile the model with a matching onnxc");
  b.d.abi_version = 5;  // before device_sync was appended to the descriptor
  EXPECT_EQ(load_error(b, ONNXC_ERR_UNSUPPORTED),
            "model library has ABI version 5 but this runtime reads versions 7 to 8: recompile the model with a matching onnxc");
  b.d.abi_version = 6;  // before the CUDA hooks of the device arena and caller streams were appended
  EXPECT_EQ(load_error(b, ONNXC_ERR_UNSUPPORTED),
            "model library has ABI version 6 but this runtime reads versions 7 to 8: recompile the model with a matching onnxc");
  b.d.abi_version = 9;
  EXPECT_EQ(load_error(b, ONNXC_ERR_UNSUPPORTED),
            "model library has ABI version 9 but this runtime reads versions 7 to 8: recompile the model with a matching onnxc");
  b.d.abi_version = 7;  // before weights_copy_size: still loads (its blob is copied whole)
  b.d.weights_copy_size = 12345;  // past a v7 struct's end: never read
  onnxc_model *model = nullptr;
  EXPECT_EQ(onnxc_model_from_desc(b.get(), &model), ONNXC_OK) << onnxc_last_error();
  onnxc_model_free(model);
  b = tiny();
  b.d.name = nullptr;
  EXPECT_EQ(load_error(b), "model descriptor has no name");
}

TEST(ModelValidation, ShapeExpressions) {
  DescBuilder b = tiny();
  b.expr_code[b.expr_start[E_SEQ1] + 4] = 99;  // seq 1 ADD -> seq 1 <99>
  EXPECT_EQ(load_error(b), "model 'tiny': shape expression 4 has unknown opcode 99 at word 4");
  b = tiny();
  b.expr_code[b.expr_start[E_SEQ] + 1] = 5;  // SYM 5
  EXPECT_EQ(load_error(b), "model 'tiny': shape expression 1 names symbol 5 but the model has 2");
  b = tiny();
  b.add_expr({ONNXC_EXPR_MUL});
  EXPECT_EQ(load_error(b), "model 'tiny': shape expression 6 pops an empty stack at word 0");
  b = tiny();
  b.expr_start[3] = 1;
  EXPECT_EQ(load_error(b), "model 'tiny': expr_start is not increasing at 3");
  b = tiny();
  b.d.symbols = nullptr;
  EXPECT_EQ(load_error(b), "model 'tiny': 2 symbols but the symbol list is NULL");
}

TEST(ModelValidation, Tensors) {
  DescBuilder b = tiny();
  b.set_dims(X, {E_BATCH, 42, E_8});
  EXPECT_EQ(load_error(b), "model 'tiny': tensor 0 ('x') dim 1 is expression 42, out of range (6 expressions)");
  b = tiny();
  b.tensors[H].dtype = 14;
  EXPECT_EQ(load_error(b, ONNXC_ERR_UNSUPPORTED),
            "model 'tiny': tensor 3 ('h') has dtype 14, which this runtime does not support");
  b = tiny();
  b.tensors[H].kind = 7;
  EXPECT_EQ(load_error(b), "model 'tiny': tensor 3 ('h') has unknown kind 7");
  b = tiny();
  b.tensors[H].rank = -1;
  EXPECT_EQ(load_error(b), "model 'tiny': tensor 3 ('h') has rank -1 (0..32 supported)");
  b = tiny();
  b.tensors[H].dims = nullptr;
  EXPECT_EQ(load_error(b), "model 'tiny': tensor 3 ('h') has rank 3 but dims is NULL");
  b = tiny();
  b.tensors[Y].name = nullptr;
  EXPECT_EQ(load_error(b), "model 'tiny': tensor 7 has no name");
  b = tiny();
  onnxc_model_desc broken = *b.get();
  broken.tensors = nullptr;
  EXPECT_EQ(load_error(&broken, ONNXC_ERR_LOAD_FAILED), "model 'tiny': 11 tensors but the tensor table is NULL");
}

TEST(ModelValidation, Views) {
  DescBuilder b = tiny();
  b.tensors[HV].view_of = 99;
  EXPECT_EQ(load_error(b), "model 'tiny': view tensor 4 ('hv') has view_of 99, not another tensor");
  b = tiny();
  b.tensors[HV].view_of = SV;
  b.tensors[SV].view_of = HV;
  EXPECT_EQ(load_error(b), "model 'tiny': view tensor 4 ('hv') is part of a cycle of views");
  b = tiny();
  b.tensors[H].view_of = S;
  EXPECT_EQ(load_error(b), "model 'tiny': tensor 3 ('h') is not a view but has view_of 5 (expected -1)");
}

TEST(ModelValidation, Weights) {
  DescBuilder b = tiny();
  b.tensors[W].weight_offset = 64;
  EXPECT_EQ(load_error(b), "model 'tiny': tensor 2 ('w') weight bytes [64, +32) lie outside the 32-byte weights blob");
  b = tiny();
  b.tensors[W].weight_bytes = 16;
  EXPECT_EQ(load_error(b), "model 'tiny': weight tensor 2 ('w') has 8 elements of float32 but weight_bytes is 16");
  b = tiny();
  b.set_dims(W, {E_SEQ});
  EXPECT_EQ(load_error(b), "model 'tiny': weight tensor 2 ('w') dim 0 is not a non-negative constant");
  b = tiny();
  b.d.weights = nullptr;
  EXPECT_EQ(load_error(b), "model 'tiny': tensor 2 ('w') is a weight but the model has no weights blob");
  b = tiny();
  b.d.weights_copy_size = 64;  // the copied prefix of the blob (ABI 8) past its end
  EXPECT_EQ(load_error(b), "model 'tiny': the weights blob's copied prefix (64 bytes) is longer than the blob (32 bytes)");
  b.d.weights_copy_size = 16;  // a weight half in the copy, half in the library's pages
  EXPECT_EQ(load_error(b), "model 'tiny': tensor 2 ('w') weight bytes [0, +32) straddle the end of the blob's copied prefix (16 bytes)");
  b.d.weights_copy_size = 32;
  onnxc_model *model = nullptr;
  EXPECT_EQ(onnxc_model_from_desc(b.get(), &model), ONNXC_OK) << onnxc_last_error();
  onnxc_model_free(model);
}

TEST(ModelValidation, InputsAndOutputs) {
  DescBuilder b = tiny();
  b.inputs = {X, H};
  EXPECT_EQ(load_error(b), "model 'tiny': input 1 is tensor 3 ('h'), whose kind is 2, not INPUT");
  b = tiny();
  b.inputs = {X};
  EXPECT_EQ(load_error(b), "model 'tiny': tensor 1 ('m') is an INPUT but not in the inputs list");
  b = tiny();
  b.inputs = {X, M, X};
  EXPECT_EQ(load_error(b), "model 'tiny': tensor 0 ('x') is listed as input 0 and 2");
  b = tiny();
  b.outputs = {Y, 11};
  EXPECT_EQ(load_error(b), "model 'tiny': output 1 is tensor 11, out of range (11 tensors)");
}

TEST(ModelValidation, KernelsAndSteps) {
  DescBuilder b = tiny();
  b.kernels[2].fn = nullptr;
  EXPECT_EQ(load_error(b), "model 'tiny': kernel 2 has no name or no function");
  b = tiny();
  b.steps[1].kernel = 4;
  EXPECT_EQ(load_error(b), "model 'tiny': step 1 calls kernel 4, out of range (4 kernels)");
  b = tiny();
  b.set_args(0, {X, W, 12});
  EXPECT_EQ(load_error(b), "model 'tiny': step 0 arg 2 is tensor 12, out of range (11 tensors)");
  b = tiny();
  b.set_args(1, {HV, -7, S});
  EXPECT_EQ(load_error(b), "model 'tiny': step 1 arg 1 is scalar expression 6, out of range (6 expressions)");
  b = tiny();
  b.steps[3].args = nullptr;
  EXPECT_EQ(load_error(b), "model 'tiny': step 3 has 2 args and args NULL");
}

TEST(ModelValidation, EverySymbolMustBeBoundByAnInputDim) {
  DescBuilder b = tiny();
  b.set_dims(X, {E_BATCH, E_SEQ1, E_8});
  b.set_dims(M, {E_BATCH, E_SEQ1});
  EXPECT_EQ(load_error(b), "model 'tiny': symbol 'seq' is used but no input has a dim that is exactly it and no host step binds it, so it cannot be bound");
}

TEST(ModelValidation, CudaModelsNeedTheirDeviceHooks) {
  DescBuilder b = tiny();
  b.d.uses_cuda = 1;
  const char *want = "model 'tiny' uses CUDA but one of copy_to_host, device_free, device_malloc, wrap_native, detach_native, "
                     "device_interface is NULL";
  EXPECT_EQ(load_error(b), want);
  // A descriptor of ABI 7 without the device-arena hooks (a hand-written one filling only v6's) is refused too.
  b.d.copy_to_host = [](void *, void *) { return 0; };
  b.d.device_free = [](void *, void *) { return 0; };
  EXPECT_EQ(load_error(b), want);
}

// ---- run-time failures ------------------------------------------------------------------------------

// Loads b, binds a TinyCase's inputs and runs; returns the status (the message is in onnxc_last_error()).
onnxc_status run(DescBuilder &b, const TinyCase &c) {
  onnxc_model *model = nullptr;
  onnxc_status st = onnxc_model_from_desc(b.get(), &model);
  EXPECT_EQ(st, ONNXC_OK) << onnxc_last_error();
  if (st != ONNXC_OK) return st;
  onnxc_session *s = nullptr;
  EXPECT_EQ(onnxc_session_create(model, nullptr, &s), ONNXC_OK);
  onnxc_tensor x{ONNXC_DTYPE_FLOAT, 3, c.x_dims.data(), const_cast<float *>(c.x.data())};
  onnxc_tensor m{ONNXC_DTYPE_FLOAT, 2, c.m_dims.data(), const_cast<float *>(c.m.data())};
  st = onnxc_session_set_input(s, 0, &x);
  if (st == ONNXC_OK) st = onnxc_session_set_input(s, 1, &m);
  if (st == ONNXC_OK) st = onnxc_session_run(s);
  if (st != ONNXC_OK) {
    EXPECT_STREQ(onnxc_session_last_error(s), onnxc_last_error());
  }
  onnxc_session_free(s);
  onnxc_model_free(model);
  return st;
}

TEST(RunFailures, ANegativeDimIsReportedWithTheSymbolValues) {
  DescBuilder b = tiny();
  int32_t e = b.add_expr({ONNXC_EXPR_SYM, 1, ONNXC_EXPR_CONST, 5, ONNXC_EXPR_SUB});
  b.set_dims(H, {E_BATCH, e, E_8});
  EXPECT_EQ(run(b, TinyCase(2, 3)), ONNXC_ERR_SHAPE_MISMATCH);
  EXPECT_STREQ(onnxc_last_error(), "tensor 3 ('h') dim 1 = seq - 5 (with batch=2, seq=3): is negative");
}

TEST(RunFailures, ADivisionByZeroInAScalarArgument) {
  DescBuilder b = tiny();
  int32_t e = b.add_expr({ONNXC_EXPR_CONST, 8, ONNXC_EXPR_SYM, 1, ONNXC_EXPR_CONST, 3, ONNXC_EXPR_SUB,
                          ONNXC_EXPR_FLOORDIV});
  b.set_args(1, {HV, -e - 1, S});
  EXPECT_EQ(run(b, TinyCase(2, 3)), ONNXC_ERR_SHAPE_MISMATCH);
  EXPECT_STREQ(onnxc_last_error(),
               "step 1 (kernel 'scale1') scalar arg 1 = floor(8 / (seq - 3)) (with batch=2, seq=3): division by zero");
  EXPECT_EQ(run(b, TinyCase(2, 4)), ONNXC_OK) << onnxc_last_error();
}

TEST(RunFailures, AViewLargerThanItsBase) {
  DescBuilder b = tiny();
  int32_t e = b.add_expr({ONNXC_EXPR_SYM, 0, ONNXC_EXPR_SYM, 1, ONNXC_EXPR_MUL, ONNXC_EXPR_CONST, 8, ONNXC_EXPR_MUL,
                          ONNXC_EXPR_CONST, 1, ONNXC_EXPR_ADD});
  b.set_dims(HV, {e});
  EXPECT_EQ(run(b, TinyCase(2, 3)), ONNXC_ERR_SHAPE_MISMATCH);
  EXPECT_STREQ(onnxc_last_error(), "view tensor 4 ('hv') needs 196 bytes but its base tensor 3 ('h') has 192");
}

TEST(RunFailures, AnInputDimThatIsAnExpressionOfSymbols) {
  DescBuilder b = tiny();
  b.set_dims(M, {E_BATCH, E_SEQ1});  // m must be [batch, seq + 1]; the case gives [batch, seq]
  EXPECT_EQ(run(b, TinyCase(2, 3)), ONNXC_ERR_SHAPE_MISMATCH);
  EXPECT_STREQ(onnxc_last_error(), "input 'm' (index 1): dim 1 is 3 but the model expects seq + 1 = 4");
}

TEST(RunFailures, AHalideErrorReachesTheMessage) {
  // w declared with 4 elements: add_bias3 reads 8 of them, and Halide's bounds check says so.
  DescBuilder b = tiny();
  int32_t four = b.add_expr({ONNXC_EXPR_CONST, 4});
  b.set_dims(W, {four});
  b.tensors[W].weight_bytes = 16;
  EXPECT_EQ(run(b, TinyCase(2, 3)), ONNXC_ERR_KERNEL_FAILED);
  EXPECT_THAT(onnxc_last_error(), HasSubstr("step 0 (kernel 'add_bias3') failed: Halide error -4 (access_out_of_bounds): "));
  EXPECT_THAT(onnxc_last_error(), HasSubstr("Input buffer w is accessed at 7, which is beyond the max (3) in dimension 0"));
}

int fail_kernel(void **) { return -1; }

TEST(RunFailures, AFailingKernelIsNamedWithItsStep) {
  DescBuilder b = tiny();
  b.kernels[3] = {"always_fails", fail_kernel};
  EXPECT_EQ(run(b, TinyCase(2, 3)), ONNXC_ERR_KERNEL_FAILED);
  EXPECT_STREQ(onnxc_last_error(), "step 3 (kernel 'always_fails') failed: Halide error -1 (generic_error)");
}

}  // namespace
