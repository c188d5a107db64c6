/* Finds and initializes the NVIDIA driver for CUDA libraries, and keeps the context their kernels run
 * in (see cuda_driver.h). */
#include "cuda_driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "kernel_errors.h"

typedef int (*cu_init_fn)(unsigned int);
typedef int (*cu_device_count_fn)(int *);
typedef int (*cu_device_get_fn)(int *, int);
typedef int (*cu_primary_retain_fn)(void **, int);
typedef int (*cu_error_string_fn)(int, const char **);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *driver;      /* the driver library once it was loaded, initialized and saw a device */
static void *primary;     /* the primary context of the device kernels run on, once retained */

/* The first name's dlerror text goes to why[n] (dlerror's own buffer is reused by the next dlopen). */
static void *open_driver(char *why, size_t n) {
  static const char *names[] = {"libcuda.so.1", "libcuda.so"};
  void *lib = NULL;
  for (unsigned i = 0; i < sizeof names / sizeof names[0] && !lib; i++) {
    lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
    const char *e = lib ? NULL : dlerror();
    if (i == 0 && e) snprintf(why, n, "%s", e);
  }
  return lib;
}

/* dlsym's void * as a function pointer, without ISO C's object-to-function pointer warning. */
static void (*symbol(void *lib, const char *name))(void) {
  union { void *object; void (*fn)(void); } sym;
  sym.object = lib ? dlsym(lib, name) : NULL;
  return sym.fn;
}

static const char *cu_error(void *lib, int code) {
  cu_error_string_fn name = (cu_error_string_fn)symbol(lib, "cuGetErrorString");
  const char *s = NULL;
  if (name && name(code, &s) == 0 && s) return s;
  return "unknown CUDA error";
}

onnxc_status onnxc_cuda_driver_ready(const char *model_name) {
  char who[160]; /* the subject of the messages */
  if (model_name) snprintf(who, sizeof who, "model '%s'", model_name);
  else snprintf(who, sizeof who, "a CUDA library's kernel");
  pthread_mutex_lock(&lock);
  onnxc_status st = ONNXC_OK;
  if (!driver) {
    char why[256] = "libcuda.so.1 not found";
    void *lib = open_driver(why, sizeof why);
    cu_init_fn init = (cu_init_fn)symbol(lib, "cuInit");
    cu_device_count_fn count = (cu_device_count_fn)symbol(lib, "cuDeviceGetCount");
    int rc = 0, devices = 0;
    if (!lib) {
      st = onnxc_fail(ONNXC_ERR_LOAD_FAILED,
                      "%s was compiled for CUDA, but no NVIDIA driver is installed here (%s); "
                      "compile for a CPU target to run on this machine", who, why);
    } else if (!init || !count) {
      st = onnxc_fail(ONNXC_ERR_LOAD_FAILED, "%s: the NVIDIA driver library lacks cuInit/cuDeviceGetCount", who);
    } else if ((rc = init(0)) != 0) {
      st = onnxc_fail(ONNXC_ERR_LOAD_FAILED, "%s was compiled for CUDA, but the NVIDIA driver did not start: cuInit failed: %s (%d)",
                      who, cu_error(lib, rc), rc);
    } else if ((rc = count(&devices)) != 0 || devices == 0) {
      st = onnxc_fail(ONNXC_ERR_LOAD_FAILED, "%s was compiled for CUDA, but the NVIDIA driver sees no GPU%s%s",
                      who, rc ? ": cuDeviceGetCount failed: " : "", rc ? cu_error(lib, rc) : "");
    } else {
      driver = lib; /* stays loaded for the process's lifetime: Halide keeps its symbols */
    }
  }
  pthread_mutex_unlock(&lock);
  return st;
}

/* The device Halide would pick by default: $HL_GPU_DEVICE, else 0. */
static int device_ordinal(void) {
  const char *env = getenv("HL_GPU_DEVICE");
  return env && *env ? atoi(env) : 0;
}

int onnxc_cuda_primary_context(bool create, void **context) {
  *context = NULL;
  pthread_mutex_lock(&lock);
  void *ctx = primary;
  pthread_mutex_unlock(&lock);
  if (ctx || !create) {
    *context = ctx;
    return 0;
  }
  if (onnxc_cuda_driver_ready(NULL) != ONNXC_OK) {
    onnxc_kernel_error_handler(NULL, onnxc_last_error());
    return -1;
  }
  pthread_mutex_lock(&lock);
  cu_device_get_fn get = (cu_device_get_fn)symbol(driver, "cuDeviceGet");
  cu_primary_retain_fn retain = (cu_primary_retain_fn)symbol(driver, "cuDevicePrimaryCtxRetain");
  int rc = 0, device = 0, ordinal = device_ordinal();
  char msg[256] = "";
  if (!get || !retain) {
    rc = -1;
    snprintf(msg, sizeof msg, "the NVIDIA driver library lacks cuDeviceGet/cuDevicePrimaryCtxRetain");
  } else if (!primary && (rc = get(&device, ordinal)) != 0) {
    snprintf(msg, sizeof msg, "cuDeviceGet(%d) failed: %s (%d)", ordinal, cu_error(driver, rc), rc);
  } else if (!primary && (rc = retain(&primary, device)) != 0) {
    snprintf(msg, sizeof msg, "cuDevicePrimaryCtxRetain(device %d) failed: %s (%d)", ordinal, cu_error(driver, rc), rc);
    primary = NULL;
  }
  *context = primary; /* retained once for the process: kernels' modules and the arena live in it */
  pthread_mutex_unlock(&lock);
  if (rc != 0) onnxc_kernel_error_handler(NULL, msg);
  return rc;
}

/* ---- the context and stream Halide's CUDA runtime uses --------------------------------------------- */

static _Thread_local void *bound_context, *bound_stream;

/* Halide asks for a context before every CUDA call (and pushes it current itself). */
static int acquire_context(void *user_context, void **context, bool create) {
  (void)user_context;
  if (bound_context) {
    *context = bound_context;
    return 0;
  }
  return onnxc_cuda_primary_context(create, context);
}

static int release_context(void *user_context) {
  (void)user_context;
  return 0;
}

static int get_stream(void *user_context, void *context, void **stream) {
  (void)user_context, (void)context;
  *stream = bound_stream;
  return 0;
}

void onnxc_cuda_install_hooks(const onnxc_model_desc *d) {
  if (!d->uses_cuda) return;
  if (d->set_cuda_acquire_context) d->set_cuda_acquire_context(acquire_context);
  if (d->set_cuda_release_context) d->set_cuda_release_context(release_context);
  if (d->set_cuda_get_stream) d->set_cuda_get_stream(get_stream);
}

void onnxc_cuda_enter(void *context, void *stream, onnxc_cuda_scope *saved) {
  saved->context = bound_context;
  saved->stream = bound_stream;
  bound_context = context;
  bound_stream = stream;
}

void onnxc_cuda_leave(const onnxc_cuda_scope *saved) {
  bound_context = saved->context;
  bound_stream = saved->stream;
}
