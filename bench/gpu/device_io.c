/* onnxc-device-io: the CUDA C API on a GPU, checked against the same library's host path. For each
 * shape given, one CUDA model library is run three ways on the same inputs:
 *   host     host pointers in, outputs copied back by the run (the default)
 *   device   inputs in device memory (cuMemAlloc), kernels on a stream of the caller's (cuStreamCreate in
 *            the device's primary context; no context given), outputs left on the device and read
 *            through onnxc_session_get_output_device, then once more through onnxc_session_get_output
 *            (the lazy copy to the host)
 *   context  the same with the primary context named explicitly and outputs copied back by the run
 * and every output of `device` and `context` must equal `host`'s (same kernels, same inputs: the
 * difference allowed is 1e-6 relative, and any is printed). The device sessions are reused from shape
 * to shape, so a larger shape grows their device arenas. Then both paths are timed (median of 20 runs
 * after 3: host = inputs copied in and outputs out by each run; device = neither, one wait for the
 * stream per run), which shows what the copies cost. Without a driver (or a GPU) the library is
 * refused when opened, and this program says so and exits 2.
 *
 *   onnxc-device-io LIBRARY SYMBOL=VALUE[,SYMBOL=VALUE...] ...   e.g. libenc.so batch=1,seq=16 batch=2,seq=64
 * Exit status: 0 all equal, 1 a difference or a failed call, 2 the library or driver cannot be used.
 * Needs only libonnxc_runtime and the NVIDIA driver (dlopen()ed): no CUDA toolkit. */
#define _POSIX_C_SOURCE 200112L /* clock_gettime */

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onnxc/runtime.h"

/* ---- the driver API, looked up at run time ---------------------------------------------------------- */

static struct {
  int (*init)(unsigned);
  int (*device_get)(int *, int);
  int (*primary_retain)(void **, int);
  int (*ctx_set_current)(void *);
  int (*mem_alloc)(uint64_t *, size_t);
  int (*mem_free)(uint64_t);
  int (*htod)(uint64_t, const void *, size_t);
  int (*dtoh)(void *, uint64_t, size_t);
  int (*stream_create)(void **, unsigned);
  int (*stream_sync)(void *);
  int (*stream_destroy)(void *);
  int (*error_string)(int, const char **);
} cu;

static void *lookup(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (!p) fprintf(stderr, "device-io: the driver lacks %s\n", name);
  return p;
}

static int load_driver(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!lib) return 0;
  void **slots[] = {(void **)&cu.init, (void **)&cu.device_get, (void **)&cu.primary_retain, (void **)&cu.ctx_set_current,
                    (void **)&cu.mem_alloc, (void **)&cu.mem_free, (void **)&cu.htod, (void **)&cu.dtoh,
                    (void **)&cu.stream_create, (void **)&cu.stream_sync, (void **)&cu.stream_destroy, (void **)&cu.error_string};
  const char *names[] = {"cuInit", "cuDeviceGet", "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent", "cuMemAlloc_v2", "cuMemFree_v2",
                         "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuStreamCreate", "cuStreamSynchronize", "cuStreamDestroy_v2",
                         "cuGetErrorString"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (!(*slots[i] = lookup(lib, names[i]))) return 0;
  }
  return 1;
}

static int cu_check(int rc, const char *call) {
  if (rc == 0) return 1;
  const char *s = "?";
  cu.error_string(rc, &s);
  fprintf(stderr, "device-io: %s failed: %s (%d)\n", call, s, rc);
  return 0;
}

/* ---- inputs ------------------------------------------------------------------------------------------ */

typedef struct input {
  onnxc_tensor t;
  int64_t dims[16];
  size_t bytes;
  uint64_t device;
} input;

/* The value of `symbol` in "a=1,b=2"; -1 if absent. */
static int64_t symbol_value(const char *shape, const char *symbol) {
  size_t len = strlen(symbol);
  for (const char *p = shape; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
    if (strncmp(p, symbol, len) == 0 && p[len] == '=') return atoll(p + len + 1);
  }
  return -1;
}

/* Input i at `shape`: dims from the model (a dim that is an expression of symbols is refused), data a
 * fixed pattern (floats sin(0.37 k) / 2, integers k % 7, bools k % 2). */
