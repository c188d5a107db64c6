"""onnxc from Python: compile ONNX models into native libraries and run them with ONNX Runtime's
interface (`onnxc.InferenceSession` in place of `onnxruntime.InferenceSession`)."""
from .compiler import Comparison, Library, compare, compile, inspect
from .errors import (CompileError, Error, InternalError, InvalidArgument, LoadError, OutOfMemory, RunError,
                     Unsupported)
from .model import ModelMetadata, NodeArg
from .session import (ExecutionMode, GraphOptimizationLevel, InferenceSession, SessionOptions,
                      get_available_providers, get_device)
from .tensor_pb import load_tensor

__version__ = "0.1.0"

__all__ = [
    "compile", "inspect", "compare", "load_tensor", "Library", "Comparison", "InferenceSession", "SessionOptions",
    "NodeArg", "ModelMetadata", "GraphOptimizationLevel", "ExecutionMode", "get_available_providers",
    "get_device", "Error", "InvalidArgument", "CompileError", "InternalError", "LoadError", "RunError",
    "Unsupported", "OutOfMemory",
]
