#!/usr/bin/python3
"""Generate the recurrent test models (GRU and LSTM encoders) and their PyTorch reference data.

Run with the Debian interpreter (torch 1.13, onnx 1.12, numpy):

    /usr/bin/python3 tests/models/recurrent/gen_recurrent.py [--out tests/models/recurrent]

Each model is a 2-layer bidirectional nn.GRU or nn.LSTM encoder followed by a Linear head, exported
with torch.onnx.export (opset 17, dynamic batch and seq), once batch_first and once sequence-first.
Under <out>/<name>/ it writes model.onnx and test_data_set_K/{input,output}_I.pb in the ONNX
backend-test layout, with the torch module's own fp32 outputs as the reference (no ONNX runtime
computed them). Weights come from fixed torch seeds, inputs from fixed numpy seeds.
"""

import argparse
import os

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import numpy_helper

OPSET = 17
FEATURES, HIDDEN, LAYERS = 6, 8, 2
# (batch, seq) per test_data_set_K: the nominal shape, then other batch and sequence lengths.
SHAPES = [(2, 5), (1, 3), (3, 1)]


class Encoder(nn.Module):
    """A recurrent encoder: every step's output through a Linear head, plus the final states."""

    def __init__(self, cell, batch_first):
        super().__init__()
        rnn = nn.GRU if cell == "gru" else nn.LSTM
        self.rnn = rnn(FEATURES, HIDDEN, num_layers=LAYERS, bidirectional=True, batch_first=batch_first)
        self.head = nn.Linear(2 * HIDDEN, 4)
        self.cell = cell

    def forward(self, x):
        y, state = self.rnn(x)
        h = state if self.cell == "gru" else state[0]
        return torch.tanh(self.head(y)), h


def tensor_pb(array, name, path):
    t = numpy_helper.from_array(np.ascontiguousarray(array), name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def make(out_dir, cell, batch_first, seed):
    name = f"{cell}_encoder_{'batch_first' if batch_first else 'seq_first'}"
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    torch.manual_seed(seed)
    model = Encoder(cell, batch_first).eval()
    seq_axis, batch_axis = (1, 0) if batch_first else (0, 1)
    trace = torch.randn((2, 5, FEATURES) if batch_first else (5, 2, FEATURES))
    path = os.path.join(d, "model.onnx")
    torch.onnx.export(model, (trace,), path, opset_version=OPSET, do_constant_folding=True,
                      input_names=["x"], output_names=["y", "h_n"],
                      dynamic_axes={"x": {batch_axis: "batch", seq_axis: "seq"},
                                    "y": {batch_axis: "batch", seq_axis: "seq"},
                                    "h_n": {1: "batch"}})
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    ops = {n.op_type for n in m.graph.node}
    assert cell.upper() in ops, f"{name}: no {cell.upper()} node in the export: {sorted(ops)}"
    rng = np.random.default_rng(seed)
    for k, (batch, seq) in enumerate(SHAPES):
        shape = (batch, seq, FEATURES) if batch_first else (seq, batch, FEATURES)
        x = rng.standard_normal(shape).astype(np.float32)
        with torch.no_grad():
            y, h = model(torch.from_numpy(x))
        sd = os.path.join(d, f"test_data_set_{k}")
        os.makedirs(sd, exist_ok=True)
        tensor_pb(x, "x", os.path.join(sd, "input_0.pb"))
        tensor_pb(y.numpy(), "y", os.path.join(sd, "output_0.pb"))
        tensor_pb(h.numpy(), "h_n", os.path.join(sd, "output_1.pb"))
    print(f"{name}: {os.path.getsize(path)} bytes, ops {sorted(ops)}")


def export_bench(out_dir):
    """Single-layer 256->256 LSTM and GRU (batch-first, dynamic batch/seq) for bench/compare.sh;
    about 2 MB each, so written elsewhere and never committed."""
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    for cell in ("lstm", "gru"):
        m = (nn.LSTM if cell == "lstm" else nn.GRU)(256, 256, batch_first=True).eval()
        outs = ["y", "h"] + (["c"] if cell == "lstm" else [])
        torch.onnx.export(m, (torch.randn(1, 100, 256),), os.path.join(out_dir, f"{cell}.onnx"), opset_version=OPSET,
                          input_names=["x"], output_names=outs, dynamic_axes={"x": {0: "batch", 1: "seq"}})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--bench-out", help="write only the 256-wide benchmark models into this folder")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.bench_out:
        export_bench(args.bench_out)
        return
    for i, (cell, batch_first) in enumerate([("gru", True), ("gru", False), ("lstm", True), ("lstm", False)]):
        make(args.out, cell, batch_first, seed=100 + i)


if __name__ == "__main__":
    main()