static int make_input(const onnxc_model *m, size_t i, const char *shape, input *in) {
  onnxc_value_info info;
  if (onnxc_model_input_info(m, i, &info) != ONNXC_OK || info.rank > 16) return 0;
  size_t n = 1;
  for (int32_t a = 0; a < info.rank; a++) {
    in->dims[a] = info.dims[a] >= 0 ? info.dims[a] : symbol_value(shape, info.dim_names[a]);
    if (in->dims[a] < 0) {
      fprintf(stderr, "device-io: input '%s' dim %d is '%s': give it a value\n", info.name, a, info.dim_names[a]);
      return 0;
    }
    n *= (size_t)in->dims[a];
  }
  size_t size = onnxc_dtype_size(info.dtype);
  in->bytes = n * size;
  in->t = (onnxc_tensor){info.dtype, info.rank, in->dims, malloc(in->bytes ? in->bytes : 1)};
  for (size_t k = 0; k < n; k++) {
    uint8_t *p = (uint8_t *)in->t.data + k * size;
    if (info.dtype == ONNXC_DTYPE_FLOAT) {
      float v = 0.5f * sinf(0.37f * (float)k);
      memcpy(p, &v, 4);
    } else if (info.dtype == ONNXC_DTYPE_INT64 || info.dtype == ONNXC_DTYPE_INT32) {
      int64_t v = (int64_t)(k % 7);
      memcpy(p, &v, size);
    } else {
      memset(p, 0, size);
      p[0] = (uint8_t)(k % 2);
    }
  }
  return 1;
}

/* ---- runs -------------------------------------------------------------------------------------------- */

typedef struct result {
  size_t n;
  onnxc_tensor out[64];
  void *host[64];
} result;

static int failed(const onnxc_session *s, const char *call) {
  fprintf(stderr, "device-io: %s failed: %s\n", call, onnxc_session_last_error(s));
  return 0;
}

static size_t bytes_of(const onnxc_tensor *t) {
  size_t n = onnxc_dtype_size(t->dtype);
  for (int32_t a = 0; a < t->rank; a++) n *= (size_t)t->dims[a];
  return n;
}

/* Keeps a copy of every output of the last run, read from the host (or, with device, from the GPU). */
static int keep_outputs(onnxc_session *s, int device, result *r) {
  r->n = onnxc_model_num_outputs(onnxc_session_model(s));
  for (size_t o = 0; o < r->n && o < 64; o++) {
    onnxc_tensor t;
    onnxc_status st = device ? onnxc_session_get_output_device(s, o, &t) : onnxc_session_get_output(s, o, &t);
    if (st != ONNXC_OK) return failed(s, device ? "onnxc_session_get_output_device" : "onnxc_session_get_output");
    size_t bytes = bytes_of(&t);
    r->out[o] = t;
    r->host[o] = malloc(bytes ? bytes : 1);
    if (!device) {
      if (bytes) memcpy(r->host[o], t.data, bytes);
    } else if (bytes && !cu_check(cu.dtoh(r->host[o], (uint64_t)(uintptr_t)t.data, bytes), "cuMemcpyDtoH")) {
      return 0;
    }
  }
  return 1;
}

static void free_result(result *r) {
  for (size_t o = 0; o < r->n && o < 64; o++) free(r->host[o]);
  r->n = 0;
}

/* Runs s on the inputs: host pointers, or (device) the device copies. */
static int run(onnxc_session *s, input *in, size_t n_in, int device) {
  for (size_t i = 0; i < n_in; i++) {
    onnxc_tensor t = in[i].t;
    if (device) t.data = (void *)(uintptr_t)in[i].device;
    onnxc_status st = device ? onnxc_session_set_input_device(s, i, &t) : onnxc_session_set_input(s, i, &t);
    if (st != ONNXC_OK) return failed(s, device ? "onnxc_session_set_input_device" : "onnxc_session_set_input");
  }
  return onnxc_session_run(s) == ONNXC_OK || failed(s, "onnxc_session_run");
}

