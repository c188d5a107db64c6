"""The exceptions onnxc raises: one base class, and a subclass per kind of failure, each also a
subclass of the built-in exception Python code already catches for that kind (ValueError, ...)."""


class Error(RuntimeError):
    """Any onnxc failure. `str(e)` is the one-line message the CLI or the runtime gave;
    `status` names the runtime status ("ONNXC_ERR_SHAPE_MISMATCH") or the CLI outcome."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class InvalidArgument(Error, ValueError):
    """A bad call: unknown input or output name, wrong dtype, rank or dim, input not given."""


class CompileError(Error):
    """`onnxc` refused the model or the options (CLI exit status 2): the message names the file,
    node and op."""


class InternalError(Error):
    """A bug in onnxc (CLI exit status 3, or ONNXC_ERR_INTERNAL): please report it."""


class LoadError(Error):
    """A compiled library could not be loaded (dlopen failed, ABI version or descriptor refused)."""


class RunError(Error):
    """A kernel or host step failed while running (ONNXC_ERR_KERNEL_FAILED)."""


class Unsupported(Error, NotImplementedError):
    """Something onnxc does not handle yet (a dtype, a sequence input from Python, ...)."""


class OutOfMemory(Error, MemoryError):
    """The session's arena could not be allocated or exceeds its limit."""


# Runtime status numbers (runtime/include/onnxc/runtime.h, enum onnxc_status) -> exception class.
STATUS_CLASSES = {
    1: InvalidArgument,   # ONNXC_ERR_INVALID_ARGUMENT
    2: InvalidArgument,   # ONNXC_ERR_NOT_FOUND
    3: InvalidArgument,   # ONNXC_ERR_DTYPE_MISMATCH
    4: InvalidArgument,   # ONNXC_ERR_SHAPE_MISMATCH
    5: OutOfMemory,       # ONNXC_ERR_OUT_OF_MEMORY
    6: RunError,          # ONNXC_ERR_KERNEL_FAILED
    7: LoadError,         # ONNXC_ERR_LOAD_FAILED
    8: Unsupported,       # ONNXC_ERR_UNSUPPORTED
    9: InternalError,     # ONNXC_ERR_INTERNAL
}
