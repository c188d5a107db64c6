#!/usr/bin/python3
"""Generate the seq2seq and control-flow test models and their PyTorch reference data.

    /usr/bin/python3 tests/models/recurrent/gen_seq2seq.py [--out tests/models/recurrent]

The seq2seq models are the seeds' shape of attention: a bidirectional 2-layer GRU or LSTM encoder
over a padded source batch, then a decoder (GRUCell / LSTMCell) that runs DEC_STEPS teacher-forced
steps, each attending over the encoder states with Bahdanau (additive) or Luong (general or dot)
attention under the source padding mask. Batch-first and sequence-first encoders are both covered.
Each model returns the decoder outputs and the attention weights of every step.

The control-flow models are torch.jit.script exports: an `If` on an input scalar around two LSTM
branches, and a `Loop` that greedily decodes a few steps (its tokens a sequence, as torch exports a
list; gru_greedy_loop_scan is the same Loop with the tokens as a scan output, tensors only). A model
that needs what onnxc cannot compile yet is reported SKIPPED (tests/models/recurrent/check_model.sh).

Every model gets test_data_set_K folders (ONNX backend layout) at three (batch, source length)
shapes, with the torch module's own fp32 outputs as the reference.
"""

import argparse
import os

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper

OPSET = 17
EMB, HIDDEN, VOCAB, DEC_STEPS = 6, 8, 11, 3
SHAPES = [(2, 5), (1, 3), (3, 7)]  # (batch, source length) per test_data_set_K


class Bahdanau(nn.Module):
    """score = vᵀ tanh(W q + U k), masked softmax over the source, context = Σ a·k."""

    def __init__(self, q_dim, k_dim, a_dim=HIDDEN):
        super().__init__()
        self.w, self.u = nn.Linear(q_dim, a_dim, bias=False), nn.Linear(k_dim, a_dim)
        self.v = nn.Linear(a_dim, 1, bias=False)

    def keys(self, states):
        return self.u(states)  # U·k, once per source sequence

    def forward(self, q, keys, values, mask):
        # q [b, q_dim]; keys [b, s, a_dim]; values [b, s, k_dim]
        score = self.v(torch.tanh(self.w(q).unsqueeze(1) + keys)).squeeze(2)  # [b, s]
        weights = F.softmax(score.masked_fill(~mask, -float("inf")), dim=1)
        return torch.bmm(weights.unsqueeze(1), values).squeeze(1), weights


class Luong(nn.Module):
    """score = qᵀ W k ('general') or qᵀ k ('dot'); masked softmax; context = Σ a·k."""

    def __init__(self, kind, q_dim, k_dim):
        super().__init__()
        self.key_proj = nn.Linear(k_dim, q_dim)  # encoder states into the decoder's space
        self.w = nn.Linear(q_dim, q_dim, bias=False) if kind == "general" else None

    def keys(self, states):
        return self.key_proj(states)

    def forward(self, q, keys, values, mask):
        if self.w is not None:
            q = self.w(q)
        score = torch.bmm(keys, q.unsqueeze(2)).squeeze(2)  # [b, s]
        weights = F.softmax(score.masked_fill(~mask, -float("inf")), dim=1)
        return torch.bmm(weights.unsqueeze(1), values).squeeze(1), weights


class Seq2Seq(nn.Module):
    def __init__(self, cell, attention, batch_first):
        super().__init__()
        self.cell_kind, self.batch_first = cell, batch_first
        rnn = nn.GRU if cell == "gru" else nn.LSTM
        self.src_emb, self.tgt_emb = nn.Embedding(VOCAB, EMB), nn.Embedding(VOCAB, EMB)
        self.encoder = rnn(EMB, HIDDEN, num_layers=2, bidirectional=True, batch_first=batch_first)
        k_dim = 2 * HIDDEN
        self.bridge = nn.Linear(k_dim, HIDDEN)
        self.decoder = (nn.GRUCell if cell == "gru" else nn.LSTMCell)(EMB + k_dim, HIDDEN)
        if attention == "bahdanau":
            self.attention = Bahdanau(HIDDEN, k_dim)
        else:
            self.attention = Luong(attention.split("_")[1], HIDDEN, k_dim)
        self.out = nn.Linear(HIDDEN + k_dim, VOCAB)

    def forward(self, src, src_mask, tgt):
        # src, src_mask: [b, s] (batch-first) or [s, b]; tgt: [b, DEC_STEPS] teacher-forced tokens.
        states, _ = self.encoder(self.src_emb(src))
        if not self.batch_first:
            states, src_mask = states.transpose(0, 1), src_mask.transpose(0, 1)
        mask = src_mask > 0
        # Mean of the valid encoder states starts the decoder.
        valid = mask.unsqueeze(2).to(states.dtype)
        h = torch.tanh(self.bridge((states * valid).sum(1) / valid.sum(1)))
        c = torch.zeros_like(h)
        keys = self.attention.keys(states)
        context = torch.zeros_like(states[:, 0])
        logits, weights = [], []
        for t in range(DEC_STEPS):
            x = torch.cat([self.tgt_emb(tgt[:, t]), context], 1)
            if self.cell_kind == "gru":
                h = self.decoder(x, h)
            else:
                h, c = self.decoder(x, (h, c))
            context, w = self.attention(h, keys, states, mask)
            logits.append(self.out(torch.cat([h, context], 1)))
            weights.append(w)
        return torch.stack(logits, 1), torch.stack(weights, 1)


