"""Finding onnxc's two native parts, the runtime library (loaded here through ctypes) and the `onnxc`
CLI (run as a subprocess by compiler.py), and the ctypes declarations of the runtime's C API
(runtime/include/onnxc/runtime.h)."""
import ctypes
import glob
import os
import shutil

from . import errors

_HERE = os.path.dirname(os.path.abspath(__file__))


def _build_paths():
    # Written by the CMake build into build/python/onnxc (python/CMakeLists.txt); absent in the
    # source tree and in a pip install, which carries the files inside the package instead.
    try:
        from . import _build_paths as bp
    except ImportError:
        return None
    return bp


def runtime_library_path():
    """The libonnxc_runtime.so this package loads: $ONNXC_RUNTIME_LIB, the copy inside the
    package (pip install), the build tree's (CMake build), or the system's."""
    env = os.environ.get("ONNXC_RUNTIME_LIB")
    if env:
        return env
    inside = sorted(glob.glob(os.path.join(_HERE, "_lib", "libonnxc_runtime.so*")))
    if inside:
        return inside[0]
    bp = _build_paths()
    if bp is not None and os.path.exists(bp.RUNTIME_LIB):
        return bp.RUNTIME_LIB
    import ctypes.util
    found = ctypes.util.find_library("onnxc_runtime")
    if found:
        return found
    raise errors.LoadError(
        "onnxc: libonnxc_runtime.so not found: build it (cmake --build build --target onnxc_python) and "
        "use build/python, install the package (pip install .), or set ONNXC_RUNTIME_LIB")


def cli_path():
    """The `onnxc` executable: $ONNXC_CLI, the copy inside the package, the build tree's, or PATH."""
    env = os.environ.get("ONNXC_CLI")
    if env:
        return env
    inside = os.path.join(_HERE, "_bin", "onnxc")
    if os.access(inside, os.X_OK):
        return inside
    bp = _build_paths()
    if bp is not None and os.access(bp.CLI, os.X_OK):
        return bp.CLI
    on_path = shutil.which("onnxc")
    if on_path:
        return on_path
    raise errors.CompileError(
        "onnxc: the onnxc executable was not found: build it (cmake --build build --target onnxc), put it "
        "on PATH, or set ONNXC_CLI")


class Tensor(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("dims", ctypes.POINTER(ctypes.c_int64)), ("data", ctypes.c_void_p)]


class ValueInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("dims", ctypes.POINTER(ctypes.c_int64)), ("dim_names", ctypes.POINTER(ctypes.c_char_p))]


class SessionOptions(ctypes.Structure):
    _fields_ = [("num_threads", ctypes.c_int32), ("max_cached_plans", ctypes.c_uint32),
                ("max_arena_bytes", ctypes.c_uint64)]


class TensorDesc(ctypes.Structure):  # model_abi.h, onnxc_tensor_desc (ABI version 6)
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32), ("kind", ctypes.c_int32),
                ("rank", ctypes.c_int32), ("dims", ctypes.c_void_p), ("view_of", ctypes.c_int32),
                ("weight_offset", ctypes.c_uint64), ("weight_bytes", ctypes.c_uint64), ("value", ctypes.c_int32)]


class ModelDescHead(ctypes.Structure):
    """The leading fields of onnxc_model_desc (model_abi.h): enough to read the producer and each input's
    and output's value kind (tensor, sequence, optional), which the C API's value info leaves out."""
    _fields_ = [("abi_version", ctypes.c_uint32), ("name", ctypes.c_char_p), ("target", ctypes.c_char_p),
                ("producer", ctypes.c_char_p), ("n_symbols", ctypes.c_uint32), ("symbols", ctypes.c_void_p),
                ("n_exprs", ctypes.c_uint32), ("expr_start", ctypes.c_void_p), ("expr_code", ctypes.c_void_p),
                ("n_tensors", ctypes.c_uint32), ("tensors", ctypes.POINTER(TensorDesc)),
                ("n_inputs", ctypes.c_uint32), ("inputs", ctypes.POINTER(ctypes.c_int32)),
                ("n_outputs", ctypes.c_uint32), ("outputs", ctypes.POINTER(ctypes.c_int32))]


ABI_VERSIONS = (7, 8)  # ONNXC_ABI_VERSION values whose structs the ones above mirror

_lib = None


def lib():
    """The runtime, loaded once per process, with every function used here declared."""
    global _lib
    if _lib is not None:
        return _lib
    path = runtime_library_path()
    try:
        l = ctypes.CDLL(path)  # CDLL (not PyDLL): calls release the GIL, so sessions run in parallel
    except OSError as e:
        raise errors.LoadError(f"onnxc: cannot load the runtime {path}: {e}") from None
    P, c = ctypes.POINTER, ctypes
    model_p, session_p = c.c_void_p, c.c_void_p
    sig = {
        "onnxc_status_string": (c.c_char_p, [c.c_int]),
        "onnxc_last_error": (c.c_char_p, []),
        "onnxc_model_open": (c.c_int, [c.c_char_p, P(model_p)]),
        "onnxc_model_free": (None, [model_p]),
        "onnxc_model_desc_of": (P(ModelDescHead), [model_p]),
        "onnxc_model_name": (c.c_char_p, [model_p]),
        "onnxc_model_target": (c.c_char_p, [model_p]),
        "onnxc_model_num_inputs": (c.c_size_t, [model_p]),
        "onnxc_model_num_outputs": (c.c_size_t, [model_p]),
        "onnxc_model_input_info": (c.c_int, [model_p, c.c_size_t, P(ValueInfo)]),
        "onnxc_model_output_info": (c.c_int, [model_p, c.c_size_t, P(ValueInfo)]),
        "onnxc_session_options_default": (None, [P(SessionOptions)]),
        "onnxc_session_create": (c.c_int, [model_p, P(SessionOptions), P(session_p)]),
        "onnxc_session_free": (None, [session_p]),
        "onnxc_session_set_input": (c.c_int, [session_p, c.c_size_t, P(Tensor)]),
        "onnxc_session_run": (c.c_int, [session_p]),
        "onnxc_session_get_output": (c.c_int, [session_p, c.c_size_t, P(Tensor)]),
        "onnxc_session_last_error": (c.c_char_p, [session_p]),
        "onnxc_session_arena_bytes": (c.c_uint64, [session_p]),
    }
    for name, (restype, argtypes) in sig.items():
        f = getattr(l, name)
        f.restype, f.argtypes = restype, argtypes
    _lib = l
    return l


def check(status, message_fn):
    """Raises the exception for a non-zero runtime status, with the runtime's message."""
    if status == 0:
        return
    l = lib()
    name = l.onnxc_status_string(status).decode()
    msg = message_fn().decode(errors="replace") or name
    raise errors.STATUS_CLASSES.get(status, errors.Error)(msg, name)
