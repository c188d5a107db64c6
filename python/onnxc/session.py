"""onnxc.InferenceSession: ONNX Runtime's Python surface over onnxc's C runtime, so code written for
`onnxruntime.InferenceSession` runs by changing the import. Inputs go to the runtime by pointer (no copy
when the array is C-contiguous and of the model's dtype); outputs are copied out of the session's arena,
which the next run reuses."""
import ctypes
import os
import tempfile
import threading
import warnings

import numpy as np

from . import _native, compiler, errors
from .model import _DTYPES, _FROM_NUMPY, _SUBBYTE, ModelMetadata, _Model


class GraphOptimizationLevel:
    """Accepted for compatibility: onnxc always runs its default passes (see `onnxc.compile(no_fuse=)`)."""
    ORT_DISABLE_ALL, ORT_ENABLE_BASIC, ORT_ENABLE_EXTENDED, ORT_ENABLE_ALL = 0, 1, 2, 99


class ExecutionMode:
    """Accepted for compatibility: onnxc runs the steps of a plan in order, each kernel in parallel."""
    ORT_SEQUENTIAL, ORT_PARALLEL = 0, 1


class SessionOptions:
    """ONNX Runtime's session options. onnxc reads `intra_op_num_threads` (0 = the library's default, all
    cores unless compiled with threads=N); the others are kept so that code setting them runs."""
    __slots__ = ("intra_op_num_threads", "inter_op_num_threads", "graph_optimization_level", "execution_mode",
                 "log_severity_level", "log_verbosity_level", "enable_profiling", "enable_cpu_mem_arena",
                 "enable_mem_pattern", "optimized_model_filepath", "logid", "max_arena_bytes")

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.enable_profiling = False
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.optimized_model_filepath = ""
        self.logid = ""
        self.max_arena_bytes = 0  # onnxc's own: the largest arena a run may allocate, 0 = no limit


def get_available_providers():
    return ["CPUExecutionProvider"]


def get_device():
    return "CPU"


