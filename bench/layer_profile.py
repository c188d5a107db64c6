"""Ranks where onnxc loses to ONNX Runtime, kernel by kernel: onnxc's step profile (`onnxc bench
--profile --profile-json`) beside ONNX Runtime's per-node profile (SessionOptions.enable_profiling)
of the same model, inputs and thread count, each step's median over the profiled runs.

  layer_profile.py MODEL.onnx [--lib LIB.so] [--dims SYM=N,...] [--threads N] [--runs N] [--top N] [--kinds]

An onnxc step is matched to the ONNX Runtime nodes that produce any of the step's nodes' outputs
(ONNX Runtime names a fused or re-laid-out node after an output of its last original node, e.g.
`/layer1/layer1.0/relu/Relu_output_0_nchwc`, or keeps the node's own name). Rows, largest loss
first: onnxc ms, ORT ms, the difference, GFLOP/s of each (onnxc's FLOP count) and the nodes;
then the totals of matched and unmatched time, and (--kinds) the same per kind of convolution
(kernel, stride, depthwise or not, of the step's first Conv), each kind's GFLOP/s also as a share of
the FMA peak `onnxc bench` measures for the library's ISA. Times are per-step medians of wall time: run at 1
thread on a loaded machine they still include preemption, so compare rounds, not single rows.
--lib times an already compiled library of MODEL (onnxc bench otherwise compiles MODEL first,
untimed). Needs ONNX Runtime (bench/peers/python.sh finds an interpreter); ONNXC names onnxc
(default build/tools/onnxc).
"""
import argparse
import collections
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "peers"))
from bench_peer import default_dim, die, model_inputs, pairs, random_input  # noqa: E402


def onnxc_steps(onnxc, target, dims, threads, runs):
    """Per step of a run: (median ms, flops, [node names]) from onnxc's profile trace."""
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        cmd = [onnxc, "bench", target, "--threads", str(threads), "--runs", str(runs), "--profile",
               "--profile-json", trace]
        if dims:
            cmd += ["--dims", ",".join(f"{k}={v}" for k, v in dims.items())]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            die(f"onnxc bench failed:\n{r.stdout[-2000:]}")
        with open(trace) as f:
            events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    # "target ... (avx2: fp32 FMA peak 93 GFLOP/s on 1 thread here)"
    peak = re.search(r"fp32 FMA peak ([0-9.]+) GFLOP/s", r.stdout)
    durs, info = collections.defaultdict(list), {}
    for e in events:
        a = e.get("args", {})
        if e.get("ph") != "X" or "step" not in a:
            continue
        durs[a["step"]].append(e["dur"] / 1000)
        nodes = re.findall(r"'([^']*)'", a.get("nodes", ""))
        info[a["step"]] = (a.get("flops", -1), nodes, e.get("name", ""))
    steps = [(statistics.median(durs[s]), *info[s]) for s in sorted(durs)]
    return steps, float(peak.group(1)) if peak else 0.0


def ort_nodes(model, dims, threads, runs):
    """{node name: median ms} from ONNX Runtime's profile of `runs` runs (after 5 dropped)."""
    import onnxruntime as ort
    feeds = {}
    for i, (name, shape, dtype) in enumerate(model_inputs(model)):
        d = [x if isinstance(x, int) and x >= 0 else dims.setdefault(x, default_dim(x)) for x in shape]
        feeds[name] = random_input(dtype, d, 1234 + i)
    with tempfile.TemporaryDirectory() as tmp:
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(tmp, "ort")
        sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        for _ in range(5 + runs):  # the first 5 are dropped below
            sess.run(None, feeds)
        with open(sess.end_profiling()) as f:
            events = json.load(f)
    durs = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            durs[e["name"][: -len("_kernel_time")]].append(e["dur"] / 1000)
    return {n: statistics.median(v[5:] or v) for n, v in durs.items()}


def match(steps, ort, model):
    """ORT node names per onnxc step: a node whose name is one of the step's nodes, or an output of
    one of them (ORT's layout transformer names its nodes after outputs, with suffixes)."""
    import onnx
    g = onnx.load(model, load_external_data=False).graph
    outputs = {n.name: list(n.output) for n in g.node}
    owner = {}
    for i, (_, _, nodes, _) in enumerate(steps):
        for n in nodes:
            owner[n] = i
            for o in outputs.get(n, []):
                owner[o] = i
    per_step, unmatched = collections.defaultdict(list), []
    for name in ort:
        base = re.sub(r"(_nchwc|_output_0)+$", "", name)
        key = next((k for k in (name, base, base + "_output_0") if k in owner), None)
        if key is None:
            unmatched.append(name)
        else:
            per_step[owner[key]].append(name)
    return per_step, unmatched


