#!/usr/bin/python3
"""Writes the CLI tests' fixtures (run with Debian's /usr/bin/python3: python3-onnx, python3-numpy).

add_bcast/          sum = x[n,3] + y[3]: a model every codegen state can compile, with two data sets
add_bcast_x0.npy    test_data_set_0's x as .npy (v1 header): `onnxc run --input x=...npy`
unsupported_op.onnx one node of a custom domain (com.example.Frobnicate): codegen must reject it
endless.onnx        add_bcast's interface, plus a ReduceSum over 2^50 ones that never ends in practice
                    (no memory: the ones are fused into the reduction): test-suite --timeout's subject
concat_inputs/      present = Concat(past[p,3], new[n,3]) of two graph inputs into a graph output: the CPU
                    runs it in place (onnxc.CacheAppend, a host step), a CUDA library as a Concat
Deterministic: rerunning gives the same bytes.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

os.chdir(os.path.dirname(os.path.abspath(__file__)))


def model(nodes, name, inputs, outputs, opsets):
    m = helper.make_model(helper.make_graph(nodes, name, inputs, outputs),
                          opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                          producer_name="onnxc tests/tools")
    m.ir_version = 8
    return m


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
s = helper.make_tensor_value_info("sum", TensorProto.FLOAT, ["n", 3])
m = model([helper.make_node("Add", ["x", "y"], ["sum"], name="add")], "add_bcast", [x, y], [s], [("", 17)])
onnx.checker.check_model(m)
os.makedirs("add_bcast", exist_ok=True)
onnx.save(m, "add_bcast/model.onnx")
rng = np.random.default_rng(7)
for k, n in enumerate([2, 5]):
    d = f"add_bcast/test_data_set_{k}"
    os.makedirs(d, exist_ok=True)
    xv = rng.standard_normal((n, 3)).astype(np.float32)
    yv = rng.standard_normal(3).astype(np.float32)
    for name, arr, f in [("x", xv, "input_0.pb"), ("y", yv, "input_1.pb"), ("sum", xv + yv, "output_0.pb")]:
        with open(os.path.join(d, f), "wb") as fh:
            fh.write(numpy_helper.from_array(arr, name).SerializeToString())
    if k == 0:
        np.save("add_bcast_x0.npy", xv)

xu = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])
yu = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])
m = model([helper.make_node("Frobnicate", ["x"], ["y"], domain="com.example", name="frob")], "unsupported_op",
          [xu], [yu], [("", 17), ("com.example", 1)])
onnx.save(m, "unsupported_op.onnx")

# sum = x + y + 0 * ReduceSum(ConstantOfShape([2^20, 2^20, 2^10])): hours of adds, a few bytes of model.
shape = numpy_helper.from_array(np.array([1 << 20, 1 << 20, 1 << 10], dtype=np.int64), "shape")
zero = numpy_helper.from_array(np.array(0, dtype=np.float32), "zero")
m = model([helper.make_node("ConstantOfShape", ["shape"], ["ones"],
                            value=numpy_helper.from_array(np.array([1], dtype=np.float32))),
           helper.make_node("ReduceSum", ["ones"], ["total"], keepdims=0),
           helper.make_node("Mul", ["total", "zero"], ["nothing"]),
           helper.make_node("Add", ["x", "y"], ["xy"]),
           helper.make_node("Add", ["xy", "nothing"], ["sum"])],
          "endless", [x, y], [s], [("", 13)])
m.graph.initializer.extend([shape, zero])
onnx.checker.check_model(m)
onnx.save(m, "endless.onnx")

past = helper.make_tensor_value_info("past", TensorProto.FLOAT, ["p", 3])
new = helper.make_tensor_value_info("new", TensorProto.FLOAT, ["n", 3])
present = helper.make_tensor_value_info("present", TensorProto.FLOAT, ["t", 3])
m = model([helper.make_node("Concat", ["past", "new"], ["present"], axis=0, name="append")], "concat_inputs",
          [past, new], [present], [("", 17)])
onnx.checker.check_model(m)
os.makedirs("concat_inputs/test_data_set_0", exist_ok=True)
onnx.save(m, "concat_inputs/model.onnx")
pv = rng.standard_normal((4, 3)).astype(np.float32)
nv = rng.standard_normal((2, 3)).astype(np.float32)
for name, arr, f in [("past", pv, "input_0.pb"), ("new", nv, "input_1.pb"),
                     ("present", np.concatenate([pv, nv]), "output_0.pb")]:
    with open(os.path.join("concat_inputs/test_data_set_0", f), "wb") as fh:
        fh.write(numpy_helper.from_array(arr, name).SerializeToString())