class InferenceSession:
    """Runs a compiled model: `InferenceSession("model.onnx")` compiles it first (through the kernel
    cache), `InferenceSession("out/libmodel.so")` or `InferenceSession(onnxc.compile(...))` loads a
    compiled library. Like ONNX Runtime's, `run` may be called from several threads at once: each
    concurrent call gets a C session of its own (kept for reuse), sharing the model and its thread pool.

    Keyword arguments `target`, `threads`, `quantize` and `no_fuse` go to `onnxc.compile` when the model
    is an .onnx file or serialized bytes."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **compile_args):
        self._options = sess_options if sess_options is not None else SessionOptions()
        self._providers = _check_providers(providers)
        self._library = None
        if isinstance(path_or_bytes, compiler.Library):
            self._library = path_or_bytes
        elif isinstance(path_or_bytes, (bytes, bytearray)):
            with tempfile.TemporaryDirectory(prefix="onnxc-model-") as tmp:
                onnx_path = os.path.join(tmp, "model.onnx")
                with open(onnx_path, "wb") as f:
                    f.write(path_or_bytes)
                self._library = compiler.compile(onnx_path, **compile_args)
        else:
            path = os.fspath(path_or_bytes)
            if compiler.is_library_path(path):
                if compile_args:
                    raise errors.InvalidArgument(
                        f"onnxc: {path} is already compiled; {', '.join(compile_args)} apply to .onnx models only")
            else:
                self._library = compiler.compile(path, **compile_args)
        lib_path = self._library.path if self._library is not None else path
        self._model = _Model(lib_path)
        self._lock = threading.Lock()
        self._idle = []  # C sessions not running now
        self._idle.append(self._new_session())  # so a bad option fails here, not in the first run
        self._input_index = {info[0].name: i for i, info in enumerate(self._model.inputs)}
        self._output_index = {info[0].name: i for i, info in enumerate(self._model.outputs)}

    # ---- ONNX Runtime's surface ----------------------------------------------------------------------

    def get_inputs(self):
        return [info[0] for info in self._model.inputs]

    def get_outputs(self):
        return [info[0] for info in self._model.outputs]

    def get_overridable_initializers(self):
        return []  # weights are compiled into the library

    def get_modelmeta(self):
        if self._library is not None:
            return self._library.metadata()
        return ModelMetadata(producer_name=self._model.producer, graph_name=self._model.name)

    def get_providers(self):
        return list(self._providers)

    def get_provider_options(self):
        return {p: {} for p in self._providers}

    def set_providers(self, providers=None, provider_options=None):
        self._providers = _check_providers(providers)

    def get_session_options(self):
        return self._options

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model on `input_feed` ({name: array}) and returns the outputs named (all when
        `output_names` is None or empty) as numpy arrays, in that order."""
        if output_names:
            try:
                out_ids = [self._output_index[n] for n in output_names]
            except KeyError as e:
                raise errors.InvalidArgument(
                    f"onnxc: '{e.args[0]}' is not an output of the model (outputs: {', '.join(self._output_index)})",
                    "ONNXC_ERR_NOT_FOUND") from None
        else:
            out_ids = list(range(len(self._model.outputs)))
        session = self._acquire()
        try:
            return self._run(session, out_ids, input_feed)
        finally:
            with self._lock:
                self._idle.append(session)

    # ---- onnxc's own ---------------------------------------------------------------------------------

    @property
    def library(self):
        """The `onnxc.Library` this session runs (None when opened from a library path)."""
        return self._library

    # ---- internals -----------------------------------------------------------------------------------

    def _new_session(self):
        l = self._model.lib
        opts = _native.SessionOptions()
        l.onnxc_session_options_default(ctypes.byref(opts))
        threads = self._options.intra_op_num_threads or 0
        if threads < 0:
            raise errors.InvalidArgument(f"onnxc: intra_op_num_threads must be >= 0, got {threads}")
        opts.num_threads = threads
        opts.max_arena_bytes = getattr(self._options, "max_arena_bytes", 0) or 0
        handle = ctypes.c_void_p()
        _native.check(l.onnxc_session_create(self._model.handle, ctypes.byref(opts), ctypes.byref(handle)),
                      l.onnxc_last_error)
        return _CSession(l, handle, self._model)

    def _acquire(self):
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self._new_session()

    def _run(self, session, out_ids, input_feed):
        l, h = session.lib, session.handle
        if not hasattr(input_feed, "items"):
            raise errors.InvalidArgument("onnxc: input_feed must be a dict {input name: array}")
        missing = [arg.name for arg, _, _ in self._model.inputs if arg.name not in input_feed]
        if missing:  # the runtime would refuse too, by index; names say more
            raise errors.InvalidArgument(f"onnxc: missing input(s): {', '.join(missing)}", "ONNXC_ERR_INVALID_ARGUMENT")
        keep = []  # arrays and dims the runtime borrows until the run returns
        try:
            for name, value in input_feed.items():
                index = self._input_index.get(name)
                if index is None:
                    raise errors.InvalidArgument(
                        f"onnxc: '{name}' is not an input of the model (inputs: {', '.join(self._input_index)})",
                        "ONNXC_ERR_NOT_FOUND")
                arg, dtype, kind = self._model.inputs[index]
                if kind != 0:
                    raise errors.Unsupported(f"onnxc: input '{name}' is a {arg.type}: the Python API passes tensors "
                                             "only (the C API's onnxc_session_set_input_value takes the others)")
                tensor = _to_tensor(name, value, dtype, keep)
                _native.check(l.onnxc_session_set_input(h, index, ctypes.byref(tensor)),
                              lambda: l.onnxc_session_last_error(h))
        except BaseException:
            _reset(session)  # unbind what was set, so nothing borrowed outlives this call
            raise
        _native.check(l.onnxc_session_run(h), lambda: l.onnxc_session_last_error(h))
        del keep
        return [_from_tensor(session, i, self._model.outputs[i]) for i in out_ids]