def conv_kinds(model):
    """{node name: kind} for the model's Conv nodes: "3x3 s2", "1x1 s1", "dw 5x5 s1", "grouped 3x3 s1"."""
    import onnx
    from onnx import helper
    g = onnx.load(model, load_external_data=False).graph
    shapes = {t.name: list(t.dims) for t in g.initializer}
    kinds = {}
    for n in g.node:
        if n.op_type != "Conv":
            continue
        a = {x.name: helper.get_attribute_value(x) for x in n.attribute}
        w = shapes.get(n.input[1], [])
        kernel = list(a.get("kernel_shape", w[2:]))
        strides = list(a.get("strides", [1] * len(kernel)))
        group = a.get("group", 1)
        form = "" if group == 1 else "dw " if len(w) > 1 and w[1] == 1 else "grouped "
        kinds[n.name] = f"{form}{'x'.join(map(str, kernel))} s{'x'.join(map(str, sorted(set(strides))))}"
    return kinds


def kind_table(rows, kinds, peak):
    """Per kind of convolution (of a step's first Conv node; "other" without one): onnxc and ORT ms,
    GFLOP/s of each on onnxc's FLOP count and its share of `peak`."""
    agg = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])  # steps, onnxc ms, ORT ms, flops
    for diff, _, ms, ort_ms, flops, nodes, _ in rows:
        kind = next((kinds[n] for n in nodes if n in kinds), "other")
        a = agg[kind]
        a[0] += 1
        a[1] += ms
        a[2] += ort_ms  # 0 for a step matched to no ORT node
        a[3] += max(flops, 0)
    share = lambda f, ms: f"{100 * f / ms / 1e6 / peak:5.0f}%" if peak > 0 and f > 0 and ms > 0 else "     -"
    print(f"\n{'kind':<16} {'steps':>5} {'onnxc ms':>9} {'ORT ms':>8} {'diff':>8} {'GF/s':>8} {'of peak':>7} {'ORT GF/s':>8} {'of peak':>7}")
    for kind, (n, ms, ort_ms, f) in sorted(agg.items(), key=lambda kv: kv[1][2] - kv[1][1]):
        gf = f"{f / ms / 1e6:8.1f}" if f and ms > 0 else "       -"
        ogf = f"{f / ort_ms / 1e6:8.1f}" if f and ort_ms > 0 else "       -"
        print(f"{kind:<16} {n:5d} {ms:9.3f} {ort_ms:8.3f} {ms - ort_ms:8.3f} {gf} {share(f, ms):>7} {ogf} {share(f, ort_ms):>7}")
    if peak > 0:
        print(f"peak: {peak:.0f} GFLOP/s (onnxc bench's fp32 FMA peak for the library's ISA at this thread count)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--lib", help="an already compiled library of MODEL")
    ap.add_argument("--dims", default="")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--kinds", action="store_true", help="also the totals per kind of convolution")
    o = ap.parse_args()
    if o.runs < 1 or o.threads < 1:
        die("--runs and --threads must be >= 1")
    dims = pairs(o.dims, int)
    onnxc = os.environ.get("ONNXC", os.path.join(HERE, "..", "build", "tools", "onnxc"))
    steps, peak = onnxc_steps(onnxc, o.lib or o.model, dims, o.threads, o.runs)
    ort = ort_nodes(o.model, dims, o.threads, o.runs)
    per_step, unmatched = match(steps, ort, o.model)
    rows = []
    for i, (ms, flops, nodes, name) in enumerate(steps):
        ort_ms = sum(ort[n] for n in per_step.get(i, []))
        rows.append((ms - ort_ms if per_step.get(i) else float("nan"), i, ms, ort_ms, flops, nodes, name))
    rows.sort(key=lambda r: -(r[0] if r[0] == r[0] else -1e9))

    def gflops(flops, ms):
        return f"{flops / ms / 1e6:8.1f}" if flops and flops > 0 and ms > 0 else "       -"

    print(f"{'onnxc ms':>9} {'ORT ms':>8} {'diff':>8} {'GF/s':>8} {'ORT GF/s':>8}  step  kernel: nodes")
    for diff, i, ms, ort_ms, flops, nodes, name in rows[: o.top]:
        d = f"{diff:8.3f}" if diff == diff else "       -"
        print(f"{ms:9.3f} {ort_ms:8.3f} {d} {gflops(flops, ms)} {gflops(flops, ort_ms)}  {i:4d}  {name}: "
              f"{', '.join(nodes)[:90]}")
    matched = [r for r in rows if r[0] == r[0]]
    print(f"total: onnxc {sum(r[2] for r in rows):.2f} ms over {len(rows)} steps "
          f"({sum(r[2] for r in matched):.2f} matched), ORT {sum(ort.values()):.2f} ms over {len(ort)} nodes "
          f"({sum(r[3] for r in matched):.2f} matched); ORT nodes matched to no step: "
          f"{', '.join(unmatched[:8]) or 'none'}{' ...' if len(unmatched) > 8 else ''}")
    if o.kinds:
        kind_table(rows, conv_kinds(o.model), peak)


if __name__ == "__main__":
    main()
