#!/usr/bin/python3
"""Time and peak memory of softmax(Q·Kᵀ/8)·V written in plain ONNX ops (Transpose, MatMul, Div,
Softmax, MatMul) at several sequence lengths, 12 heads of 64, batch 1: onnxc with fusion on (one
streaming Attention kernel), onnxc with --no-fuse=attention (the plain graph compiled as written),
and ONNX Runtime on the same model in the same run.

  /usr/bin/python3 bench/attention_bench.py [--seqs 512,1024,...] [--threads N] [--runs N]
      [--onnxc build/tools/onnxc] [--no-ort] [--direct]

--direct benches a model holding one opset-23 Attention node instead (no fusion pass needed).
The ONNX Runtime column runs bench/peers/bench_peer.py under the interpreter bench/peers/python.sh
finds (bench/peers/install.sh makes it, from PyPI); without one the column is left out, saying so.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# Written with explicit IR versions: a newer onnx package stamps its own (IR 14 in onnx 1.23), which
# ONNX Runtime 1.31 refuses to read.
def plain_model(seq, heads, dim):
    shape = [1, heads, seq, dim]
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in ("q", "k", "v")]
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["qk"]),
        helper.make_node("Div", ["qk", "eight"], ["scores"]),
        helper.make_node("Softmax", ["scores"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["y"]),
    ]
    init = [helper.make_tensor("eight", TensorProto.FLOAT, [], [8.0])]
    g = helper.make_graph(nodes, "sdpa", ins, [out], init)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def direct_model(seq, heads, dim):
    shape = [1, heads, seq, dim]
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in ("q", "k", "v")]
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"], scale=0.125)
    g = helper.make_graph([node], "sdpa_op", ins, [out])
    # IR 10 is the oldest that allows opset 23 and the newest ONNX Runtime 1.31 reads.
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)], ir_version=10)


def run_tsv(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["failed"])[-1]
    f = r.stdout.split()
    return (float(f[0]), float(f[3]) / 2**20), None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seqs", default="512,1024,2048,4096,8192")
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--onnxc", default=os.path.join(ROOT, "build", "tools", "onnxc"))
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--no-unfused", action="store_true", help="skip the unfused column (slow at 8192)")
    ap.add_argument("--direct", action="store_true")
    a = ap.parse_args()
    peer = os.path.join(HERE, "peers", "bench_peer.py")
    peer_python = None
    if not a.no_ort:
        r = subprocess.run(["bash", os.path.join(HERE, "peers", "python.sh")], capture_output=True, text=True)
        if r.returncode == 0:
            peer_python = r.stdout.strip()
        else:
            print(f"ONNX Runtime column SKIPPED: {r.stderr.strip()}")
    have_ort = peer_python is not None
    common = ["--threads", str(a.threads), "--runs", str(a.runs), "--warmup", "1", "--tsv"]
    print(f"softmax(Q·Kᵀ/8)·V, batch 1, {a.heads} heads of {a.dim}, {a.threads} thread(s), "
          f"median of {a.runs} runs; peak RSS of the timed runs")
    cols = ["fused"] + ([] if a.no_unfused or a.direct else ["unfused"]) + (["onnxruntime"] if have_ort else [])
    print(f"{'seq':>6} " + " ".join(f"{c + ' ms':>16} {c + ' MiB':>16}" for c in cols))
    with tempfile.TemporaryDirectory() as tmp:
        for seq in [int(s) for s in a.seqs.split(",")]:
            path = os.path.join(tmp, f"sdpa_{seq}.onnx")
            m = direct_model(seq, a.heads, a.dim) if a.direct else plain_model(seq, a.heads, a.dim)
            onnx.save(m, path)
            cells = []
            for c in cols:
                if c in ("fused", "unfused"):
                    out = os.path.join(tmp, f"{c}_{seq}")
                    flags = ["--no-fuse", "attention"] if c == "unfused" else []
                    r = subprocess.run([a.onnxc, "compile", path, "-o", out, "-n", "sdpa", "-q"] + flags,
                                       capture_output=True, text=True)
                    if r.returncode != 0:
                        res, err = None, (r.stderr.strip().splitlines() or ["compile failed"])[-1]
                    else:
                        res, err = run_tsv([a.onnxc, "bench", os.path.join(out, "libsdpa.so")] + common)
                else:
                    res, err = run_tsv([peer_python, peer, path, "--engine", "ort"] + common)
                cells.append(f"{res[0]:>16.1f} {res[1]:>16.1f}" if res else f"{'error: ' + err[:25]:>33}")
            print(f"{seq:>6} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    sys.exit(main())
