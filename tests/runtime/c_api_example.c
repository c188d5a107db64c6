/* The user's view, in C99: load the tiny model library with dlopen, list its inputs, run it for two
 * shapes and print a checksum. Compiled with -std=c99 -pedantic to keep runtime.h plain C. Exit 0 on
 * success; on failure prints the runtime's message. */
#include <stdio.h>
#include <stdlib.h>

#include "onnxc/runtime.h"

#define CHECK(call)                                                              \
  do {                                                                           \
    onnxc_status st_ = (call);                                                   \
    if (st_ != ONNXC_OK) {                                                       \
      fprintf(stderr, "%s failed: %s: %s\n", #call, onnxc_status_string(st_),     \
              onnxc_last_error());                                               \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

static int run_once(onnxc_session *session, int64_t batch, int64_t seq) {
  int64_t x_dims[3], m_dims[2];
  size_t n = (size_t)(batch * seq), i;
  float *x = malloc(n * 8 * sizeof *x), *m = malloc(n * sizeof *m);
  onnxc_tensor xt, mt, z;
  double sum = 0;
  if (!x || !m) return 1;
  x_dims[0] = m_dims[0] = batch;
  x_dims[1] = m_dims[1] = seq;
  x_dims[2] = 8;
  for (i = 0; i < n * 8; i++) x[i] = (float)(i % 5);
  for (i = 0; i < n; i++) m[i] = 1.0f;
  xt.dtype = ONNXC_DTYPE_FLOAT; xt.rank = 3; xt.dims = x_dims; xt.data = x;
  mt.dtype = ONNXC_DTYPE_FLOAT; mt.rank = 2; mt.dims = m_dims; mt.data = m;
  CHECK(onnxc_session_set_input_by_name(session, "x", &xt));
  CHECK(onnxc_session_set_input_by_name(session, "m", &mt));
  CHECK(onnxc_session_run(session));
  free(x); /* inputs are borrowed only until run returns */
  free(m);
  CHECK(onnxc_session_get_output_by_name(session, "z", &z));
  for (i = 0; i < n; i++) sum += ((const float *)z.data)[i];
  printf("batch=%lld seq=%lld: z is [%lld, %lld], sum %.2f\n", (long long)batch, (long long)seq,
         (long long)z.dims[0], (long long)z.dims[1], sum);
  return 0;
}

int main(int argc, char **argv) {
  onnxc_model *model = NULL;
  onnxc_session *session = NULL;
  onnxc_value_info info;
  size_t i;
  int a, rc;
  if (argc != 2) {
    fprintf(stderr, "usage: %s libtiny.so\n", argv[0]);
    return 2;
  }
  CHECK(onnxc_model_open(argv[1], &model));
  for (i = 0; i < onnxc_model_num_inputs(model); i++) {
    CHECK(onnxc_model_input_info(model, i, &info));
    printf("input %s %s [", info.name, onnxc_dtype_name(info.dtype));
    for (a = 0; a < info.rank; a++) {
      if (info.dim_names[a]) printf("%s%s", a ? ", " : "", info.dim_names[a]);
      else printf("%s%lld", a ? ", " : "", (long long)info.dims[a]);
    }
    printf("]\n");
  }
  CHECK(onnxc_session_create(model, NULL, &session));
  onnxc_model_free(model); /* the session keeps it alive */
  rc = run_once(session, 2, 3) || run_once(session, 1, 7);
  onnxc_session_free(session);
  return rc;
}
