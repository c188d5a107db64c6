#!/usr/bin/python3
"""A tiny LLaMA-shaped decoder with a KV cache, exported by torch 1.13 the way Hugging Face decoders
export: per-layer past_key_values.N.key/.value inputs and present.N.key/.value outputs,
input_ids, attention_mask and position_ids. RMSNorm, rotary embeddings by rotate_half over cos/sin
tables, causal attention over past + new keys (torch.cat: the Concat(past, new) form), SiLU-gated
MLP, tied-free LM head. Also writes the tokens torch's own greedy loop generates.

    /usr/bin/python3 tests/models/llm/gen_tiny_decoder.py [--out tests/models/llm/tiny_decoder] [--stack MODE]

--stack writes the cache stacked as other exporters do (the same weights and tokens):
  per-layer  past_N / present_N [2, batch, heads, past, hd]: K and V of a layer in one tensor (ONNX
             Runtime's GPT-2 tools); read with past_N[0], past_N[1] (Gather), written by torch.stack
  layers     past_key_values / present [layers, 2, batch, heads, past, hd]: everything in one tensor
  kv         past_key, past_value / present_key, present_value [layers, batch, heads, past, hd], read
             through split(1) + squeeze (Split, Squeeze) instead of Gather

Writes model.onnx and expected.json ({"prompt": [...], "tokens": [...]}); deterministic (fixed seed,
one thread). Weights are random (N(0, 0.2)), so the tokens are arbitrary but fixed.
"""
import argparse
import json
import os

import torch
import torch.nn as nn

VOCAB, D, HEADS, FF, LAYERS, MAX_POS = 96, 32, 2, 64, 2, 256
HD = D // HEADS
PROMPT = [5, 17, 42, 8, 77, 3]
NEW_TOKENS = 12


class RMSNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(D))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


def rotate_half(x):
    x1, x2 = x[..., : HD // 2], x[..., HD // 2:]
    return torch.cat([-x2, x1], dim=-1)


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = RMSNorm(), RMSNorm()
        self.q, self.k, self.v, self.o = (nn.Linear(D, D, bias=False) for _ in range(4))
        self.gate, self.up = nn.Linear(D, FF, bias=False), nn.Linear(D, FF, bias=False)
        self.down = nn.Linear(FF, D, bias=False)

    def forward(self, x, cos, sin, mask, past_k, past_v):
        b, s, _ = x.shape
        h = self.ln1(x)
        heads = lambda z: z.view(b, s, HEADS, HD).transpose(1, 2)
        q, k, v = heads(self.q(h)), heads(self.k(h)), heads(self.v(h))
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        scores = q @ k.transpose(-1, -2) / HD ** 0.5
        scores = scores.masked_fill(~mask, float("-inf"))
        a = torch.softmax(scores, dim=-1) @ v
        x = x + self.o(a.transpose(1, 2).reshape(b, s, D))
        h = self.ln2(x)
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h)), k, v


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))
        self.norm = RMSNorm()
        self.head = nn.Linear(D, VOCAB, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, HD, 2).float() / HD))
        f = torch.outer(torch.arange(MAX_POS).float(), inv)
        emb = torch.cat([f, f], dim=-1)
        self.register_buffer("cos_table", emb.cos())
        self.register_buffer("sin_table", emb.sin())

    def forward(self, input_ids, attention_mask, position_ids, *past):
        return self.run(input_ids, attention_mask, position_ids, past)

    def run(self, input_ids, attention_mask, position_ids, past):
        s = input_ids.shape[1]
        total = attention_mask.shape[1]
        x = self.embed(input_ids)
        cos = self.cos_table[position_ids].unsqueeze(1)
        sin = self.sin_table[position_ids].unsqueeze(1)
        # Query i (at position total - s + i) sees keys up to its own position, where the mask allows.
        rows = torch.arange(s).unsqueeze(1) + (total - s)
        causal = torch.arange(total).unsqueeze(0) <= rows
        mask = causal.unsqueeze(0).unsqueeze(0) & attention_mask.bool().unsqueeze(1).unsqueeze(2)
        presents = []
        for i, layer in enumerate(self.layers):
            x, k, v = layer(x, cos, sin, mask, past[2 * i], past[2 * i + 1])
            presents += [k, v]
        return (self.head(self.norm(x)),) + tuple(presents)


