#!/usr/bin/python3
"""Generate the `--quantize dynamic-int8` test model and its float32 reference data.

    /usr/bin/python3 tests/models/quant/gen_quant.py [--out tests/models/quant]

matmul_bias_relu/: y = Relu(x · W + b) with x [m, 70] (run-time m), W [70, 45]: K not a multiple of
4, N not a multiple of the int8 kernel's 32-column panel. Three data sets (m = 1, 13, 40); the last
has a row holding NaN (its output row must be NaN), an all-zero row and a constant row. The
reference is numpy in float64 rounded to float32: the test checks int8 results against float math.
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    d = os.path.join(ap.parse_args().out, "matmul_bias_relu")
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(0)
    k, n = 70, 45
    w = rng.standard_normal((k, n)).astype(np.float32)
    b = rng.standard_normal((n,)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["t"]), helper.make_node("Add", ["t", "b"], ["u"]),
         helper.make_node("Relu", ["u"], ["y"])],
        "matmul_bias_relu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["m", k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m", n])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, m in enumerate([1, 13, 40]):
        x = rng.standard_normal((m, k)).astype(np.float32)
        if m == 40:
            x[5, 3] = np.nan
            x[7, :] = 0
            x[8, :] = -1.5
        y = np.maximum(x.astype(np.float64) @ w + b, 0).astype(np.float32)
        y[np.isnan(x).any(axis=1)] = np.nan
        sd = os.path.join(d, f"test_data_set_{i}")
        os.makedirs(sd, exist_ok=True)
        with open(os.path.join(sd, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, "x").SerializeToString())
        with open(os.path.join(sd, "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(y, "y").SerializeToString())


if __name__ == "__main__":
    main()
