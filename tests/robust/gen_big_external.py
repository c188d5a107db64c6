#!/usr/bin/env python3
"""Writes DIR/model.onnx: a Gather from a 2.25 GiB float32 table kept as external data (beyond the
2 GiB that 32-bit offsets and protobuf reach), and DIR/test_data_set_0 with indices that reach the
table's last row. The table is written in chunks, so the generator itself stays small."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROWS, COLS = 2_359_296, 256


def rows_of(first, count):
    i = np.arange(first * COLS, (first + count) * COLS, dtype=np.int64)
    return ((i * 2654435761) % 1000003).astype(np.float32).reshape(count, COLS)


def main(out):
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    with open(os.path.join(out, "table.bin"), "wb") as f:
        step = 65536
        for first in range(0, ROWS, step):
            f.write(rows_of(first, min(step, ROWS - first)).tobytes())
    table = TensorProto(name="table", data_type=TensorProto.FLOAT, dims=[ROWS, COLS])
    table.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "table.bin"), ("offset", "0"), ("length", str(ROWS * COLS * 4))):
        table.external_data.add(key=k, value=v)
    graph = helper.make_graph([helper.make_node("Gather", ["table", "idx"], ["y"], axis=0)], "big_external",
                              [helper.make_tensor_value_info("idx", TensorProto.INT64, ["n"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", COLS])], [table])
    onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(out, "model.onnx"))
    idx = np.array([0, 1, 1_000_000, ROWS - 1, ROWS // 2 + 7], dtype=np.int64)
    want = np.concatenate([rows_of(int(r), 1) for r in idx])
    for name, arr in (("input_0.pb", numpy_helper.from_array(idx, "idx")), ("output_0.pb", numpy_helper.from_array(want, "y"))):
        with open(os.path.join(out, "test_data_set_0", name), "wb") as f:
            f.write(arr.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1])