/* Every output of got equals want's (floats within 1e-6 relative; others byte for byte). */
static int compare(const onnxc_model *m, const result *want, const result *got, const char *shape, const char *how) {
  int ok = 1;
  for (size_t o = 0; o < want->n && o < 64; o++) {
    onnxc_value_info info;
    onnxc_model_output_info(m, o, &info);
    size_t bytes = bytes_of(&want->out[o]);
    double worst = 0;
    int bad = bytes != bytes_of(&got->out[o]);
    if (!bad && want->out[o].dtype == ONNXC_DTYPE_FLOAT) {
      const float *w = want->host[o], *g = got->host[o];
      for (size_t k = 0; k < bytes / 4; k++) {
        if (w[k] != w[k] && g[k] != g[k]) continue; /* NaN in both */
        double d = fabs((double)w[k] - (double)g[k]);
        if (d > worst || d != d) worst = d;
        if (!(d <= 1e-6 * (1.0 + fabs((double)w[k])))) bad = 1;
      }
    } else if (!bad) {
      bad = memcmp(want->host[o], got->host[o], bytes) != 0;
    }
    printf("device-io: %s: %-8s output '%s' (%zu bytes): %s, max |diff| %.3g\n", shape, how, info.name, bytes,
           bad ? "DIFFERS" : "equal", worst);
    ok &= !bad;
  }
  return ok;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median ms of 20 runs after 3: host pointers (the run copies), or device inputs and a stream wait. */
static double time_runs(onnxc_session *s, input *in, size_t n_in, int device, void *stream) {
  double t[20];
  for (int r = -3; r < 20; r++) {
    double t0 = now_ms();
    if (!run(s, in, n_in, device)) return -1;
    if (device && !cu_check(cu.stream_sync(stream), "cuStreamSynchronize")) return -1;
    if (r >= 0) t[r] = now_ms() - t0;
  }
  qsort(t, 20, sizeof t[0], by_value);
  return (t[9] + t[10]) / 2;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s LIBRARY [SYMBOL=VALUE,...]...\n", argv[0]);
    return 2;
  }
  onnxc_model *m = NULL;
  if (onnxc_model_open(argv[1], &m) != ONNXC_OK) {
    printf("device-io: refused: %s\n", onnxc_last_error());
    return 2;
  }
  if (onnxc_model_device(m) != ONNXC_DEVICE_CUDA) {
    printf("device-io: '%s' is not a CUDA library (target %s)\n", argv[1], onnxc_model_target(m));
    return 2;
  }
  void *ctx = NULL, *stream = NULL;
  int device = 0;
  if (!load_driver() || !cu_check(cu.init(0), "cuInit") || !cu_check(cu.device_get(&device, 0), "cuDeviceGet") ||
      !cu_check(cu.primary_retain(&ctx, device), "cuDevicePrimaryCtxRetain") ||
      !cu_check(cu.ctx_set_current(ctx), "cuCtxSetCurrent") || !cu_check(cu.stream_create(&stream, 1), "cuStreamCreate")) {
    return 2;
  }
  onnxc_session *host = NULL, *dev = NULL, *named = NULL;
  int ok = onnxc_session_create(m, NULL, &host) == ONNXC_OK && onnxc_session_create(m, NULL, &dev) == ONNXC_OK &&
           onnxc_session_create(m, NULL, &named) == ONNXC_OK;
  ok = ok && (onnxc_session_set_cuda_stream(dev, NULL, stream) == ONNXC_OK || failed(dev, "onnxc_session_set_cuda_stream"));
  ok = ok && (onnxc_session_set_outputs_on_device(dev, 1) == ONNXC_OK || failed(dev, "onnxc_session_set_outputs_on_device"));
  ok = ok && (onnxc_session_set_cuda_stream(named, ctx, stream) == ONNXC_OK || failed(named, "onnxc_session_set_cuda_stream"));
  size_t n_in = onnxc_model_num_inputs(m);
  for (int a = 2; a < (argc > 2 ? argc : 3) && ok; a++) {
    const char *shape = a < argc ? argv[a] : "";
    input in[64];
    memset(in, 0, sizeof in);
    for (size_t i = 0; i < n_in && i < 64 && ok; i++) {
      ok = make_input(m, i, shape, &in[i]);
      ok = ok && (in[i].bytes == 0 || cu_check(cu.mem_alloc(&in[i].device, in[i].bytes), "cuMemAlloc"));
      ok = ok && (in[i].bytes == 0 || cu_check(cu.htod(in[i].device, in[i].t.data, in[i].bytes), "cuMemcpyHtoD"));
    }
    result want, got;
    memset(&want, 0, sizeof want);
    memset(&got, 0, sizeof got);
    ok = ok && run(host, in, n_in, 0) && keep_outputs(host, 0, &want);
    /* device: queued on the stream; wait for it before reading the outputs' device memory. */
    ok = ok && run(dev, in, n_in, 1) && cu_check(cu.stream_sync(stream), "cuStreamSynchronize") && keep_outputs(dev, 1, &got);
    ok = ok && compare(m, &want, &got, shape, "device");
    free_result(&got);
    ok = ok && keep_outputs(dev, 0, &got) && compare(m, &want, &got, shape, "lazy");
    free_result(&got);
    ok = ok && run(named, in, n_in, 1) && keep_outputs(named, 0, &got) && compare(m, &want, &got, shape, "context");
    free_result(&got);
    free_result(&want);
    if (ok) {
      double h = time_runs(host, in, n_in, 0, stream), d = time_runs(dev, in, n_in, 1, stream);
      ok = h >= 0 && d >= 0;
      printf("device-io: %s: median of 20 runs: host pointers %.3f ms, device pointers + stream %.3f ms\n", shape, h, d);
    }
    for (size_t i = 0; i < n_in && i < 64; i++) {
      if (in[i].device) cu.mem_free(in[i].device);
      free(in[i].t.data);
    }
    /* The arena plan of the device-pointer session after this shape (its device arena has the same
     * size); it stays at the last shape's size when that session did not get to run at this one. */
    printf("device-io: %s: arena %llu bytes (device session%s)\n", shape, (unsigned long long)onnxc_session_arena_bytes(dev),
           ok ? "" : ", which may not have run at this shape");
  }
  onnxc_session_free(host);
  onnxc_session_free(dev);
  onnxc_session_free(named);
  onnxc_model_free(m);
  cu.stream_destroy(stream);
  printf("device-io: %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
