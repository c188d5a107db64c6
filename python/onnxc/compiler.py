"""onnxc.compile, onnxc.inspect and onnxc.compare: the `onnxc` CLI run as a subprocess, its --json
output read back as Python data, and its one-line error message raised as an exception."""
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from . import _native, errors
from .model import ModelMetadata, _Model

_LIBRARY_SUFFIXES = (".so", ".dylib")


def is_library_path(path):
    """True for a compiled model library (libNAME.so), False for an .onnx model or a model folder."""
    return os.fspath(path).endswith(_LIBRARY_SUFFIXES)


def run_cli(command, args):
    """Runs `onnxc COMMAND ARGS...`; returns its stdout. Exit status 2 raises CompileError and 3
    InternalError, each carrying the CLI's one-line message (`onnxc compile: error: ...`); status 1
    (outputs differ) is returned to the caller as (stdout, 1)."""
    cmd = [_native.cli_path(), command] + [os.fspath(a) for a in args]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode in (0, 1):
        return proc.stdout, proc.returncode
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("onnxc")]
    message = lines[0] if lines else (proc.stderr.strip() or f"onnxc {command} exited with status {proc.returncode}")
    if proc.returncode == 2:
        raise errors.CompileError(message, "exit 2")
    if proc.returncode == 3:
        raise errors.InternalError(message, "exit 3")
    raise errors.Error(f"{message} (onnxc {command} exited with status {proc.returncode})", f"exit {proc.returncode}")


class Library:
    """A compiled model: `path` (libNAME.so), `static_library`, `header`, `name`, `dir`; `inputs` and
    `outputs` (NodeArg, as InferenceSession.get_inputs gives them); `kernels` (calls per run, distinct,
    from the cache); `fusions` (what fused and the near misses, as `inspect --fusions --json`);
    `target`; `info` (everything `onnxc compile --json` printed)."""

    def __init__(self, info, tmpdir=None):
        self.info = info
        self.path = info["library"]
        self.static_library = info.get("static_library")
        self.header = info.get("header")
        self.name = info["name"]
        self.dir = os.path.dirname(self.path)
        self.target = info.get("resolved_target", info.get("target"))
        self.kernels = {k: info[k] for k in ("kernels", "distinct_kernels", "cache_hits")}
        self.fusions = info.get("fusions", {})
        self._tmpdir = tmpdir  # deleted with this object when compile() chose the folder
        model = _Model(self.path)
        self.inputs = [i[0] for i in model.inputs]
        self.outputs = [o[0] for o in model.outputs]

    def metadata(self):
        i = self.info
        return ModelMetadata(producer_name=i.get("producer_name", ""), graph_name=i.get("graph_name", self.name),
                             graph_description=i.get("graph_doc_string", ""),
                             domain=i.get("domain", ""), description=i.get("doc_string", ""),
                             version=i.get("model_version", 0), custom_metadata_map=dict(i.get("metadata", {})))

    def __repr__(self):
        return (f"Library({self.path!r}, inputs={[a.name for a in self.inputs]}, "
                f"outputs={[a.name for a in self.outputs]}, kernels={self.kernels['kernels']})")


def _no_fuse_arg(no_fuse):
    if isinstance(no_fuse, str):
        return no_fuse
    return ",".join(no_fuse)


def compile(model, out_dir=None, *, name=None, target="host", threads=None, quantize=None, no_fuse=(),
            cache=True):
    """Compiles an .onnx model (`onnxc compile`) into out_dir (a temporary folder, deleted with the
    returned Library, when None) and returns the Library."""
    tmpdir = None
    if out_dir is None:
        tmpdir = tempfile.mkdtemp(prefix="onnxc-lib-")
        out_dir = os.path.join(tmpdir, "lib")
    args = [model, "-o", out_dir, "--json", "--quiet", "--target", target]
    if name is not None:
        args += ["--name", name]
    if threads is not None:
        args += ["--threads", str(int(threads))]
    if quantize:
        args += ["--quantize", quantize]
    if no_fuse:
        args += ["--no-fuse", _no_fuse_arg(no_fuse)]
    if not cache:
        args.append("--no-cache")
    try:
        out, _ = run_cli("compile", args)
        lib = Library(json.loads(out), _TempDir(tmpdir) if tmpdir else None)
    except BaseException:
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)
        raise
    return lib


class _TempDir:
    def __init__(self, path):
        self.path = path

    def __del__(self):
        shutil.rmtree(self.path, ignore_errors=True)


def inspect(model, *, fusions=False, no_fuse=(), coverage=True):
    """Describes an .onnx model as a dict (`onnxc inspect --json`): producer, opsets, inputs and outputs
    (name, type text, dtype, shape with symbolic dims as strings), op histogram, parameters, and the ops
    codegen cannot lower ("unsupported"; None with coverage=False). With fusions=True the dict also holds
    "fusions": what fused and the near misses with their reasons (`inspect --fusions --json`)."""
    args = [model, "--json"] + ([] if coverage else ["--no-coverage"])
    out, _ = run_cli("inspect", args)
    result = json.loads(out)
    if fusions:
        fargs = [model, "--fusions", "--json"] + (["--no-fuse", _no_fuse_arg(no_fuse)] if no_fuse else [])
        result["fusions"] = json.loads(run_cli("inspect", fargs)[0])
    return result


@dataclass
class Comparison:
    """What `onnxc compare` found: `ok` when every output of every data set matched; `data_sets` holds one
    dict per folder ({"dir", "ok", "outputs": [{"name", "ok", "max_abs_err", "max_rel_err",
    "norm_rel_err", "mismatches", "numel", "problem", "worst": [...]}]})."""
    ok: bool
    matched: int
    total: int
    first_failure: str
    rtol: float
    atol: float
    data_sets: list

    def __bool__(self):
        return self.ok


def compare(model, *data, rtol=1e-3, atol=1e-7, threads=None, target=None, quantize=None, worst=5):
    """Runs a model (.onnx, compiled .so, a model folder, or a Library) on ONNX test-data folders
    (test_data_set_N, or folders holding them; default: the model's folder) and compares each output
    with its reference. A mismatch is a result (ok=False), not an exception."""
    if isinstance(model, Library):
        model = model.path
    args = [model, *data, "--json", "--rtol", repr(float(rtol)), "--atol", repr(float(atol)), "--worst", str(worst)]
    if threads is not None:
        args += ["--threads", str(int(threads))]
    if target:
        args += ["--target", target]
    if quantize:
        args += ["--quantize", quantize]
    out, _ = run_cli("compare", args)
    r = json.loads(out)
    return Comparison(ok=r["matched"] == r["total"], matched=r["matched"], total=r["total"],
                      first_failure=r["first_failure"], rtol=r["rtol"], atol=r["atol"], data_sets=r["data_sets"])
