#!/usr/bin/env python3
"""The int4 weight GEMV/GEMM benchmark (issue 23): a chain of --layers com.microsoft.MatMulNBits
products, Y = A · W with W [K, K] as 4-bit codes in blocks along K (a scale and a zero point per
block and column), each layer its own weights so that together they are far larger than the caches
(a language model's decode step streams every weight from memory once; one 10 MiB weight timed in
a loop would be served from a 32 MiB L3),
timed by `onnxc bench` and by ONNX Runtime's own MatMulNBits kernel on the same file, beside the
machine's memory bandwidth (bench/triad). A decode step (M = 1) is memory-bound: it should stream the
packed weight once, so its GB/s of weight bytes (codes + scales + zero points) is compared with the
triad's; for M = 128 (prefill) the ratio against ONNX Runtime is what counts.

  nbits_bench.py --onnxc build/tools/onnxc --triad build/bench/triad [--k 4096] [--layers 16]
                 [--block 32] [--rows 1,128] [--threads N] [--runs 30] [--symmetric] [--no-per-product]
                 [--accuracy-level 0|4]

--accuracy-level 4 writes MatMulNBits' accuracy_level = 4 (what ONNX Runtime GenAI's builder writes for
CPUs): both engines may then quantize A to int8 per block and multiply the codes in integers.

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


def nbits_model(k, layers, block, symmetric, accuracy_level=0, seed=0):
    """A chain of MatMulNBits over random codes and scales; returns (model, weight bytes).
    accuracy_level 4 lets both engines quantize A to int8 per block and multiply in integers."""
    rng = np.random.default_rng(seed)
    kb = (k + block - 1) // block
    nodes, inits, nbytes = [], [], 0
    for i in range(layers):
        b = rng.integers(0, 256, size=(k, kb, block // 2), dtype=np.uint8)
        scales = (rng.random(k * kb, dtype=np.float32) * 0.02 + 0.001).astype(np.float32)
        inits += [helper.make_tensor(f"B{i}", TensorProto.UINT8, b.shape, b.tobytes(), raw=True),
                  helper.make_tensor(f"scales{i}", TensorProto.FLOAT, scales.shape, scales.tobytes(), raw=True)]
        inputs = ["A" if i == 0 else f"Y{i - 1}", f"B{i}", f"scales{i}"]
        nbytes += b.nbytes + scales.nbytes
        if not symmetric:
            zp = rng.integers(0, 256, size=k * ((kb + 1) // 2), dtype=np.uint8)
            inits.append(helper.make_tensor(f"zero_points{i}", TensorProto.UINT8, zp.shape, zp.tobytes(), raw=True))
            inputs.append(f"zero_points{i}")
            nbytes += zp.nbytes
        level = {"accuracy_level": accuracy_level} if accuracy_level else {}
        nodes.append(helper.make_node("MatMulNBits", inputs, [f"Y{i}"], domain="com.microsoft", K=k, N=k, bits=4,
                                      block_size=block, **level))
    graph = helper.make_graph(nodes, "nbits", [helper.make_tensor_value_info("A", TensorProto.FLOAT, ["m", k])],
                              [helper.make_tensor_value_info(f"Y{layers - 1}", TensorProto.FLOAT, ["m", k])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 10
    return model, nbytes


def float_model(k, seed=0):
    """One float32 MatMul of the same shape: the product int4 prefill competes with."""
    w = (np.random.default_rng(seed).random((k, k), dtype=np.float32) - 0.5) * 0.02
    node = helper.make_node("MatMul", ["A", "W"], ["Y"])
    graph = helper.make_graph([node], "f32", [helper.make_tensor_value_info("A", TensorProto.FLOAT, ["m", k])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["m", k])],
                              [helper.make_tensor("W", TensorProto.FLOAT, w.shape, w.tobytes(), raw=True)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def time_onnxc(onnxc, path, m, threads, runs):
    """(median wall ms, CPU ms per run over all threads) of `onnxc bench`."""
    out = subprocess.run([onnxc, "bench", path, "--dims", f"m={m}", "--threads", str(threads), "--runs", str(runs),
                          "--warmup", "5"], check=True, capture_output=True, text=True).stdout
    wall = float(re.search(r"median ([0-9.]+) ms", out).group(1))
    cpu = float(re.search(r"cpu +([0-9.]+) ms of CPU time", out).group(1))
    return wall, cpu


def time_ort(path, m, k, threads, runs):
    """(median wall ms, CPU ms per run of this process) of ONNX Runtime."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    sess = ort.InferenceSession(path, sess_options=so, providers=["CPUExecutionProvider"])
    a = (np.random.default_rng(1).random((m, k), dtype=np.float32) * 2 - 1)
    for _ in range(5):
        sess.run(None, {"A": a})
    times = []
    c0 = time.process_time()
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(None, {"A": a})
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times)), (time.process_time() - c0) * 1e3 / runs


