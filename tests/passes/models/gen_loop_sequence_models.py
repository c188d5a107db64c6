#!/usr/bin/python3
"""Writes small Loop models that collect a list (SequenceEmpty, SequenceInsert per iteration) and
join it after the loop with ConcatFromSequence, with test data computed here in NumPy: the numeric
check of passes/loop_sequence_to_scan.cpp through ONNX Runtime (the IR evaluator has no Loop).

    /usr/bin/python3 tests/passes/models/gen_loop_sequence_models.py OUT_DIR
    for d in OUT_DIR/*/; do
      build/tools/onnxc optimize $d/model.onnx -o $d/opt.onnx
      P=$(bench/peers/python.sh); $P bench/peers/check_ort.py $d/model.onnx $d && $P bench/peers/check_ort.py $d/opt.onnx $d
    done

Each model: x_t = x_(t-1) + 1 (x_0 an input of shape [batch, 3]) for n iterations, the list holds
x_1..x_n; the output joins it along `axis`, stacked (new_axis=1) or concatenated (new_axis=0)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(axis, new_axis):
    seq_f = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         helper.make_node("Add", ["x_in", "one"], ["x_out"]),
         helper.make_node("SequenceInsert", ["s_in", "x_out"], ["s_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", TensorProto.FLOAT, ["batch", 3]),
         helper.make_value_info("s_in", seq_f)],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_out", TensorProto.FLOAT, ["batch", 3]),
         helper.make_value_info("s_out", seq_f)],
        [numpy_helper.from_array(np.array(1.0, np.float32), "one")])
    nodes = [helper.make_node("SequenceEmpty", [], ["empty"], dtype=TensorProto.FLOAT),
             helper.make_node("Loop", ["n", "cond", "x0", "empty"], ["x_last", "list"], body=body),
             helper.make_node("ConcatFromSequence", ["list"], ["y"], axis=axis, new_axis=new_axis)]
    graph = helper.make_graph(
        nodes, "collect",
        [helper.make_tensor_value_info("n", TensorProto.INT64, []),
         helper.make_tensor_value_info("x0", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * (2 + new_axis)),
         helper.make_tensor_value_info("x_last", TensorProto.FLOAT, ["batch", 3])],
        [numpy_helper.from_array(np.array(True), "cond")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def expected(x0, n, axis, new_axis):
    xs = [x0 + np.float32(t + 1) for t in range(n)]
    return (np.stack(xs, axis) if new_axis else np.concatenate(xs, axis)), xs[-1]


def main(out):
    rng = np.random.default_rng(0)
    for axis, new_axis in [(0, 1), (1, 1), (-1, 1), (0, 0), (1, 0), (-1, 0)]:
        d = os.path.join(out, f"collect_axis{axis}_new{new_axis}".replace("-", "m"))
        m = model(axis, new_axis)
        onnx.checker.check_model(m)
        os.makedirs(d, exist_ok=True)
        onnx.save(m, os.path.join(d, "model.onnx"))
        for k, (batch, n) in enumerate([(2, 3), (1, 5)]):
            s = os.path.join(d, f"test_data_set_{k}")
            os.makedirs(s, exist_ok=True)
            x0 = rng.standard_normal((batch, 3)).astype(np.float32)
            y, last = expected(x0, n, axis, new_axis)
            for i, (name, v) in enumerate([("n", np.array(n, np.int64)), ("x0", x0)]):
                onnx.save_tensor(numpy_helper.from_array(v, name), os.path.join(s, f"input_{i}.pb"))
            for i, (name, v) in enumerate([("y", y), ("x_last", last)]):
                onnx.save_tensor(numpy_helper.from_array(v, name), os.path.join(s, f"output_{i}.pb"))


if __name__ == "__main__":
    main(sys.argv[1])