class _CSession:
    """One onnxc_session *, freed with its Python object."""

    def __init__(self, lib, handle, model):
        self.lib, self.handle, self.model = lib, handle, model  # model: keeps the library loaded

    def __del__(self):
        if getattr(self, "handle", None):
            self.lib.onnxc_session_free(self.handle)
            self.handle = None


def _reset(session):
    # A run consumes the inputs set so far; running with none set fails at once and unbinds them all.
    session.lib.onnxc_session_run(session.handle)


def _check_providers(providers):
    if not providers:
        return ["CPUExecutionProvider"]
    names = [p[0] if isinstance(p, (tuple, list)) else p for p in providers]
    others = [p for p in names if p != "CPUExecutionProvider"]
    if others:
        # ONNX Runtime too falls back with a warning when a provider is not available.
        warnings.warn(f"onnxc runs the compiled CPU library; providers {', '.join(others)} are ignored "
                      "(compile with target='cuda' for a CUDA library)", stacklevel=3)
    return ["CPUExecutionProvider"]


def _to_tensor(name, value, model_dtype, keep):
    if model_dtype == 8:
        return _string_tensor(name, value, keep)
    arr = np.asarray(value)
    code = _FROM_NUMPY.get(arr.dtype)
    if model_dtype in _SUBBYTE and arr.dtype == _SUBBYTE[model_dtype]:
        code = model_dtype  # the unpacked form of the model's int4/uint4/int2/uint2 input
    if code is None:
        raise errors.InvalidArgument(f"onnxc: input '{name}' has numpy dtype {arr.dtype}, which has no ONNX "
                                     f"equivalent onnxc runs (the model wants tensor({_DTYPES[model_dtype][0]}))",
                                     "ONNXC_ERR_DTYPE_MISMATCH")
    # A no-op for C-contiguous arrays (the runtime reads the caller's buffer); np.require keeps a 0-d
    # array 0-d, where numpy 1.x's ascontiguousarray makes it 1-d.
    arr = np.require(arr, requirements="C")
    dims = (ctypes.c_int64 * max(arr.ndim, 1))(*arr.shape)
    keep += [arr, dims]
    return _native.Tensor(code, arr.ndim, dims, arr.ctypes.data if arr.size else None)


def _string_tensor(name, value, keep):
    arr = np.asarray(value, dtype=object)
    flat = [s.encode() if isinstance(s, str) else bytes(s) for s in arr.reshape(-1)]
    data = (ctypes.c_char_p * max(len(flat), 1))(*flat)
    dims = (ctypes.c_int64 * max(arr.ndim, 1))(*arr.shape)
    keep += [flat, data, dims]
    return _native.Tensor(8, arr.ndim, dims, ctypes.cast(data, ctypes.c_void_p))


def _from_tensor(session, index, info):
    arg, _, kind = info
    if kind != 0:
        raise errors.Unsupported(f"onnxc: output '{arg.name}' is a {arg.type}: the Python API returns tensors only")
    l, h = session.lib, session.handle
    t = _native.Tensor()
    _native.check(l.onnxc_session_get_output(h, index, ctypes.byref(t)), lambda: l.onnxc_session_last_error(h))
    shape = tuple(t.dims[d] for d in range(t.rank))
    n = int(np.prod(shape, dtype=np.int64))
    if t.dtype == 8:
        ptrs = ctypes.cast(t.data, ctypes.POINTER(ctypes.c_char_p))
        out = np.empty(n, dtype=object)
        for k in range(n):
            out[k] = (ptrs[k] or b"").decode(errors="surrogateescape")
        return out.reshape(shape)
    np_type = _DTYPES.get(t.dtype, (None, None))[1]
    if np_type is None:
        raise errors.Unsupported(f"onnxc: output '{arg.name}' is {arg.type}, which numpy cannot hold")
    dtype = np.dtype(np_type)
    if n == 0 or not t.data:
        return np.zeros(shape, dtype=dtype)
    # A copy: the session's arena holds the data only until its next run.
    buf = (ctypes.c_char * (n * dtype.itemsize)).from_address(t.data)
    return np.frombuffer(buf, dtype=dtype).reshape(shape).copy()
