/* Finds and initializes the NVIDIA driver for CUDA libraries (see cuda_driver.h). */
#include "cuda_driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "error.h"

typedef int (*cu_init_fn)(unsigned int);
typedef int (*cu_device_count_fn)(int *);
typedef int (*cu_error_string_fn)(int, const char **);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int ready; /* 1 once the driver was loaded, initialized and saw a device */

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

static const char *cu_error(void *lib, int code) {
  cu_error_string_fn name = (cu_error_string_fn)dlsym(lib, "cuGetErrorString");
  const char *s = NULL;
  if (name && name(code, &s) == 0 && s) return s;
  return "unknown CUDA error";
}

onnxc_status onnxc_cuda_driver_ready(const char *model_name) {
  pthread_mutex_lock(&lock);
  onnxc_status st = ONNXC_OK;
  if (!ready) {
    char why[256] = "libcuda.so.1 not found";
    void *lib = open_driver(why, sizeof why);
    cu_init_fn init = lib ? (cu_init_fn)dlsym(lib, "cuInit") : NULL;
    cu_device_count_fn count = lib ? (cu_device_count_fn)dlsym(lib, "cuDeviceGetCount") : NULL;
    int rc = 0, devices = 0;
    if (!lib) {
      st = onnxc_fail(ONNXC_ERR_LOAD_FAILED,
                      "model '%s' was compiled for CUDA, but no NVIDIA driver is installed here (%s); "
                      "compile for a CPU target to run on this machine", model_name, why);
    } else if (!init || !count) {
      st = onnxc_fail(ONNXC_ERR_LOAD_FAILED, "model '%s': the NVIDIA driver library lacks cuInit/cuDeviceGetCount", model_name);
    } else if ((rc = init(0)) != 0) {
      st = onnxc_fail(ONNXC_ERR_LOAD_FAILED, "model '%s' was compiled for CUDA, but the NVIDIA driver did not start: %s (%d)",
                      model_name, cu_error(lib, rc), rc);
    } else if ((rc = count(&devices)) != 0 || devices == 0) {
      st = onnxc_fail(ONNXC_ERR_LOAD_FAILED, "model '%s' was compiled for CUDA, but the NVIDIA driver sees no GPU%s%s",
                      model_name, rc ? ": " : "", rc ? cu_error(lib, rc) : "");
    } else {
      ready = 1; /* the library stays loaded for the process's lifetime: Halide keeps its symbols */
    }
  }
  pthread_mutex_unlock(&lock);
  return st;
}
