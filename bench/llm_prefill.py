"""Prefill of the language-model benchmark's decoder (bench/llm_export.py), onnxc beside ONNX Runtime
in CPU time per run: one prompt of --prompt tokens, no past, alternating engine by engine for
--rounds rounds, medians. CPU time is the figure to compare on a shared machine (other processes
stretch wall time 2-3x at a load of 15 on 2 cores, and lower CPU time far less).

    llm_prefill.py DIR --lib build/llm/lib/x/libx.so [--lib ...] [--onnxc build/tools/onnxc]
                   [--rounds 3] [--runs 8] [--threads 1] [--prompt 128] [--no-ort]

DIR holds fp32/model.onnx (llm_export.py); each --lib is a compiled library of it (`onnxc compile`).
ONNX Runtime runs the same fp32/model.onnx with intra_op_num_threads = --threads, spinning off, its
CPU time per run taken from this process (time.process_time). onnxc's is the `cpu` line of
`onnxc bench --threads N`. Needs this repository's peers Python (onnxruntime, numpy).

The weights of a library are read through its file's pages in the page cache, and where those pages
lie has moved a library's CPU time by up to ~5% against a byte-identical copy of it (2026-11-26,
load 13-17): compare two libraries through two copies each (cp the folder) before believing a
difference of that size.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np


def ort_session(path, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def ort_feeds(session, prompt):
    ids = np.random.default_rng(0).integers(3, 1000, (1, prompt)).astype(np.int64)
    feeds = {"input_ids": ids, "attention_mask": np.ones((1, prompt), np.int64),
             "position_ids": np.arange(prompt, dtype=np.int64)[None]}
    for i in session.get_inputs():
        if i.name.startswith("past_key_values"):
            feeds[i.name] = np.zeros([1, i.shape[1], 0, i.shape[3]], np.float32)
    return feeds


def ort_cpu_ms(session, feeds, runs):
    session.run(None, feeds)
    cpu = []
    for _ in range(runs):
        c0 = time.process_time()
        session.run(None, feeds)
        cpu.append(1000 * (time.process_time() - c0))
    return statistics.median(cpu)


def onnxc_cpu_ms(onnxc, lib, threads, prompt, runs):
    dims = f"batch=1,seq={prompt},past=0,total={prompt}"
    out = subprocess.run([onnxc, "bench", lib, "--dims", dims, "--threads", str(threads), "-n", str(runs), "-w", "2"],
                         check=True, capture_output=True, text=True).stdout
    m = re.search(r"^cpu\s+([0-9.]+) ms of CPU time per run", out, re.M)
    if not m:
        sys.exit(f"llm_prefill.py: no cpu line in onnxc bench's output for {lib}:\n{out}")
    return float(m.group(1))


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--lib", action="append", default=[], help="a compiled library of DIR/fp32/model.onnx (repeatable)")
    ap.add_argument("--onnxc", default="build/tools/onnxc")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--no-ort", action="store_true")
    o = ap.parse_args()
    if not o.lib:
        sys.exit("llm_prefill.py: give at least one --lib")
    rows = {lib: [] for lib in o.lib}
    session = None if o.no_ort else ort_session(os.path.join(o.dir, "fp32", "model.onnx"), o.threads)
    feeds = None if session is None else ort_feeds(session, o.prompt)
    if session is not None:
        rows["ONNX Runtime"] = []
    for r in range(o.rounds):
        for lib in o.lib:
            rows[lib].append(onnxc_cpu_ms(o.onnxc, lib, o.threads, o.prompt, o.runs))
            print(f"round {r + 1}: {lib} {rows[lib][-1]:.1f} ms (load {load()})", file=sys.stderr)
        if session is not None:
            rows["ONNX Runtime"].append(ort_cpu_ms(session, feeds, o.runs))
            print(f"round {r + 1}: ONNX Runtime {rows['ONNX Runtime'][-1]:.1f} ms (load {load()})", file=sys.stderr)
    ort_ms = statistics.median(rows["ONNX Runtime"]) if session is not None else None
    print(f"prefill of {o.prompt} tokens, {o.threads} thread(s), CPU ms per run, medians of {o.rounds} rounds")
    for name, v in rows.items():
        ratio = f"  {statistics.median(v) / ort_ms:.2f}x ONNX Runtime" if ort_ms and name != "ONNX Runtime" else ""
        print(f"{name:60s} {statistics.median(v):8.1f}  ({', '.join(f'{x:.1f}' for x in v)}){ratio}")


if __name__ == "__main__":
    main()