class LstmIf(nn.Module):
    """`If` on an input scalar: one of two LSTMs runs, chosen at run time."""

    def __init__(self):
        super().__init__()
        self.fast = nn.LSTM(EMB, HIDDEN, batch_first=True)
        self.slow = nn.LSTM(EMB, HIDDEN, batch_first=True)

    def forward(self, x, use_fast):
        if bool(use_fast.item() > 0):
            y, _ = self.fast(x)
        else:
            y, _ = self.slow(x)
        return y


class ScriptGruCell(nn.Module):
    """A GRU cell written out (torch 1.13 cannot export a scripted aten::gru_cell)."""

    def __init__(self, inp, hidden):
        super().__init__()
        self.ih, self.hh = nn.Linear(inp, 3 * hidden), nn.Linear(hidden, 3 * hidden)

    def forward(self, x, h):
        xr, xz, xn = self.ih(x).chunk(3, 1)
        hr, hz, hn = self.hh(h).chunk(3, 1)
        r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        return (1 - z) * n + z * h


class GreedyDecode(nn.Module):
    """A `Loop` that greedily decodes `steps` tokens (a run-time input) with a GRU cell from a state."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, EMB)
        self.cell = ScriptGruCell(EMB, HIDDEN)
        self.out = nn.Linear(HIDDEN, VOCAB)

    def forward(self, h, start, steps):
        tok = start
        tokens = []
        for _ in range(int(steps)):
            h = self.cell(self.emb(tok), h)
            tok = torch.argmax(self.out(h), dim=1)
            tokens.append(tok)
        return torch.stack(tokens, 1), h


def tensor_pb(array, name, path):
    with open(path, "wb") as f:
        # np.array, not np.ascontiguousarray: that one makes a 0-d scalar rank 1.
        f.write(numpy_helper.from_array(np.array(array, order="C"), name).SerializeToString())


def write_sets(d, model, make_inputs, in_names, out_names, seed):
    rng = np.random.default_rng(seed)
    for k, shape in enumerate(SHAPES):
        inputs = make_inputs(rng, *shape)
        with torch.no_grad():
            outs = model(*[torch.from_numpy(a) for a in inputs])
        outs = outs if isinstance(outs, tuple) else (outs,)
        sd = os.path.join(d, f"test_data_set_{k}")
        os.makedirs(sd, exist_ok=True)
        for i, (a, n) in enumerate(zip(inputs, in_names)):
            tensor_pb(a, n, os.path.join(sd, f"input_{i}.pb"))
        for i, (o, n) in enumerate(zip(outs, out_names)):
            tensor_pb(o.numpy(), n, os.path.join(sd, f"output_{i}.pb"))


def export(model, args, path, in_names, out_names, dyn):
    torch.onnx.export(model, args, path, opset_version=OPSET, do_constant_folding=True,
                      input_names=in_names, output_names=out_names, dynamic_axes=dyn)
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    return sorted({n.op_type for n in m.graph.node})


def make_seq2seq(out_dir, cell, attention, batch_first, seed):
    name = f"{cell}_{attention}_s2s_{'batch_first' if batch_first else 'seq_first'}"
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    torch.manual_seed(seed)
    model = Seq2Seq(cell, attention, batch_first).eval()

    def inputs(rng, b, s):
        src = rng.integers(0, VOCAB, size=(b, s)).astype(np.int64)
        mask = np.ones((b, s), dtype=np.int64)
        if b > 1 and s > 2:
            mask[1, -2:] = 0  # the second sequence is padded
        tgt = rng.integers(0, VOCAB, size=(b, DEC_STEPS)).astype(np.int64)
        if not batch_first:
            src, mask = src.T.copy(), mask.T.copy()
        return [src, mask, tgt]

    src_axes = {0: "batch", 1: "src"} if batch_first else {0: "src", 1: "batch"}
    names, outs = ["src", "src_mask", "tgt"], ["logits", "weights"]
    dyn = {"src": src_axes, "src_mask": src_axes, "tgt": {0: "batch"}, "logits": {0: "batch"},
           "weights": {0: "batch", 2: "src"}}
    ops = export(model, tuple(torch.from_numpy(a) for a in inputs(np.random.default_rng(0), 2, 5)),
                 os.path.join(d, "model.onnx"), names, outs, dyn)
    assert cell.upper() in ops, f"{name}: no {cell.upper()} in the export: {ops}"
    write_sets(d, model, inputs, names, outs, seed)
    print(f"{name}: ops {ops}")


def make_control_flow(out_dir):
    torch.manual_seed(7)
    lstm_if = torch.jit.script(LstmIf().eval())
    d = os.path.join(out_dir, "lstm_if")
    os.makedirs(d, exist_ok=True)

    def if_inputs(rng, b, s):
        flag = np.array(1 if b % 2 else -1, dtype=np.int64)  # batches 2, 1, 3: both branches run
        return [rng.standard_normal((b, s, EMB)).astype(np.float32), flag]

    ops = export(lstm_if, (torch.randn(2, 5, EMB), torch.tensor(1)), os.path.join(d, "model.onnx"),
                 ["x", "use_fast"], ["y"], {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}})
    assert "If" in ops, f"lstm_if: no If in the export: {ops}"
    write_sets(d, lstm_if, if_inputs, ["x", "use_fast"], ["y"], 7)
    print(f"lstm_if: ops {ops}")

    torch.manual_seed(8)
    greedy = torch.jit.script(GreedyDecode().eval())
    d = os.path.join(out_dir, "gru_greedy_loop")
    os.makedirs(d, exist_ok=True)

    def loop_inputs(rng, b, s):
        return [rng.standard_normal((b, HIDDEN)).astype(np.float32),
                rng.integers(0, VOCAB, size=(b,)).astype(np.int64), np.array(s, dtype=np.int64)]

    names = ["h0", "start", "steps"]
    ops = export(greedy, (torch.randn(2, HIDDEN), torch.tensor([1, 2]), torch.tensor(DEC_STEPS)),
                 os.path.join(d, "model.onnx"), names, ["tokens", "h"],
                 {"h0": {0: "batch"}, "start": {0: "batch"}, "tokens": {0: "batch", 1: "steps"}, "h": {0: "batch"}})
    assert "Loop" in ops, f"gru_greedy_loop: no Loop in the export: {ops}"
    write_sets(d, greedy, loop_inputs, names, ["tokens", "h"], 8)
    print(f"gru_greedy_loop: ops {ops}")


def make_greedy_scan(out_dir):
    """gru_greedy_loop with its tokens as the Loop's scan output instead of a sequence.

    torch 1.13 exports a scripted list append as SequenceInsert into a loop-carried sequence, then
    ConcatFromSequence. The same Loop written with tensors only: the body emits each step's token as
    a scan output (stacked [steps, batch] by the Loop) and a Transpose makes it [batch, steps]. The
    body, weights and test data (torch's outputs) are the export's own, so the check is against torch.
    """
    src, d = os.path.join(out_dir, "gru_greedy_loop"), os.path.join(out_dir, "gru_greedy_loop_scan")
    m = onnx.load(os.path.join(src, "model.onnx"))
    g = m.graph
    loop = next(n for n in g.node if n.op_type == "Loop")
    body = next(a.g for a in loop.attribute if a.name == "body")
    insert = next(n for n in body.node if n.op_type == "SequenceInsert")
    seq_in = next(i for i in body.input if i.name == insert.input[0])
    body.input.remove(seq_in)
    body.node.remove(insert)
    token = onnx.helper.make_node("Identity", [insert.input[1]], ["token_row"], name="token_row")
    body.node.append(token)
    seq_out = next(o for o in body.output if o.name == insert.output[0])
    body.output.remove(seq_out)
    body.output.append(onnx.helper.make_tensor_value_info("token_row", onnx.TensorProto.INT64, ["batch"]))
    empty = next(n for n in g.node if n.op_type == "SequenceEmpty")
    concat = next(n for n in g.node if n.op_type == "ConcatFromSequence")
    del loop.input[-1]
    loop.output[-1] = "token_rows"
    g.node.remove(empty)
    idx = list(g.node).index(concat)
    g.node.remove(concat)
    g.node.insert(idx, onnx.helper.make_node("Transpose", ["token_rows"], [concat.output[0]], name="tokens_batch_first",
                                             perm=[1, 0]))
    for o in g.output:  # torch's names for dims it could not infer ("steps", "Looph_dim_1") are no symbols
        for dim in o.type.tensor_type.shape.dim:
            if dim.dim_param != "batch":
                dim.ClearField("dim_param")
    onnx.checker.check_model(m, full_check=True)
    os.makedirs(d, exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for k in range(len(SHAPES)):
        sd, dd = os.path.join(src, f"test_data_set_{k}"), os.path.join(d, f"test_data_set_{k}")
        os.makedirs(dd, exist_ok=True)
        for f in sorted(os.listdir(sd)):
            with open(os.path.join(sd, f), "rb") as a, open(os.path.join(dd, f), "wb") as b:
                b.write(a.read())
    print(f"gru_greedy_loop_scan: ops {sorted({n.op_type for n in g.node})}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = ap.parse_args()
    torch.set_num_threads(1)
    specs = [("gru", "bahdanau", True), ("gru", "luong_general", False),
             ("lstm", "bahdanau", False), ("lstm", "luong_dot", True)]
    for i, (cell, attention, batch_first) in enumerate(specs):
        make_seq2seq(args.out, cell, attention, batch_first, seed=200 + i)
    make_control_flow(args.out)
    make_greedy_scan(args.out)


if __name__ == "__main__":
    main()
