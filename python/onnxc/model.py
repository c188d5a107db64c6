"""A compiled model library as the runtime describes it: its inputs and outputs (NodeArg, with ONNX
Runtime's type names) and metadata. Shared by `compiler.Library` and `session.InferenceSession`, so neither
module imports the other for it."""
import ctypes
import os
from dataclasses import dataclass, field

import numpy as np

from . import _native

# ONNX TensorProto.DataType -> (ONNX Runtime's type name, numpy dtype or None where numpy has none).
_DTYPES = {
    1: ("float", np.float32), 2: ("uint8", np.uint8), 3: ("int8", np.int8), 4: ("uint16", np.uint16),
    5: ("int16", np.int16), 6: ("int32", np.int32), 7: ("int64", np.int64), 8: ("string", object),
    9: ("bool", np.bool_), 10: ("float16", np.float16), 11: ("double", np.float64), 12: ("uint32", np.uint32),
    13: ("uint64", np.uint64), 16: ("bfloat16", None), 17: ("float8e4m3fn", None), 18: ("float8e4m3fnuz", None),
    19: ("float8e5m2", None), 20: ("float8e5m2fnuz", None), 24: ("float8e8m0", None), 23: ("float4e2m1", None),
    # Sub-byte integers travel unpacked, one element per byte: int8/uint8 arrays holding in-range values.
    21: ("uint4", np.uint8), 22: ("int4", np.int8), 25: ("uint2", np.uint8), 26: ("int2", np.int8),
}
_SUBBYTE = {21: np.uint8, 22: np.int8, 25: np.uint8, 26: np.int8}
_FROM_NUMPY = {np.dtype(t): code for code, (_, t) in _DTYPES.items() if t not in (None, object) and code not in _SUBBYTE}
_VALUE_KINDS = {0: "tensor({})", 1: "seq(tensor({}))", 2: "optional(tensor({}))", 3: "optional(seq(tensor({})))"}


@dataclass
class NodeArg:
    """An input or output as ONNX Runtime describes it: `shape` holds ints for fixed dims and strings for
    symbolic ones ("batch") or derived ones ("seq + 1"); `type` is "tensor(float)", "tensor(int64)", ..."""
    name: str
    type: str
    shape: list


@dataclass
class ModelMetadata:
    """What `get_modelmeta()` returns, with ONNX Runtime's field names."""
    producer_name: str = ""
    graph_name: str = ""
    domain: str = ""
    description: str = ""
    graph_description: str = ""
    version: int = 0
    custom_metadata_map: dict = field(default_factory=dict)


class _Model:
    """One loaded model library (onnxc_model *), freed when the last session of it is gone."""

    def __init__(self, path):
        self.lib = _native.lib()
        self.handle = ctypes.c_void_p()
        status = self.lib.onnxc_model_open(os.fsencode(path), ctypes.byref(self.handle))
        _native.check(status, self.lib.onnxc_last_error)
        desc = self.lib.onnxc_model_desc_of(self.handle).contents
        self.name = self.lib.onnxc_model_name(self.handle).decode()
        self.producer = (desc.producer or b"").decode()
        self.inputs = self._infos(self.lib.onnxc_model_num_inputs, self.lib.onnxc_model_input_info,
                                  desc, desc.inputs, desc.n_inputs)
        self.outputs = self._infos(self.lib.onnxc_model_num_outputs, self.lib.onnxc_model_output_info,
                                   desc, desc.outputs, desc.n_outputs)

    def _infos(self, count_fn, info_fn, desc, ids, n_ids):
        infos = []
        for i in range(count_fn(self.handle)):
            vi = _native.ValueInfo()
            _native.check(info_fn(self.handle, i, ctypes.byref(vi)), self.lib.onnxc_last_error)
            shape = []
            for d in range(vi.rank):
                name = vi.dim_names[d]
                shape.append(int(vi.dims[d]) if name is None else name.decode())
            kind = 0
            if desc.abi_version in _native.ABI_VERSIONS and i < n_ids:
                kind = desc.tensors[ids[i]].value
            elem = _DTYPES.get(vi.dtype, (f"dtype{vi.dtype}", None))[0]
            infos.append((NodeArg(vi.name.decode(), _VALUE_KINDS.get(kind, "tensor({})").format(elem), shape),
                          vi.dtype, kind))
        return infos

    def __del__(self):
        if getattr(self, "handle", None):
            self.lib.onnxc_model_free(self.handle)
            self.handle = None
