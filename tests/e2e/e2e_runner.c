/* End-to-end check from the user's side: a C program statically linked with a compiled model
 * (libNAME.a + NAME.h) and libonnxc_runtime runs every test_data_set folder given on the command line
 * through ONE session (so one library serves every batch and sequence length) and compares each output
 * with output_K.pb: |actual - expected| <= atol + rtol * |expected| for floats, exact otherwise.
 *
 *   e2e_runner [--rtol R] [--atol A] DATA_SET_DIR...      exit 0 all match, 1 mismatch, 2 error
 *
 * Build: cc -DONNXC_MODEL=NAME -IDIR e2e_runner.c tensor_pb.c DIR/libNAME.a -lonnxc_runtime -lpthread -ldl -lm */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc/runtime.h"
#include "tensor_pb.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#include STR(ONNXC_MODEL.h)
#define MODEL_DESC CAT(onnxc_model_, ONNXC_MODEL)

#define MAX_IO 32

static double element(int32_t dtype, const void *data, int64_t i) {
  switch (dtype) {
    case ONNXC_DTYPE_FLOAT: return ((const float *)data)[i];
    case ONNXC_DTYPE_DOUBLE: return ((const double *)data)[i];
    default: return NAN;
  }
}

/* Compares one output; prints a line; returns the number of mismatching elements (-1: shape/dtype). */
static long compare(const char *set, const char *name, const onnxc_tensor *out, const tensor_pb *ref, double rtol,
                    double atol) {
  if (out->dtype != ref->dtype || out->rank != ref->rank) {
    printf("%s: output '%s': dtype %d rank %d, expected dtype %d rank %d\n", set, name, out->dtype, out->rank,
           ref->dtype, ref->rank);
    return -1;
  }
  for (int32_t d = 0; d < out->rank; ++d) {
    if (out->dims[d] != ref->dims[d]) {
      printf("%s: output '%s': dim %d is %lld, expected %lld\n", set, name, d, (long long)out->dims[d],
             (long long)ref->dims[d]);
      return -1;
    }
  }
  long bad = 0;
  double max_abs = 0;
  int64_t worst = -1;
  int is_float = out->dtype == ONNXC_DTYPE_FLOAT || out->dtype == ONNXC_DTYPE_DOUBLE;
  size_t esize = tensor_pb_dtype_size(out->dtype);
  for (int64_t i = 0; i < ref->numel; ++i) {
    int ok;
    if (is_float) {
      double a = element(out->dtype, out->data, i), e = element(ref->dtype, ref->data, i);
      double err = fabs(a - e);
      ok = (isnan(a) && isnan(e)) || a == e || err <= atol + rtol * fabs(e);
      if (!ok && (worst < 0 || err > max_abs || isnan(err))) {
        max_abs = err;
        worst = i;
      }
    } else {
      ok = memcmp((const char *)out->data + i * esize, (const char *)ref->data + i * esize, esize) == 0;
      if (!ok && worst < 0) worst = i;
    }
    bad += !ok;
  }
  if (bad) {
    printf("%s: output '%s': %ld of %lld elements differ", set, name, bad, (long long)ref->numel);
    if (is_float) {
      printf(", worst at flat index %lld: %.9g vs %.9g (abs err %.3g)", (long long)worst,
             element(out->dtype, out->data, worst), element(ref->dtype, ref->data, worst), max_abs);
    }
    printf("\n");
  } else {
    printf("%s: output '%s' ok (%lld elements)\n", set, name, (long long)ref->numel);
  }
  return bad;
}

/* Runs one data set; returns 0 match, 1 mismatch, 2 error. */
static int run_set(onnxc_session *session, const onnxc_model *model, const char *dir, double rtol, double atol) {
  char path[4096], err[512];
  tensor_pb inputs[MAX_IO];
  size_t n_in = onnxc_model_num_inputs(model);
  if (n_in > MAX_IO) return 2;
  for (size_t k = 0; k < n_in; ++k) {
    snprintf(path, sizeof path, "%s/input_%zu.pb", dir, k);
    if (tensor_pb_read(path, &inputs[k], err, sizeof err)) {
      fprintf(stderr, "e2e_runner: %s\n", err);
      for (size_t j = 0; j < k; ++j) tensor_pb_free(&inputs[j]);
      return 2;
    }
    onnxc_tensor t = {inputs[k].dtype, inputs[k].rank, inputs[k].dims, inputs[k].data};
    size_t slot = k;
    if (inputs[k].name[0] && onnxc_model_input_index(model, inputs[k].name, &slot) != ONNXC_OK) slot = k;
    if (onnxc_session_set_input(session, slot, &t) != ONNXC_OK) {
      fprintf(stderr, "e2e_runner: %s: input %zu: %s\n", dir, k, onnxc_session_last_error(session));
      return 2;
    }
  }
  onnxc_status st = onnxc_session_run(session);
  for (size_t k = 0; k < n_in; ++k) tensor_pb_free(&inputs[k]);
  if (st != ONNXC_OK) {
    fprintf(stderr, "e2e_runner: %s: run failed: %s\n", dir, onnxc_session_last_error(session));
    return 2;
  }
  int result = 0;
  for (size_t k = 0; k < onnxc_model_num_outputs(model); ++k) {
    snprintf(path, sizeof path, "%s/output_%zu.pb", dir, k);
    tensor_pb ref;
    if (tensor_pb_read(path, &ref, err, sizeof err)) {
      if (k == 0) {
        fprintf(stderr, "e2e_runner: %s\n", err);
        return 2;
      }
      break; /* fewer reference files than outputs: compare those given */
    }
    onnxc_tensor out;
    onnxc_value_info info;
    onnxc_model_output_info(model, k, &info);
    if (onnxc_session_get_output(session, k, &out) != ONNXC_OK) {
      fprintf(stderr, "e2e_runner: %s: %s\n", dir, onnxc_session_last_error(session));
      tensor_pb_free(&ref);
      return 2;
    }
    if (compare(dir, info.name, &out, &ref, rtol, atol) != 0) result = 1;
    tensor_pb_free(&ref);
  }
  return result;
}

int main(int argc, char **argv) {
  double rtol = 1e-4, atol = 1e-5;
  onnxc_model *model = NULL;
  onnxc_session *session = NULL;
  if (onnxc_model_from_desc(MODEL_DESC(), &model) != ONNXC_OK ||
      onnxc_session_create(model, NULL, &session) != ONNXC_OK) {
    fprintf(stderr, "e2e_runner: %s\n", onnxc_last_error());
    return 2;
  }
  int worst = 0, sets = 0;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && strcmp(argv[i], "--rtol") == 0) {
      rtol = atof(argv[++i]);
    } else if (i + 1 < argc && strcmp(argv[i], "--atol") == 0) {
      atol = atof(argv[++i]);
    } else {
      int r = run_set(session, model, argv[i], rtol, atol);
      if (r > worst) worst = r;
      ++sets;
    }
  }
  printf("e2e_runner: model %s, %d data sets, rtol %g atol %g: %s\n", onnxc_model_name(model), sets, rtol, atol,
         worst == 0 ? "all match" : worst == 1 ? "MISMATCH" : "ERROR");
  onnxc_session_free(session);
  onnxc_model_free(model);
  return sets == 0 ? 2 : worst;
}
