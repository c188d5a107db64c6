/* run_model: the user's view of onnxc. A model compiled with `onnxc compile model.onnx -o DIR --name NAME`
 * is linked statically (DIR/libNAME.a, declared in DIR/NAME.h) together with libonnxc_runtime; this
 * program builds a session on it, fills the inputs, runs once and prints the outputs.
 *
 * Build (see Makefile and CMakeLists.txt beside this file):
 *   cc run_model.c -DONNXC_MODEL=NAME -IDIR DIR/libNAME.a $(pkg-config --cflags --libs onnxc) -lpthread -ldl -lm
 *
 * Usage: run_model [-t THREADS] [-d SYMBOL=VALUE]... [-i INPUT=FILE]...
 *   -d batch=2 -d seq=16   values of the model's dynamic dims (default 1)
 *   -i src=src.bin         an input's raw bytes (little-endian, row-major, exactly the tensor's size);
 *                          inputs without a file get a fixed pattern (floats sin(i), ints i % 7, bools 0)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc/runtime.h"

/* The generated header: NAME.h, from -DONNXC_MODEL=NAME (or give -DONNXC_MODEL_HEADER="\"x.h\""). */
#define ONNXC_STR_(x) #x
#define ONNXC_STR(x) ONNXC_STR_(x)
#define ONNXC_CAT_(a, b) a##b
#define ONNXC_CAT(a, b) ONNXC_CAT_(a, b)
#ifndef ONNXC_MODEL
#error "define ONNXC_MODEL as the name given to onnxc compile --name"
#endif
#ifndef ONNXC_MODEL_HEADER
#define ONNXC_MODEL_HEADER ONNXC_STR(ONNXC_MODEL.h)
#endif
#include ONNXC_MODEL_HEADER
#define MODEL_DESC ONNXC_CAT(onnxc_model_, ONNXC_MODEL)

#define MAX_ARGS 64

static int fail(const char *what) {
  fprintf(stderr, "run_model: %s: %s\n", what, onnxc_last_error());
  return 1;
}

/* The value given with -d for `symbol`, or 1. */
static int64_t symbol_value(const char *symbol, char **dims, int n_dims) {
  size_t len = strlen(symbol);
  for (int i = 0; i < n_dims; ++i) {
    if (strncmp(dims[i], symbol, len) == 0 && dims[i][len] == '=') return atoll(dims[i] + len + 1);
  }
  return 1;
}

/* The file given with -i for input `name`, or NULL. */
static const char *input_file(const char *name, char **files, int n_files) {
  size_t len = strlen(name);
  for (int i = 0; i < n_files; ++i) {
    if (strncmp(files[i], name, len) == 0 && files[i][len] == '=') return files[i] + len + 1;
  }
  return NULL;
}

static int read_exactly(const char *path, void *data, size_t bytes) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "run_model: %s: cannot open\n", path);
    return 0;
  }
  size_t got = fread(data, 1, bytes, f);
  int extra = fgetc(f) != EOF;
  fclose(f);
  if (got != bytes || extra) {
    fprintf(stderr, "run_model: %s: expected exactly %zu bytes\n", path, bytes);
    return 0;
  }
  return 1;
}

static void fill_pattern(int32_t dtype, void *data, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
      case ONNXC_DTYPE_FLOAT: ((float *)data)[i] = (float)sin(0.1 * (double)i); break;
      case ONNXC_DTYPE_DOUBLE: ((double *)data)[i] = sin(0.1 * (double)i); break;
      case ONNXC_DTYPE_INT64: ((int64_t *)data)[i] = i % 7; break;
      case ONNXC_DTYPE_INT32: ((int32_t *)data)[i] = (int32_t)(i % 7); break;
      default: memset(data, 0, (size_t)n * onnxc_dtype_size(dtype)); return; /* bools: no padding */
    }
  }
}

static double element(const onnxc_tensor *t, int64_t i) {
  switch (t->dtype) {
    case ONNXC_DTYPE_FLOAT: return ((const float *)t->data)[i];
    case ONNXC_DTYPE_DOUBLE: return ((const double *)t->data)[i];
    case ONNXC_DTYPE_INT64: return (double)((const int64_t *)t->data)[i];
    case ONNXC_DTYPE_INT32: return ((const int32_t *)t->data)[i];
    case ONNXC_DTYPE_BOOL: case ONNXC_DTYPE_UINT8: return ((const uint8_t *)t->data)[i];
    default: return NAN;
  }
}

