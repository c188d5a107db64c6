/* The public entry points that load a model: from a library (dlopen) or a static descriptor. They hand
 * the executor's table of step kinds to the model layer, which validates and derives against it. */
#include <dlfcn.h>
#include <stddef.h>

#include "cuda_driver.h"
#include "error.h"
#include "model.h"
#include "step_kinds.h"

onnxc_status onnxc_model_from_desc(const onnxc_model_desc *desc, onnxc_model **out) {
  if (!out) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_model_from_desc: out is NULL");
  *out = NULL;
  if (!desc) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_model_from_desc: desc is NULL");
  return onnxc_model_create(desc, onnxc_step_kinds, NULL, out);
}

onnxc_status onnxc_model_open(const char *path, onnxc_model **out) {
  if (!out) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_model_open: out is NULL");
  *out = NULL;
  if (!path) return onnxc_fail(ONNXC_ERR_INVALID_ARGUMENT, "onnxc_model_open: library_path is NULL");
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    return onnxc_fail(ONNXC_ERR_LOAD_FAILED, "cannot load model library '%s': %s", path, why ? why : "dlopen failed");
  }
  union { void *object; onnxc_model_entry_fn fn; } entry;
  dlerror();
  entry.object = dlsym(library, ONNXC_MODEL_ENTRY_SYMBOL);
  if (!entry.object) {
    dlclose(library);
    return onnxc_fail(ONNXC_ERR_LOAD_FAILED, "'%s' is not an onnxc model library: it has no symbol %s", path,
                      ONNXC_MODEL_ENTRY_SYMBOL);
  }
  const onnxc_model_desc *desc = entry.fn();
  if (!desc) {
    dlclose(library);
    return onnxc_fail(ONNXC_ERR_LOAD_FAILED, "'%s': %s() returned NULL", path, ONNXC_MODEL_ENTRY_SYMBOL);
  }
  /* A CUDA library needs the NVIDIA driver: say so here, not at the first kernel. (A descriptor handed
   * in by the program, onnxc_model_from_desc, is not probed: without a driver its first run fails.) */
  onnxc_status st = desc->uses_cuda ? onnxc_cuda_driver_ready(desc->name) : ONNXC_OK;
  if (st == ONNXC_OK) st = onnxc_model_create(desc, onnxc_step_kinds, library, out);
  if (st != ONNXC_OK) {
    dlclose(library);
    return onnxc_fail(st, "'%s': %s", path, onnxc_last_error());
  }
  return ONNXC_OK;
}

