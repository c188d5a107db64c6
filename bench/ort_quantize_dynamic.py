#!/usr/bin/env python3
"""Writes the int8 peer of a float32 model for ONNX Runtime: each MatMul/Gemm whose weight is a
constant float32 matrix (both sides >= 16, as onnxc's --quantize dynamic-int8 picks them) becomes
ONNX Runtime's dynamic quantization form, the one its quantize_dynamic() tool writes and its
graph optimizer fuses into one int8 kernel (MatMulIntegerToFloat):

    DynamicQuantizeLinear(A) -> (A_q uint8, a_scale, a_zero)       per tensor, at run time
    MatMulInteger(A_q, W_q int8 [K, N], a_zero, 0 per column) -> int32
    Cast(float) * (a_scale * w_scale[N])  [+ bias]

W is quantized per column (symmetric, 127 levels) exactly as onnxc quantizes it; the activation is
quantized per tensor, as ONNX Runtime does (onnxc: per row). Usage:
    ort_quantize_dynamic.py MODEL.onnx OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MIN_DIM = 16


def quantize_columns(w):
    amax = np.abs(w).max(axis=0)
    scale = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    return q, scale


def main(src, dst):
    model = onnx.load(src)
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    outputs = {o.name for o in g.output}
    new_nodes, new_inits, count = [], [], 0
    for node in g.node:
        w_name = node.input[1] if len(node.input) > 1 else ""
        w = inits.get(w_name)
        gemm = node.op_type == "Gemm"
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        ok = (node.op_type in ("MatMul", "Gemm") and node.domain in ("", "ai.onnx") and w is not None
              and w.data_type == TensorProto.FLOAT and len(w.dims) == 2 and node.output[0] not in outputs)
        if ok and gemm:
            ok = attrs.get("transA", 0) == 0 and attrs.get("alpha", 1.0) == 1.0 and attrs.get("beta", 1.0) == 1.0
        if ok:
            wv = numpy_helper.to_array(w).astype(np.float32)
            if gemm and attrs.get("transB", 0):
                wv = wv.T
            ok = min(wv.shape) >= MIN_DIM and np.isfinite(wv).all()
        if not ok:
            new_nodes.append(node)
            continue
        count += 1
        p = f"{node.output[0]}/ortq"
        q, scale = quantize_columns(wv)
        new_inits += [numpy_helper.from_array(q, p + "/w"), numpy_helper.from_array(scale, p + "/w_scale"),
                      numpy_helper.from_array(np.zeros(q.shape[1], np.int8), p + "/w_zero")]
        new_nodes += [
            helper.make_node("DynamicQuantizeLinear", [node.input[0]], [p + "/a", p + "/a_scale", p + "/a_zero"]),
            helper.make_node("MatMulInteger", [p + "/a", p + "/w", p + "/a_zero", p + "/w_zero"], [p + "/acc"]),
            helper.make_node("Cast", [p + "/acc"], [p + "/accf"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [p + "/a_scale", p + "/w_scale"], [p + "/scale"]),
        ]
        bias = node.input[2] if gemm and len(node.input) > 2 and node.input[2] else None
        new_nodes.append(helper.make_node("Mul", [p + "/accf", p + "/scale"], [p + "/y" if bias else node.output[0]]))
        if bias:
            new_nodes.append(helper.make_node("Add", [p + "/y", bias], [node.output[0]]))
    del g.node[:]
    g.node.extend(new_nodes)
    g.initializer.extend(new_inits)
    used = {i for n in g.node for i in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    onnx.save(model, dst)
    print(f"{dst}: {count} products in ONNX Runtime's dynamic int8 form")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
