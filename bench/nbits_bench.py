#!/usr/bin/env python3
"""The int4 weight GEMV/GEMM benchmark (issue 23): one com.microsoft.MatMulNBits product, Y = A · W
with W [K, N] as 4-bit codes in blocks along K (a scale and a zero point per block and column),
timed by `onnxc bench` and by ONNX Runtime's own MatMulNBits kernel on the same file, beside the
machine's memory bandwidth (bench/triad). A decode step (M = 1) is memory-bound: it should stream the
packed weight once, so its GB/s of weight bytes (codes + scales + zero points) is compared with the
triad's; for M = 128 (prefill) the ratio against ONNX Runtime is what counts.

  nbits_bench.py --onnxc build/tools/onnxc --triad build/bench/triad [--k 4096] [--n 4096]
                 [--block 32] [--rows 1,128] [--threads N] [--runs 30] [--symmetric]

Run by the ONNX Runtime peer's interpreter (bench/peers/python.sh). Medians of --runs runs each.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper


def nbits_model(k, n, block, symmetric, seed=0):
    """A MatMulNBits model over random codes and scales; returns (model, weight bytes)."""
    rng = np.random.default_rng(seed)
    kb = (k + block - 1) // block
    b = rng.integers(0, 256, size=(n, kb, block // 2), dtype=np.uint8)
    scales = (rng.random(n * kb, dtype=np.float32) * 0.02 + 0.001).astype(np.float32)
    inits = [helper.make_tensor("B", TensorProto.UINT8, b.shape, b.tobytes(), raw=True),
             helper.make_tensor("scales", TensorProto.FLOAT, scales.shape, scales.tobytes(), raw=True)]
    inputs = ["A", "B", "scales"]
    nbytes = b.nbytes + scales.nbytes
    if not symmetric:
        zp = rng.integers(0, 256, size=n * ((kb + 1) // 2), dtype=np.uint8)
        inits.append(helper.make_tensor("zero_points", TensorProto.UINT8, zp.shape, zp.tobytes(), raw=True))
        inputs.append("zero_points")
        nbytes += zp.nbytes
    node = helper.make_node("MatMulNBits", inputs, ["Y"], domain="com.microsoft", K=k, N=n, bits=4, block_size=block)
    graph = helper.make_graph([node], "nbits", [helper.make_tensor_value_info("A", TensorProto.FLOAT, ["m", k])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["m", n])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 10
    return model, nbytes


def time_onnxc(onnxc, path, m, threads, runs):
    out = subprocess.run([onnxc, "bench", path, "--dims", f"m={m}", "--threads", str(threads), "--runs", str(runs),
                          "--warmup", "5", "--tsv"], check=True, capture_output=True, text=True).stdout
    return float(out.split()[0])


def time_ort(path, m, k, threads, runs):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    sess = ort.InferenceSession(path, sess_options=so, providers=["CPUExecutionProvider"])
    a = (np.random.default_rng(1).random((m, k), dtype=np.float32) * 2 - 1)
    for _ in range(5):
        sess.run(None, {"A": a})
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(None, {"A": a})
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def triad_gbs(triad, threads):
    out = subprocess.run([triad, str(threads), "256", "9"], check=True, capture_output=True, text=True).stdout
    return float(re.search(r"median ([0-9.]+) GB/s", out).group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--onnxc", required=True)
    p.add_argument("--triad", required=True)
    p.add_argument("--k", type=int, default=4096)
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--block", type=int, default=32)
    p.add_argument("--rows", default="1,128")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--symmetric", action="store_true", help="no zero points")
    args = p.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        model, nbytes = nbits_model(args.k, args.n, args.block, args.symmetric)
        path = os.path.join(tmp, "nbits.onnx")
        onnx.save(model, path)
        bw = triad_gbs(args.triad, args.threads)
        print(f"MatMulNBits K={args.k} N={args.n} bits=4 block={args.block} "
              f"{'symmetric' if args.symmetric else 'zero points'}; weight {nbytes / 2**20:.2f} MiB "
              f"(codes + scales{'' if args.symmetric else ' + zero points'}); {args.threads} threads; "
              f"triad {bw:.1f} GB/s; onnxruntime {ort.__version__}; medians of {args.runs} runs")
        print(f"{'M':>5} {'onnxc ms':>9} {'ORT ms':>9} {'onnxc GB/s':>11} {'of triad':>9} {'ORT GB/s':>9} "
              f"{'ORT/onnxc':>10}")
        for m in (int(r) for r in args.rows.split(",")):
            ours = time_onnxc(args.onnxc, path, m, args.threads, args.runs)
            theirs = time_ort(path, m, args.k, args.threads, args.runs)
            g_ours, g_theirs = nbytes / ours / 1e6, nbytes / theirs / 1e6
            print(f"{m:>5} {ours:>9.3f} {theirs:>9.3f} {g_ours:>11.1f} {g_ours / bw:>8.0%} {g_theirs:>9.1f} "
                  f"{theirs / ours:>9.2f}x")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