def triad_gbs(triad, threads):
    out = subprocess.run([triad, str(threads), "256", "9"], check=True, capture_output=True, text=True).stdout
    return float(re.search(r"median ([0-9.]+) GB/s", out).group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--onnxc", required=True)
    p.add_argument("--triad", required=True)
    p.add_argument("--k", type=int, default=4096)
    p.add_argument("--layers", type=int, default=16, help="products in the chain, each its own weight")
    p.add_argument("--block", type=int, default=32)
    p.add_argument("--rows", default="1,128")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--symmetric", action="store_true", help="no zero points")
    p.add_argument("--accuracy-level", type=int, default=0, choices=(0, 1, 2, 3, 4),
                   help="MatMulNBits accuracy_level (4: int8 activations)")
    p.add_argument("--no-per-product", action="store_true", help="skip the per-product table (int4 against float32)")
    args = p.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        model, nbytes = nbits_model(args.k, args.layers, args.block, args.symmetric, args.accuracy_level)
        path = os.path.join(tmp, "nbits.onnx")
        onnx.save(model, path)
        bw = triad_gbs(args.triad, args.threads)
        print(f"{args.layers} x MatMulNBits K=N={args.k} bits=4 block={args.block} "
              f"{'symmetric' if args.symmetric else 'zero points'} accuracy_level={args.accuracy_level}; weights {nbytes / 2**20:.1f} MiB "
              f"(codes + scales{'' if args.symmetric else ' + zero points'}); {args.threads} threads; "
              f"triad {bw:.1f} GB/s; onnxruntime {ort.__version__}; medians of {args.runs} runs; "
              f"load {' '.join(open('/proc/loadavg').read().split()[:3])}")
        # CPU ms: CPU time per run over all threads (on a busy machine the wall time also counts the
        # time other processes held the cores); cpu GB/s: weight bytes per CPU-second.
        print(f"{'M':>5} {'onnxc ms':>9} {'ORT ms':>9} {'onnxc GB/s':>11} {'of triad':>9} {'ORT GB/s':>9} "
              f"{'ORT/onnxc':>10} {'onnxc CPU ms':>13} {'ORT CPU ms':>11} {'onnxc cpu GB/s':>15} {'ORT/onnxc CPU':>14}")
        for m in (int(r) for r in args.rows.split(",")):
            ours, ours_cpu = time_onnxc(args.onnxc, path, m, args.threads, args.runs)
            theirs, theirs_cpu = time_ort(path, m, args.k, args.threads, args.runs)
            g_ours, g_theirs = nbytes / ours / 1e6, nbytes / theirs / 1e6
            print(f"{m:>5} {ours:>9.3f} {theirs:>9.3f} {g_ours:>11.1f} {g_ours / bw:>8.0%} {g_theirs:>9.1f} "
                  f"{theirs / ours:>9.2f}x {ours_cpu:>13.1f} {theirs_cpu:>11.1f} {nbytes / ours_cpu / 1e6:>15.1f} "
                  f"{theirs_cpu / ours_cpu:>13.2f}x")
            sys.stdout.flush()
        if args.no_per_product:
            return
        # Per product: the int4 chain's time / layers beside one float32 MatMul of the same shape.
        fpath = os.path.join(tmp, "f32.onnx")
        onnx.save(float_model(args.k), fpath)
        print(f"per product (ms): {'M':>5} {'onnxc int4':>11} {'onnxc f32':>10} {'ORT int4':>9} {'ORT f32':>8}")
        for m in (int(r) for r in args.rows.split(",")):
            q_ours = time_onnxc(args.onnxc, path, m, args.threads, args.runs)[0] / args.layers
            q_theirs = time_ort(path, m, args.k, args.threads, args.runs)[0] / args.layers
            f_ours = time_onnxc(args.onnxc, fpath, m, args.threads, args.runs)[0]
            f_theirs = time_ort(fpath, m, args.k, args.threads, args.runs)[0]
            print(f"{'':18}{m:>5} {q_ours:>11.3f} {f_ours:>10.3f} {q_theirs:>9.3f} {f_theirs:>8.3f}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
