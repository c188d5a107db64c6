"""Times a peer runtime (ONNX Runtime, or OpenVINO) on a model with random inputs: the reference
point for `onnxc bench`. Same options and the same rule for dynamic dims as `onnxc bench`, so both
see equal shapes.

  bench_peer.py MODEL [--engine ort|openvino] [--shapes NAME=DIMS,...] [--dims SYM=N,...]
                [--threads N] [--runs N] [--warmup N] [--bind] [--no-spin] [--tsv]

--bind (ONNX Runtime): runs through I/O binding, as a generation loop does: every input bound once as
an OrtValue, every output bound to an OrtValue allocated once (its shape from a first run), so a run
neither converts inputs nor allocates or copies outputs into numpy (what `onnxc bench --keep-cache`
is timed against: ONNX Runtime's step still writes each present whole from its past).

--no-spin (ONNX Runtime): its worker threads sleep between runs instead of spinning
(session.intra_op.allow_spinning = 0): on a machine other processes share, spinning threads lose
their cores, so this is ONNX Runtime's better setting there.

--tsv prints one line: median_ms p10_ms p90_ms peak_rss_bytes 0 (the columns of `onnxc bench --tsv`).
"""
import argparse
import resource
import sys
import time

import numpy as np


def die(msg, code=2):
    print(f"bench_peer: {msg}", file=sys.stderr)
    sys.exit(code)


def pairs(text, parse):
    out = {}
    for item in filter(None, text.split(",")):
        name, eq, value = item.partition("=")
        if not eq:
            die(f"'{item}' is not NAME=VALUE")
        out[name] = parse(value)
    return out


def dims_of(text):
    return [] if text == "scalar" else [int(d) for d in text.split("x")]


def default_dim(symbol):
    s = symbol.lower()
    return 1 if "batch" in s or s in ("n", "b") else 128


def random_input(dtype, dims, seed):
    """Deterministic values (they do not matter for timing): floats in [-1, 1), integers in 0..7
    (valid token ids and indices for every model bench/ uses), booleans half true."""
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.floating):
        return (rng.random(dims) * 2 - 1).astype(dtype)
    if dtype == np.bool_:
        return rng.random(dims) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 8, size=dims).astype(dtype)
    die(f"input dtype {dtype} is not handled by this script")


def model_inputs(model):
    """(name, dims, numpy dtype) of each graph input that is not an initializer, dims as ints or
    dim_param names: read from the file, so every engine sees the same symbols."""
    import onnx
    from onnx import helper
    m = onnx.load(model, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    out = []
    for v in m.graph.input:
        if v.name in inits:
            continue
        t = v.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else d.dim_param for d in t.shape.dim]
        out.append((v.name, dims, helper.tensor_dtype_to_np_dtype(t.elem_type).type))
    return out


def ort_runner(model, threads, spin=True):
    import onnxruntime as ort
    so = ort.SessionOptions()
    if not spin:
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    return f"onnxruntime {ort.__version__}", lambda feeds: sess.run(None, feeds), sess


def ort_bound_runner(sess, feeds):
    """A run of `sess` on `feeds` through I/O binding: inputs and outputs bound once to OrtValues."""
    import onnxruntime as ort
    outs = sess.run(None, feeds)
    binding = sess.io_binding()
    keep = []
    for name, a in feeds.items():
        keep.append(ort.OrtValue.ortvalue_from_numpy(a))
        binding.bind_ortvalue_input(name, keep[-1])
    for o, a in zip(sess.get_outputs(), outs):
        keep.append(ort.OrtValue.ortvalue_from_shape_and_type(list(a.shape), a.dtype))
        binding.bind_ortvalue_output(o.name, keep[-1])

    def run(_):
        sess.run_with_iobinding(binding)
    run.keep = keep  # the bound values live as long as the runner
    return run


def openvino_runner(model, threads, spin=True):
    import openvino as ov
    core = ov.Core()
    # f32 like the other engines: on CPUs with bf16 or AMX units OpenVINO would otherwise compute in bf16.
    config = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32"}
    if threads:
        config["INFERENCE_NUM_THREADS"] = threads
    req = core.compile_model(core.read_model(model), "CPU", config).create_infer_request()
    return f"openvino {ov.__version__}", lambda feeds: req.infer(feeds), None


def percentile(sorted_ms, q):
    pos = q * (len(sorted_ms) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_ms) - 1)
    return sorted_ms[lo] + (sorted_ms[hi] - sorted_ms[lo]) * (pos - lo)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--engine", choices=["ort", "openvino"], default="ort")
    ap.add_argument("--shapes", default="")
    ap.add_argument("--dims", default="")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--bind", action="store_true")
    ap.add_argument("--no-spin", action="store_true")
    ap.add_argument("--tsv", action="store_true")
    o = ap.parse_args()
    if o.bind and o.engine != "ort":
        die("--bind is for ONNX Runtime")
    if o.runs < 1:
        die("--runs must be >= 1")
    shapes = pairs(o.shapes, dims_of)
    dims = pairs(o.dims, int)
    try:
        inputs = model_inputs(o.model)
        version, run, sess = (ort_runner if o.engine == "ort" else openvino_runner)(o.model, o.threads, not o.no_spin)
    except Exception as e:  # the engine's own message names what it could not load
        die(f"{o.engine} cannot load {o.model}: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
    feeds, notes = {}, []
    for i, (name, shape, dtype) in enumerate(inputs):
        if name in shapes:
            d = shapes.pop(name)
        else:
            d = []
            for x in shape:
                if isinstance(x, int) and x >= 0:
                    d.append(x)
                    continue
                if not isinstance(x, str) or not x:
                    die(f"input '{name}' has an unnamed dynamic dim: use --shapes")
                d.append(dims.setdefault(x, default_dim(x)))
        notes.append(f"{name}={'x'.join(map(str, d)) or 'scalar'}")
        feeds[name] = random_input(dtype, d, 1234 + i)
    if shapes:
        die(f"--shapes: the model has no input '{next(iter(shapes))}'")
    if o.bind:
        run = ort_bound_runner(sess, feeds)
        notes.append("(I/O binding)")
    for _ in range(o.warmup):
        run(feeds)
    ms = []
    cpu0 = time.process_time()
    for _ in range(o.runs):
        t0 = time.perf_counter()
        run(feeds)
        ms.append((time.perf_counter() - t0) * 1e3)
    cpu_ms = (time.process_time() - cpu0) * 1e3 / o.runs
    ms.sort()
    med, p10, p90 = percentile(ms, 0.5), percentile(ms, 0.1), percentile(ms, 0.9)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if o.tsv:
        print(f"{med:.4f}\t{p10:.4f}\t{p90:.4f}\t{peak}\t0")
        return
    print(f"model     {o.model} ({version}, CPU)")
    print(f"inputs    {' '.join(notes)}")
    print(f"threads   {o.threads or 'engine default'}   runs {o.runs} (+{o.warmup} warmup)")
    print(f"latency   median {med:.3f} ms   p10 {p10:.3f} ms   p90 {p90:.3f} ms   min {ms[0]:.3f} ms")
    print(f"memory    peak RSS {peak / 1048576:.1f} MiB (python process)")
    # As `onnxc bench` prints it: the engine's CPU time per run, all threads (spinning ones too).
    print(f"cpu       {cpu_ms:.1f} ms of CPU time per run (all threads)")


if __name__ == "__main__":
    main()
