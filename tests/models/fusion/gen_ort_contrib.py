#!/usr/bin/env python3
"""Writes the fusion test models in ONNX Runtime's com.microsoft encoder ops (tests/models/fusion/ortc_*),
which onnxc expands (passes/expand_contrib_encoder.cpp) and fuses. Needs onnxruntime and onnx (ORT's
transformer optimizer also needs sympy); checked with onnxruntime 1.31.1:

    python tests/models/fusion/gen_ort_contrib.py

Two kinds:
- `ortc_opt_<model>`: ORT's transformer optimizer (onnxruntime.transformers.optimizer, opt_level 0)
  run on a committed torch export of this folder: Attention (packed QKV weights, a 1-D mask_index of
  lengths), SkipLayerNormalization, BiasGelu, FastGelu. The reference is the export's own data sets
  (the framework's outputs), copied.
- `ortc_<op>_<form>`: one contrib node per model with random inputs and weights (fixed seed), every
  mask form and option the expansion handles; the reference is ONNX Runtime's CPU kernel.
Counts for manifest.txt are printed; they are written there by hand.
"""

import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
MS = h.make_opsetid("com.microsoft", 1)
OPTIMIZED = {"bert_op17": "bert", "gpt2_op13": "gpt2", "distilbert_op17": "bert", "bart_op14": "bart"}
B, S, P, HID, HEADS = 2, 5, 3, 16, 4


def write_tensor(path, arr, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.ascontiguousarray(arr), name).SerializeToString())


def optimized(name, model_type):
    from onnxruntime.transformers import optimizer
    src = os.path.join(HERE, name)
    m = optimizer.optimize_model(os.path.join(src, "model.onnx"), model_type=model_type, num_heads=4,
                                 hidden_size=32, opt_level=0)
    out = os.path.join(HERE, f"ortc_opt_{name}")
    os.makedirs(out, exist_ok=True)
    m.save_model_to_file(os.path.join(out, "model.onnx"))
    for d in sorted(os.listdir(src)):
        if d.startswith("test_data_set_"):
            shutil.rmtree(os.path.join(out, d), ignore_errors=True)
            shutil.copytree(os.path.join(src, d), os.path.join(out, d))
    ops = sorted(n.op_type for n in m.model.graph.node if n.domain == "com.microsoft")
    print(f"wrote ortc_opt_{name}: {', '.join(f'{o} {ops.count(o)}' for o in sorted(set(ops)))}")


def single(name, node, inputs, outputs, feeds_sets, inits=()):
    """One contrib node; ONNX Runtime's outputs on each feed set are the reference."""
    g = h.make_graph([node], name, [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                     [h.make_tensor_value_info(n, T.FLOAT, None) for n in outputs],
                     [numpy_helper.from_array(a, n) for n, a in inits])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), MS])
    m.ir_version = 8
    out = os.path.join(HERE, name)
    os.makedirs(out, exist_ok=True)
    onnx.save(m, os.path.join(out, "model.onnx"))
    sess = ort.InferenceSession(os.path.join(out, "model.onnx"), providers=["CPUExecutionProvider"])
    for k, feeds in enumerate(feeds_sets):
        res = sess.run(None, feeds)
        assert all(np.isfinite(r).all() for r in res), name
        d = os.path.join(out, f"test_data_set_{k}")
        os.makedirs(d, exist_ok=True)
        for i, (n, _, _) in enumerate(inputs):
            write_tensor(os.path.join(d, f"input_{i}.pb"), feeds[n], n)
        for j, (n, r) in enumerate(zip(outputs, res)):
            write_tensor(os.path.join(d, f"output_{j}.pb"), r, n)
    print(f"wrote {name}")


