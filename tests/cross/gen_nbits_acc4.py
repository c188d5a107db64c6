"""Writes tests/cross/nbits_acc4: two chained com.microsoft.MatMulNBits with accuracy_level 4 on one
row (a decode step), K = 300 (a partial last block) with zero points at block 32, then K = 80 without
at block 16, and reference outputs computed here with the int8-activation semantics exactly: per k
block of the row s_a = max|a| / 127, q = round_half_even(a · 127 / max|a|), Y = Σ_b scale · s_a ·
Σ_k q · (code - zero) with the inner sums in integers. The ARM dotprod library (sdot) must give
these to float32 rounding (cross.arm64_dotprod_nbits_int8). Run with the ONNX Runtime peer's Python
(numpy, onnx); ONNX Runtime's own MatMulNBits agrees within ~3e-7 of the output's magnitude.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nbits_acc4")
rng = np.random.default_rng(23)


def layer(name, k, n, block, zp):
    kb = (k + block - 1) // block
    b = rng.integers(0, 256, size=(n, kb, block // 2), dtype=np.uint8)
    scales = (rng.random(n * kb, dtype=np.float32) * 0.05 + 0.01).astype(np.float32)
    inits = [numpy_helper.from_array(b, f"{name}_B"), numpy_helper.from_array(scales, f"{name}_scales")]
    zrow = (kb * 4 + 7) // 8
    if zp:
        z = rng.integers(0, 256, size=n * zrow, dtype=np.uint8)
        inits.append(numpy_helper.from_array(z, f"{name}_zp"))
        zeros = np.stack([z.reshape(n, zrow) & 15, z.reshape(n, zrow) >> 4], -1).reshape(n, -1)[:, :kb]
    else:
        zeros = np.full((n, kb), 8)
    codes = np.stack([b & 15, b >> 4], -1).reshape(n, kb * block)[:, :k].astype(np.int64)
    return inits, (codes, scales.reshape(n, kb), zeros.astype(np.int64), block)


def reference(a, codes, scales, zeros, block):
    n, k = codes.shape
    y = np.zeros(n)
    for b in range(scales.shape[1]):
        seg = a[b * block:min(k, (b + 1) * block)]
        amax = np.float32(np.max(np.abs(seg)))
        inv = np.float32(127) / amax if amax != 0 else np.float32(0)
        q = np.clip(np.rint(seg * inv), -127, 127).astype(np.int64)
        centred = codes[:, b * block:b * block + len(seg)] - zeros[:, b:b + 1]
        y += scales[:, b].astype(np.float64) * np.float64(amax / np.float32(127)) * (centred @ q)
    return y.astype(np.float32)


inits1, w1 = layer("l1", 300, 80, 32, True)
inits2, w2 = layer("l2", 80, 40, 16, False)
nodes = [helper.make_node("MatMulNBits", ["A", "l1_B", "l1_scales", "l1_zp"], ["H"], domain="com.microsoft",
                          K=300, N=80, bits=4, block_size=32, accuracy_level=4),
         helper.make_node("MatMulNBits", ["H", "l2_B", "l2_scales"], ["Y"], domain="com.microsoft",
                          K=80, N=40, bits=4, block_size=16, accuracy_level=4)]
graph = helper.make_graph(nodes, "nbits_acc4", [helper.make_tensor_value_info("A", TensorProto.FLOAT, [1, 300])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 40])], inits1 + inits2)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
model.ir_version = 10
os.makedirs(HERE, exist_ok=True)
onnx.save(model, os.path.join(HERE, "model.onnx"))
for s in range(2):
    a = rng.standard_normal(300).astype(np.float32)
    h = reference(a, *w1)
    y = reference(h, *w2)  # the second layer quantizes the first's float32 output
    d = os.path.join(HERE, f"test_data_set_{s}")
    os.makedirs(d, exist_ok=True)
    onnx.save_tensor(numpy_helper.from_array(a.reshape(1, 300), "A"), os.path.join(d, "input_0.pb"))
    onnx.save_tensor(numpy_helper.from_array(y.reshape(1, 40), "Y"), os.path.join(d, "output_0.pb"))