int main(int argc, char **argv) {
  char *dims_args[MAX_ARGS], *input_args[MAX_ARGS];
  int n_dims = 0, n_inputs = 0, threads = 0;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && strcmp(argv[i], "-t") == 0) threads = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "-d") == 0 && n_dims < MAX_ARGS) dims_args[n_dims++] = argv[++i];
    else if (i + 1 < argc && strcmp(argv[i], "-i") == 0 && n_inputs < MAX_ARGS) input_args[n_inputs++] = argv[++i];
    else {
      fprintf(stderr, "usage: %s [-t THREADS] [-d SYMBOL=VALUE]... [-i INPUT=FILE]...\n", argv[0]);
      return 2;
    }
  }

  onnxc_model *model = NULL;
  if (onnxc_model_from_desc(MODEL_DESC(), &model) != ONNXC_OK) return fail("loading the model");
  onnxc_session_options options;
  onnxc_session_options_default(&options);
  options.num_threads = threads;
  onnxc_session *session = NULL;
  if (onnxc_session_create(model, &options, &session) != ONNXC_OK) return fail("creating a session");
  printf("model %s (target %s)\n", onnxc_model_name(model), onnxc_model_target(model));

  size_t n_in = onnxc_model_num_inputs(model);
  void **buffers = calloc(n_in, sizeof(void *));
  int64_t(*shapes)[32] = calloc(n_in, sizeof *shapes);
  for (size_t k = 0; k < n_in; ++k) {
    onnxc_value_info info;
    onnxc_model_input_info(model, k, &info);
    if (info.rank > 32) return fail("input rank");
    int64_t n = 1;
    printf("input  %-24s %-8s [", info.name, onnxc_dtype_name(info.dtype));
    for (int32_t d = 0; d < info.rank; ++d) {
      shapes[k][d] = info.dims[d] >= 0 ? info.dims[d] : symbol_value(info.dim_names[d], dims_args, n_dims);
      n *= shapes[k][d];
      printf("%s%lld", d ? "," : "", (long long)shapes[k][d]);
    }
    printf("]\n");
    size_t bytes = (size_t)n * onnxc_dtype_size(info.dtype);
    buffers[k] = malloc(bytes ? bytes : 1);
    const char *file = input_file(info.name, input_args, n_inputs);
    if (file) {
      if (!read_exactly(file, buffers[k], bytes)) return 1;
    } else {
      fill_pattern(info.dtype, buffers[k], n);
    }
    onnxc_tensor t = {info.dtype, info.rank, shapes[k], buffers[k]};
    if (onnxc_session_set_input(session, k, &t) != ONNXC_OK) return fail(info.name);
  }

  if (onnxc_session_run(session) != ONNXC_OK) {
    fprintf(stderr, "run_model: run failed: %s\n", onnxc_session_last_error(session));
    return 1;
  }

  for (size_t k = 0; k < onnxc_model_num_outputs(model); ++k) {
    onnxc_tensor out;
    if (onnxc_session_get_output(session, k, &out) != ONNXC_OK) return fail("reading an output");
    onnxc_value_info info;
    onnxc_model_output_info(model, k, &info);
    int64_t n = 1;
    printf("output %-24s %-8s [", info.name, onnxc_dtype_name(out.dtype));
    for (int32_t d = 0; d < out.rank; ++d) {
      n *= out.dims[d];
      printf("%s%lld", d ? "," : "", (long long)out.dims[d]);
    }
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += element(&out, i);
    printf("]  sum %.6g  first:", sum);
    for (int64_t i = 0; i < n && i < 6; ++i) printf(" %.6g", element(&out, i));
    printf("\n");
  }
  printf("arena %llu bytes\n", (unsigned long long)onnxc_session_arena_bytes(session));

  onnxc_session_free(session);
  onnxc_model_free(model);
  for (size_t k = 0; k < n_in; ++k) free(buffers[k]);
  free(buffers);
  free(shapes);
  return 0;
}
