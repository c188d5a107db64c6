#!/usr/bin/python3
"""Tiny PyTorch exports for the norm and GELU fusions, with one reference data set each.

    /usr/bin/python3 tests/passes/models/gen_norm_models.py   # torch 1.13, onnx 1.12 (Debian)

Each model is a Linear + norm (+ activation) block in the style of one model family, exported at
the opsets listed (torch 1.13 writes nn.LayerNorm as ReduceMean/Sub/Pow/... below opset 17) with
dynamic batch and seq. Writes <name>_op<N>/model.onnx and test_data_set_0/{input,output}_0.pb;
reference outputs are the module's own fp32 outputs. Deterministic (fixed seeds).
"""

import math
import os

import numpy as np
import torch
import torch.nn as nn
from onnx import numpy_helper

D = 16
HERE = os.path.dirname(os.path.abspath(__file__))


class BertBlock(nn.Module):
    """HF BERT output: LayerNorm(dense(x) + x) after an erf GELU (LayerNorm as torch writes it)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, D)
        self.ln = nn.LayerNorm(D, eps=1e-12)
        self.ln2 = nn.LayerNorm(D)

    def forward(self, x):
        h = nn.functional.gelu(self.fc(x))
        return self.ln2(self.ln(h + x))


class LlamaRMSNorm(nn.Module):
    def __init__(self, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(D))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.to(torch.float32)
        var = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(var + self.eps)
        return self.weight * x.to(dtype)


class LlamaMLP(nn.Module):
    """LLaMA: RMSNorm, then the SiLU-gated MLP."""

    def __init__(self):
        super().__init__()
        self.norm = LlamaRMSNorm()
        self.gate, self.up, self.down = nn.Linear(D, 2 * D, bias=False), nn.Linear(D, 2 * D, bias=False), nn.Linear(2 * D, D, bias=False)

    def forward(self, x):
        h = self.norm(x)
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))


class T5Block(nn.Module):
    """T5LayerNorm (no mean, no bias; variance in fp32) and GPT-2's tanh GELU."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(D))
        self.fc = nn.Linear(D, D)

    def forward(self, x):
        var = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        h = x * torch.rsqrt(var + 1e-6)
        h = self.weight * h
        g = self.fc(h)
        return 0.5 * g * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (g + 0.044715 * torch.pow(g, 3.0))))


MODELS = [("bert_block", BertBlock, [13, 14]), ("llama_mlp", LlamaMLP, [14, 17]), ("t5_block", T5Block, [13, 17])]


def main():
    for name, cls, opsets in MODELS:
        torch.manual_seed(0)
        m = cls().eval()
        with torch.no_grad():
            for p in m.parameters():
                if p.dim() == 1:
                    p.add_(0.1 * torch.randn_like(p))
        x = torch.from_numpy(np.random.default_rng(1).standard_normal((2, 3, D)).astype(np.float32))
        with torch.no_grad():
            y = m(x).numpy()
        for opset in opsets:
            out = os.path.join(HERE, f"{name}_op{opset}")
            os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
            torch.onnx.export(m, (x,), os.path.join(out, "model.onnx"), input_names=["x"], output_names=["y"],
                              opset_version=opset, do_constant_folding=True,
                              dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}})
            for kind, arr, n in (("input", x.numpy(), "x"), ("output", y, "y")):
                with open(os.path.join(out, "test_data_set_0", f"{kind}_0.pb"), "wb") as f:
                    f.write(numpy_helper.from_array(arr, n).SerializeToString())


if __name__ == "__main__":
    main()
