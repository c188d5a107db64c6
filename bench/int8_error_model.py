#!/usr/bin/env python3
"""Prices an int8 scheme's error before it is built: onnxc's dynamic quantization (weights per
output column, symmetric; rows of A per row, asymmetric, over their own range) done in float32
inside the model itself (fake quantization), run by ONNX Runtime, against the float32 model's
output (norm-relative error of the first output, as `onnxc compare` reports it).

  int8_error_model.py MODEL.onnx DATA_DIR CONFIG...

Each constant-weight MatMul/Gemm (both sides >= 16, as `--quantize dynamic-int8` picks them) is
classed by its weight's shape (K x N): qkv (d x 3d), ffn1 (d x 4d), ffn2 (4d x d), out (d x d),
where d is the smallest K seen; CONFIG says per class WEIGHT_LEVELS/ROW_LEVELS, or `wide` (the
int16-pair form: weights in +-floor(sqrt(2^31/K)), rows in floor((2^31-1)/(K*that)) levels), or
`float`. Classes a CONFIG leaves out are wide. Examples: `all=127/255` (u8 x s8, VNNI without
the wide budget), `all=wide` (AVX2 today), `ffn1=127/127` (u7 rows x s8 weights on the first FFN
product: what vpmaddubsw sums exactly). Runs DATA_DIR's inputs (input_*.pb) and two random ones with the
leading dims set to batch 1, sequence 128 (standard normal floats; integer inputs, such as a
padding mask, 1 with the last 16 positions 0).
Session 16 checked it against onnxc: `all=wide` 0.46% (onnxc 0.454%), `all=127/255,out=wide`
2.94% (onnxc 3.03%).
"""
import glob
import math
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

MIN_DIM = 16
CLASSES = ("qkv", "ffn1", "ffn2", "out")


def wide_levels(k):
    w = int(math.floor(math.sqrt(2147483647.0 / k)))
    return w, min(32767, max(255, math.floor(2147483647.0 / (w * k))))


def products(model):
    inits = {t.name: t for t in model.graph.initializer}
    for node in model.graph.node:
        name = node.input[1] if len(node.input) > 1 else ""
        t = inits.get(name)
        if node.op_type not in ("MatMul", "Gemm") or t is None or len(t.dims) != 2 or min(t.dims) < MIN_DIM:
            continue
        trans = node.op_type == "Gemm" and any(a.name == "transB" and a.i for a in node.attribute)
        yield node, t, trans


def classify(k, n, d):
    return {(d, 3 * d): "qkv", (d, 4 * d): "ffn1", (4 * d, d): "ffn2", (d, d): "out"}.get((k, n), "other")


def fake_quantized(base, config):
    m = onnx.ModelProto()
    m.CopyFrom(base)
    found = list(products(m))
    d = min((t.dims[1] if tr else t.dims[0]) for _, t, tr in found)
    g, added = m.graph, []
    for i, (node, t, trans) in enumerate(found):
        w = numpy_helper.to_array(t).astype(np.float32)
        wk = w.T if trans else w
        k, n = wk.shape
        spec = config.get(classify(k, n, d), config.get("all", "wide"))
        if spec == "float":
            continue
        wq, levels = wide_levels(k) if spec == "wide" else map(int, spec.split("/"))
        amax = np.abs(wk).max(axis=0)
        s = np.where(amax > 0, amax / wq, 1.0).astype(np.float32)
        deq = (np.clip(np.rint(wk / s), -wq, wq) * s).astype(np.float32)
        t.CopyFrom(numpy_helper.from_array(deq.T if trans else deq, t.name))
        p = f"int8_error_model/{i}/"
        g.initializer.extend(numpy_helper.from_array(np.float32(v), p + name)
                             for name, v in (("levels", levels), ("zero", 0.0), ("tiny", 1e-30)))
        a = node.input[0]
        added += [
            helper.make_node("ReduceMin", [a], [p + "lo"], keepdims=1, axes=[-1]),
            helper.make_node("ReduceMax", [a], [p + "hi"], keepdims=1, axes=[-1]),
            helper.make_node("Sub", [p + "hi", p + "lo"], [p + "range"]),
            helper.make_node("Div", [p + "range", p + "levels"], [p + "step0"]),
            helper.make_node("Max", [p + "step0", p + "tiny"], [p + "step"]),
            helper.make_node("Sub", [a, p + "lo"], [p + "off"]),
            helper.make_node("Div", [p + "off", p + "step"], [p + "x"]),
            helper.make_node("Round", [p + "x"], [p + "xr"]),
            helper.make_node("Clip", [p + "xr", p + "zero", p + "levels"], [p + "q"]),
            helper.make_node("Mul", [p + "q", p + "step"], [p + "qs"]),
            helper.make_node("Add", [p + "qs", p + "lo"], [p + "a"]),
        ]
        node.input[0] = p + "a"
    nodes = added + list(g.node)  # each added chain reads a product's input: reorder so it runs after its producer
    del g.node[:]
    g.node.extend(topological(nodes, {i.name for i in g.input} | {t.name for t in g.initializer}))
    return m


def topological(nodes, ready):
    out, pending = [], list(nodes)
    while pending:
        rest = []
        for n in pending:
            if all(not x or x in ready for x in n.input):
                out.append(n)
                ready.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            raise SystemExit("int8_error_model: the graph has inputs it cannot order (subgraphs are not handled)")
        pending = rest
    return out


def run(model, feeds):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # no fusion may skip a fake quantization
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def inputs(model, data_dir):
    feeds = {}
    for i, path in enumerate(sorted(glob.glob(os.path.join(data_dir, "input_*.pb")))):
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        feeds[t.name or model.graph.input[i].name] = numpy_helper.to_array(t)
    rng, out = np.random.default_rng(1), [feeds]
    for _ in range(2):
        r = {}
        for name, v in feeds.items():
            shape = (1, 128) + v.shape[2:]  # batch 1, sequence 128
            if v.dtype == np.float32:
                r[name] = rng.standard_normal(shape).astype(np.float32)
            else:
                r[name] = np.ones(shape, v.dtype)
                r[name][..., -16:] = 0
        out.append(r)
    return out


def main(argv):
    if len(argv) < 4:
        raise SystemExit(__doc__)
    base = onnx.load(argv[1])
    feeds = inputs(base, argv[2])
    refs = [run(base, f) for f in feeds]
    for spec in argv[3:]:
        config = dict(part.split("=") for part in spec.split(","))
        unknown = set(config) - set(CLASSES) - {"all"}
        if unknown:
            raise SystemExit(f"int8_error_model: unknown class {sorted(unknown)} (classes: all, {', '.join(CLASSES)})")
        m = fake_quantized(base, config)
        errs = [float(np.linalg.norm(run(m, f) - r) / np.linalg.norm(r)) for f, r in zip(feeds, refs)]
        print(f"{spec:48s} data set {100 * errs[0]:.2f}%   random " + " / ".join(f"{100 * e:.2f}%" for e in errs[1:]),
              flush=True)


if __name__ == "__main__":
    main(sys.argv)