def main():
    rng = np.random.default_rng(21)

    def randn(*shape, scale=1.0):
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    def lengths_mask(b, t, lengths):
        m = np.zeros((b, t), np.int32)
        for i, n in enumerate(lengths):
            m[i, :n] = 1
        return m

    for name, mt in OPTIMIZED.items():
        optimized(name, mt)

    w, bias = randn(HID, 3 * HID, scale=0.3), randn(3 * HID, scale=0.1)
    x_in = ("x", T.FLOAT, ["batch", "seq", HID])
    # Attention: a 2-D raw mask, causal (unidirectional) on a past cache, present out.
    single("ortc_attention_past_causal",
           h.make_node("Attention", ["x", "w", "b", "mask", "past"], ["y", "present"], domain="com.microsoft",
                       num_heads=HEADS, unidirectional=1),
           [x_in, ("mask", T.INT32, ["batch", "total"]), ("past", T.FLOAT, [2, "batch", HEADS, "past", HID // HEADS])],
           ["y", "present"],
           [{"x": randn(B, S, HID), "mask": lengths_mask(B, P + S, [P + S, P + S - 2]),
             "past": randn(2, B, HEADS, P, HID // HEADS)},
            {"x": randn(1, 2, HID), "mask": lengths_mask(1, 1 + 2, [3]), "past": randn(2, 1, HEADS, 1, HID // HEADS)}],
           inits=[("w", w), ("b", bias)])
    # Attention: a 3-D mask [batch, seq, total], a scale and mask_filter_value given.
    m3 = (rng.random((B, S, S)) > 0.3).astype(np.int32)
    m3[..., 0] = 1
    single("ortc_attention_mask3d",
           h.make_node("Attention", ["x", "w", "b", "mask"], ["y"], domain="com.microsoft", num_heads=HEADS,
                       scale=0.3, mask_filter_value=-1e4),
           [x_in, ("mask", T.INT32, ["batch", "seq", "seq"])], ["y"],
           [{"x": randn(B, S, HID), "mask": m3}], inits=[("w", w), ("b", bias)])
    # Attention: mask_index of ends and starts [2·batch] (right and left padding), q/k/v sizes given.
    w2 = randn(HID, 2 * HID + 8, scale=0.3)
    single("ortc_attention_end_start",
           h.make_node("Attention", ["x", "w", "b", "mask"], ["y"], domain="com.microsoft", num_heads=HEADS,
                       qkv_hidden_sizes=[HID, HID, 8]),
           [("x", T.FLOAT, [B, "seq", HID]), ("mask", T.INT32, [2 * B])], ["y"],  # 2·batch: a static batch
           [{"x": randn(B, S, HID), "mask": np.array([S, S - 1, 0, 2], np.int32)}],
           inits=[("w", w2), ("b", randn(2 * HID + 8, scale=0.1))])
    # MultiHeadAttention: separate q/k/v with a packed bias, a key padding mask, past key/value.
    dh = HID // HEADS
    single("ortc_mha_past_mask",
           h.make_node("MultiHeadAttention", ["q", "k", "v", "bias", "mask", "", "past_k", "past_v"],
                       ["y", "present_k", "present_v"], domain="com.microsoft", num_heads=HEADS),
           [("q", T.FLOAT, ["batch", "seq", HID]), ("k", T.FLOAT, ["batch", "seq", HID]),
            ("v", T.FLOAT, ["batch", "seq", HID]), ("mask", T.INT32, ["batch", "total"]),
            ("past_k", T.FLOAT, ["batch", HEADS, "past", dh]), ("past_v", T.FLOAT, ["batch", HEADS, "past", dh])],
           ["y", "present_k", "present_v"],
           [{"q": randn(B, S, HID), "k": randn(B, S, HID), "v": randn(B, S, HID),
             "mask": lengths_mask(B, P + S, [P + S, P + S - 3]), "past_k": randn(B, HEADS, P, dh),
             "past_v": randn(B, HEADS, P, dh)}], inits=[("bias", randn(3 * HID, scale=0.1))])
    # MultiHeadAttention: cross-attention (kv length != q length), causal off, 1-D lengths mask.
    single("ortc_mha_cross",
           h.make_node("MultiHeadAttention", ["q", "k", "v", "", "mask"], ["y"], domain="com.microsoft",
                       num_heads=HEADS),
           [("q", T.FLOAT, ["batch", "seq", HID]), ("k", T.FLOAT, ["batch", "kv", HID]),
            ("v", T.FLOAT, ["batch", "kv", HID]), ("mask", T.INT32, ["batch"])], ["y"],
           [{"q": randn(B, S, HID), "k": randn(B, 7, HID), "v": randn(B, 7, HID),
             "mask": np.array([7, 4], np.int32)}])
    # attention_bias (relative positions, ALiBi) added after the mask, on both ops.
    single("ortc_mha_attention_bias",
           h.make_node("MultiHeadAttention", ["q", "k", "v", "", "mask", "attn_bias"], ["y"], domain="com.microsoft",
                       num_heads=HEADS),
           [("q", T.FLOAT, ["batch", "seq", HID]), ("k", T.FLOAT, ["batch", "seq", HID]),
            ("v", T.FLOAT, ["batch", "seq", HID]), ("mask", T.INT32, ["batch", "seq"]),
            ("attn_bias", T.FLOAT, [1, HEADS, "seq", "seq"])], ["y"],
           [{"q": randn(B, S, HID), "k": randn(B, S, HID), "v": randn(B, S, HID),
             "mask": lengths_mask(B, S, [S, S - 2]), "attn_bias": randn(1, HEADS, S, S)}])
    single("ortc_attention_bias_causal",
           h.make_node("Attention", ["x", "w", "b", "", "", "attn_bias"], ["y"], domain="com.microsoft",
                       num_heads=HEADS, unidirectional=1),
           [x_in, ("attn_bias", T.FLOAT, ["batch", HEADS, "seq", "seq"])], ["y"],
           [{"x": randn(B, S, HID), "attn_bias": randn(B, HEADS, S, S)}], inits=[("w", w), ("b", bias)])
    x = ("x", T.FLOAT, ["batch", "seq", HID])
    single("ortc_gelus",
           h.make_node("FastGelu", ["x"], ["y"], domain="com.microsoft"), [x], ["y"],
           [{"x": randn(B, S, HID, scale=3.0)}])
    single("ortc_quick_gelu",
           h.make_node("QuickGelu", ["x"], ["y"], domain="com.microsoft", alpha=1.5), [x], ["y"],
           [{"x": randn(B, S, HID, scale=3.0)}])
    single("ortc_skip_layer_norm",
           h.make_node("SkipLayerNormalization", ["x", "skip", "g", "beta", "bias"], ["y", "", "", "sum"],
                       domain="com.microsoft", epsilon=1e-5),
           [x, ("skip", T.FLOAT, ["batch", "seq", HID])], ["y", "sum"],
           [{"x": randn(B, S, HID), "skip": randn(B, S, HID)}],
           inits=[("g", randn(HID, scale=0.1) + 1), ("beta", randn(HID, scale=0.1)), ("bias", randn(HID, scale=0.1))])


if __name__ == "__main__":
    sys.exit(main())