class Stacked(nn.Module):
    """The decoder with its cache stacked as `mode` (see --stack)."""

    def __init__(self, dec, mode):
        super().__init__()
        self.dec, self.mode = dec, mode

    def unpack(self, past):
        if self.mode == "per-layer":
            return [t for p in past for t in (p[0], p[1])]
        if self.mode == "layers":
            return [t for i in range(LAYERS) for t in (past[0][i][0], past[0][i][1])]
        ks = [k.squeeze(0) for k in past[0].split(1, 0)]
        vs = [v.squeeze(0) for v in past[1].split(1, 0)]
        return [t for i in range(LAYERS) for t in (ks[i], vs[i])]

    def pack(self, flat):
        pairs = [torch.stack([flat[2 * i], flat[2 * i + 1]]) for i in range(LAYERS)]
        if self.mode == "per-layer":
            return pairs
        if self.mode == "layers":
            return [torch.stack(pairs)]
        return [torch.stack(flat[0::2]), torch.stack(flat[1::2])]

    def forward(self, input_ids, attention_mask, position_ids, *past):
        logits, *flat = self.dec.run(input_ids, attention_mask, position_ids, self.unpack(past))
        return (logits,) + tuple(self.pack(flat))


def names(mode):
    """past and present names, and the axis of the past length in each."""
    if mode == "per-layer":
        return [f"past_{i}" for i in range(LAYERS)], [f"present_{i}" for i in range(LAYERS)], 3
    if mode == "layers":
        return ["past_key_values"], ["present"], 4
    if mode == "kv":
        return ["past_key", "past_value"], ["present_key", "present_value"], 3
    flat = [f"{p}.{i}.{kv}" for i in range(LAYERS) for kv in ("key", "value") for p in ("past_key_values",)]
    return flat, [n.replace("past_key_values", "present") for n in flat], 2


def greedy(model, prompt, n):
    past = [torch.zeros(1, HEADS, 0, HD) for _ in range(2 * LAYERS)]
    if isinstance(model, Stacked):
        past = model.pack(past)
    ids, out, total = torch.tensor([prompt]), [], 0
    with torch.no_grad():
        for _ in range(n):
            s = ids.shape[1]
            mask = torch.ones(1, total + s, dtype=torch.int64)
            pos = torch.arange(total, total + s).unsqueeze(0)
            logits, *past = model(ids, mask, pos, *past)
            nxt = int(logits[0, -1].argmax())
            out.append(nxt)
            total += s
            ids = torch.tensor([[nxt]])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny_decoder"))
    ap.add_argument("--stack", choices=["per-layer", "layers", "kv"])
    a = ap.parse_args()
    out = a.out
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Decoder().eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.copy_(0.2 * torch.randn_like(p))
    os.makedirs(out, exist_ok=True)
    past_names, present_names, seq_axis = names(a.stack)
    dynamic = {}
    for p, q in zip(past_names, present_names):
        dynamic[p] = {seq_axis - 2: "batch", seq_axis: "past_sequence_length"}
        dynamic[q] = {seq_axis - 2: "batch", seq_axis: "total_sequence_length"}
    dynamic.update({"input_ids": {0: "batch", 1: "sequence_length"},
                    "attention_mask": {0: "batch", 1: "total_sequence_length"},
                    "position_ids": {0: "batch", 1: "sequence_length"},
                    "logits": {0: "batch", 1: "sequence_length"}})
    past = tuple(torch.randn(1, HEADS, 3, HD) for _ in range(2 * LAYERS))
    if a.stack:
        model = Stacked(model, a.stack).eval()
        past = tuple(model.pack(list(past)))
    args = (torch.tensor([[1, 2]]), torch.ones(1, 5, dtype=torch.int64), torch.tensor([[3, 4]])) + past
    path = os.path.join(out, "model.onnx")
    torch.onnx.export(model, args, path, opset_version=17, do_constant_folding=True,
                      input_names=["input_ids", "attention_mask", "position_ids"] + past_names,
                      output_names=["logits"] + present_names, dynamic_axes=dynamic)
    tokens = greedy(model, PROMPT, NEW_TOKENS)
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump({"prompt": PROMPT, "tokens": tokens, "cache_pairs": len(past_names)}, f)
        f.write("\n")
    size = os.path.getsize(path)
    assert size < 5 * 1024 * 1024, size
    print(f"wrote {path} ({size} bytes); greedy tokens {tokens}")


if __name__ == "__main__":
    main()
