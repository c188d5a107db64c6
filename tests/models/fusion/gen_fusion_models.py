#!/usr/bin/python3
"""Exports the fusion test models (tests/models/fusion/<name>/) and writes manifest.txt.

    /usr/bin/python3 tests/models/fusion/gen_fusion_models.py [--out DIR] [--only NAME,...]

Each model is a tiny module from families*.py exported by torch.onnx.export (torch 1.13: opsets
13, 14 and 17) with dynamic batch/sequence dims, random weights from fixed seeds (biases and norm
scales randomized too, so a dropped bias fails), and two test_data_set_K folders whose outputs
are the torch module's own fp32 outputs. manifest.txt lists, per model, the fused ops the model
must end up with (see the header this script writes).
"""

import argparse
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import families as fam  # noqa: E402
import families_seq2seq as s2s  # noqa: E402
import families_vision as vis  # noqa: E402

D, H, HD, VOCAB = fam.D, fam.H, fam.HD, fam.VOCAB


def ids(rng, b, s):
    return rng.randint(0, VOCAB, size=(b, s)).astype(np.int64)


def pad_mask(b, s, dtype=np.int64):
    """1 = keep, 0 = padded: row 1 has its last two positions padded."""
    m = np.ones((b, s), dtype=dtype)
    if b > 1 and s > 2:
        m[1, -2:] = 0
    return m


def normal(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


BS = {0: "batch", 1: "seq"}
# Each spec: name, module factory, opsets, input maker (rng, shape) -> arrays, input/output names,
# dynamic axes, shapes of the two data sets and of the trace, expected counts, attention form,
# what compiling needs beyond today's lowerings.
SPECS = [
    dict(name="hf_mask_bias", make=fam.MaskedPositionBias, opsets=[17],
         inputs=lambda r, b, s: [pad_mask(b, s)], names=["attention_mask"], outputs=["scores"],
         dyn={"attention_mask": BS, "scores": {0: "batch", 2: "seq", 3: "seq"}}, counts=(0, 0, 0, 0), form="sdpa"),
    dict(name="torch_encoder_postln", make=lambda: fam.TorchEncoder(False), opsets=[13, 17],
         inputs=lambda r, b, s: [normal(r, b, s, D), pad_mask(b, s) == 0], names=["src", "pad"], outputs=["out"],
         dyn={"src": BS, "pad": BS, "out": BS}, counts=(2, 4, 0, 0), form="sdpa"),
    dict(name="torch_encoder_preln_causal", make=lambda: fam.TorchEncoder(True), opsets=[14, 17],
         inputs=lambda r, b, s: [normal(r, b, s, D), pad_mask(b, s) == 0], names=["src", "pad"], outputs=["out"],
         dyn={"src": BS, "pad": BS, "out": BS}, counts=(2, 5, 0, 2), form="sdpa"),
    dict(name="torch_decoder_postln", make=fam.TorchDecoder, opsets=[17],
         inputs=lambda r, b, s: [normal(r, b, s, D), normal(r, b, s + 2, D), pad_mask(b, s + 2) == 0],
         names=["tgt", "memory", "memory_pad"], outputs=["out"],
         dyn={"tgt": BS, "memory": {0: "batch", 1: "mem_seq"}, "memory_pad": {0: "batch", 1: "mem_seq"}, "out": BS},
         counts=(2, 3, 0, 1), form="sdpa"),
    dict(name="bert", make=fam.Bert, opsets=[13, 17],
         inputs=lambda r, b, s: [ids(r, b, s), pad_mask(b, s)], names=["input_ids", "attention_mask"],
         outputs=["last_hidden_state"], dyn={"input_ids": BS, "attention_mask": BS, "last_hidden_state": BS},
         counts=(2, 5, 0, 2), form="sdpa"),
    dict(name="distilbert", make=fam.DistilBert, opsets=[17],
         inputs=lambda r, b, s: [ids(r, b, s), pad_mask(b, s)], names=["input_ids", "attention_mask"],
         outputs=["last_hidden_state"], dyn={"input_ids": BS, "attention_mask": BS, "last_hidden_state": BS},
         counts=(2, 5, 0, 2), form="sdpa"),
    dict(name="gpt2", make=lambda: fam.GPT2(past=False), opsets=[13, 17],
         inputs=lambda r, b, s: [ids(r, b, s), pad_mask(b, s)], names=["input_ids", "attention_mask"],
         outputs=["last_hidden_state"], dyn={"input_ids": BS, "attention_mask": BS, "last_hidden_state": BS},
         counts=(2, 5, 0, 2), form="sdpa"),
    dict(name="gpt2_past", make=lambda: fam.GPT2(past=True), opsets=[17],
         inputs=lambda r, b, s: [ids(r, b, s), pad_mask(b, s + 4)] + [normal(r, b, H, 4, HD) for _ in range(4)],
         names=["input_ids", "attention_mask", "past_key_0", "past_value_0", "past_key_1", "past_value_1"],
         outputs=["last_hidden_state", "present_key_0", "present_value_0", "present_key_1", "present_value_1"],
         dyn=dict({"input_ids": BS, "attention_mask": {0: "batch", 1: "total"}, "last_hidden_state": BS},
                  **{f"past_{kv}_{i}": {0: "batch", 2: "past"} for kv in ("key", "value") for i in (0, 1)},
                  **{f"present_{kv}_{i}": {0: "batch", 2: "total"} for kv in ("key", "value") for i in (0, 1)}),
         counts=(2, 5, 0, 2), form="sdpa"),
    dict(name="llama", make=fam.Llama, opsets=[14, 17],
         inputs=lambda r, b, s: [ids(r, b, s), pad_mask(b, s)], names=["input_ids", "attention_mask"],
         outputs=["last_hidden_state"], dyn={"input_ids": BS, "attention_mask": BS, "last_hidden_state": BS},
         counts=(2, 0, 5, 0), form="sdpa"),
    dict(name="t5_encoder", make=fam.T5Encoder, opsets=[14, 17],
         inputs=lambda r, b, s: [ids(r, b, s), pad_mask(b, s)], names=["input_ids", "attention_mask"],
         outputs=["last_hidden_state"], dyn={"input_ids": BS, "attention_mask": BS, "last_hidden_state": BS},
         counts=(2, 0, 5, 0), form="sdpa"),
    dict(name="whisper_encoder", make=fam.WhisperEncoder, opsets=[13, 17],
         inputs=lambda r, b, s: [normal(r, b, fam.WhisperEncoder.MELS, 2 * s)], names=["input_features"],
         outputs=["last_hidden_state"], dyn={"input_features": {0: "batch", 2: "frames"},
                                             "last_hidden_state": {0: "batch", 1: "seq"}},
         counts=(2, 5, 0, 4), form="sdpa"),
    dict(name="vit", make=vis.ViT, opsets=[17],
         inputs=lambda r, b, s: [normal(r, b, 3, 32, 32)], names=["pixel_values"], outputs=["logits"],
         dyn={"pixel_values": {0: "batch"}, "logits": {0: "batch"}}, counts=(2, 5, 0, 2), form="sdpa"),
    dict(name="swin", make=vis.swin, opsets=[14, 17],
         inputs=lambda r, b, s: [normal(r, b, 3, 32, 32)], names=["pixel_values"], outputs=["logits"],
         dyn={"pixel_values": {0: "batch"}, "logits": {0: "batch"}}, counts=(4, 11, 0, 4), form="sdpa"),
    dict(name="gru_bahdanau", make=lambda: s2s.GruBahdanau(True), opsets=[17],
         inputs=lambda r, b, s: [ids(r, b, s), pad_mask(b, s), ids(r, b, 1)[:, 0], normal(r, b, D)],
         names=["src_ids", "src_mask", "prev_token", "hidden"], outputs=["logits", "weights"],
         dyn={"src_ids": BS, "src_mask": BS, "prev_token": {0: "batch"}, "hidden": {0: "batch"},
              "logits": {0: "batch"}, "weights": BS},
         counts=(1, 0, 0, 0), form="additive"),
    dict(name="bahdanau_step", make=lambda: s2s.GruBahdanau(False), opsets=[13, 17],
         inputs=lambda r, b, s: [normal(r, b, s, D), pad_mask(b, s), ids(r, b, 1)[:, 0], normal(r, b, D)],
         names=["encoder_outputs", "src_mask", "prev_token", "hidden"], outputs=["logits", "weights"],
         dyn={"encoder_outputs": BS, "src_mask": BS, "prev_token": {0: "batch"}, "hidden": {0: "batch"},
              "logits": {0: "batch"}, "weights": BS},
         counts=(1, 0, 0, 0), form="additive"),
    dict(name="luong_general", make=lambda: s2s.LuongAttention("general"), opsets=[17],
         inputs=lambda r, b, s: [normal(r, b, 3, D), normal(r, b, s, D), pad_mask(b, s) == 1],
         names=["source", "memory_bank", "memory_mask"], outputs=["attn_h", "align"],
         dyn={"source": {0: "batch", 1: "tgt"}, "memory_bank": BS, "memory_mask": BS,
              "attn_h": {0: "batch", 1: "tgt"}, "align": {0: "batch", 1: "tgt", 2: "seq"}},
         counts=(1, 0, 0, 0), form="sdpa"),
    dict(name="luong_dot", make=lambda: s2s.LuongAttention("dot"), opsets=[14, 17],
         inputs=lambda r, b, s: [normal(r, b, 3, D), normal(r, b, s, D), pad_mask(b, s) == 1],
         names=["source", "memory_bank", "memory_mask"], outputs=["attn_h", "align"],
         dyn={"source": {0: "batch", 1: "tgt"}, "memory_bank": BS, "memory_mask": BS,
              "attn_h": {0: "batch", 1: "tgt"}, "align": {0: "batch", 1: "tgt", 2: "seq"}},
         counts=(1, 0, 0, 0), form="sdpa"),
    dict(name="ntm_cosine", make=s2s.NtmRead, opsets=[17],
         inputs=lambda r, b, s: [normal(r, b, D), normal(r, b, s, D)], names=["controller", "memory"],
         outputs=["read", "weights"], dyn={"controller": {0: "batch"}, "memory": {0: "batch", 1: "slots"},
                                           "read": {0: "batch"}, "weights": {0: "batch", 1: "slots"}},
         counts=(1, 0, 0, 0), form="cosine"),
    dict(name="nadaraya_watson", make=s2s.NadarayaWatson, opsets=[17],
         inputs=lambda r, b, s: [normal(r, b * 3), normal(r, b * 3, s), normal(r, b * 3, s)],
         names=["queries", "keys", "values"], outputs=["pooled"],
         dyn={"queries": {0: "n"}, "keys": {0: "n", 1: "m"}, "values": {0: "n", 1: "m"}, "pooled": {0: "n"}},
         counts=(1, 0, 0, 0), form="nadaraya_watson"),
    dict(name="bart", make=fam.Bart, opsets=[14, 17],
         inputs=lambda r, b, s: [ids(r, b, s), pad_mask(b, s), ids(r, b, s + 1)],
         names=["input_ids", "attention_mask", "decoder_input_ids"], outputs=["last_hidden_state"],
         dyn={"input_ids": BS, "attention_mask": BS, "decoder_input_ids": {0: "batch", 1: "dec_seq"},
              "last_hidden_state": {0: "batch", 1: "dec_seq"}},
         counts=(3, 5, 0, 2), form="sdpa"),
    dict(name="maxvit", make=vis.maxvit, opsets=[17],
         inputs=lambda r, b, s: [normal(r, b, 3, 32, 32)], names=["pixel_values"], outputs=["logits"],
         dyn={"pixel_values": {0: "batch"}, "logits": {0: "batch"}}, counts=(2, 5, 0, 5), form="sdpa"),
]

DATA_SHAPES = [(2, 7), (1, 5)]  # (batch, seq) of test_data_set_0 and _1
TRACE_SHAPE = (2, 6)


def randomize(model, gen):
    """Biases 0.1·N(0,1), 1-D scales 1 + 0.1·N(0,1): a compiler that drops either fails."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias") and p.dim() == 1:
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
            elif name.endswith("weight") and p.dim() == 1:
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=gen))


def run_torch(model, arrays):
    with torch.enable_grad():  # keeps torch 1.13's fused MHA / encoder fast paths off, as in export
        out = model(*[torch.from_numpy(np.ascontiguousarray(a)) for a in arrays])
    outs = out if isinstance(out, tuple) else (out,)
    return [o.detach().numpy() for o in outs]


def write_tensor(path, arr, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.ascontiguousarray(arr), name).SerializeToString())


def generate(spec, opset, out_dir, seed):
    name = f"{spec['name']}_op{opset}"
    mdir = os.path.join(out_dir, name)
    os.makedirs(mdir, exist_ok=True)
    torch.manual_seed(seed)
    model = spec["make"]()
    randomize(model, torch.Generator().manual_seed(seed + 1))
    model.eval()
    trace = spec["inputs"](np.random.RandomState(seed), *TRACE_SHAPE)
    path = os.path.join(mdir, "model.onnx")
    with torch.enable_grad():
        torch.onnx.export(model, tuple(torch.from_numpy(np.ascontiguousarray(a)) for a in trace), path,
                          opset_version=opset, do_constant_folding=True, input_names=spec["names"],
                          output_names=spec["outputs"], dynamic_axes=spec["dyn"])
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    graph_inputs = [i.name for i in m.graph.input]
    for k, (b, s) in enumerate(DATA_SHAPES):
        arrays = spec["inputs"](np.random.RandomState(seed * 10 + k), b, s)
        outs = run_torch(model, arrays)
        ddir = os.path.join(mdir, f"test_data_set_{k}")
        os.makedirs(ddir, exist_ok=True)
        feeds = [(n, a) for n, a in zip(spec["names"], arrays) if n in graph_inputs]
        for i, (n, a) in enumerate(feeds):
            write_tensor(os.path.join(ddir, f"input_{i}.pb"), a, n)
        for j, (n, o) in enumerate(zip(spec["outputs"], outs)):
            assert np.isfinite(o).all(), (name, n)
            write_tensor(os.path.join(ddir, f"output_{j}.pb"), o, n)
    return name


MANIFEST_HEADER = """\
# Fusion test models (generated by gen_fusion_models.py; the counts are written by hand in SPECS).
# Per model, the fused ops it must end up with after `onnxc optimize`:
#   attention   attention blocks: every form (scaled dot-product and the seeds' forms)
#   layer_norm  LayerNormalization (a native op of an opset-17 export counts: it is fused already)
#   rms_norm    RMSNormalization    gelu  Gelu
#   form        which rule fuses the attention: sdpa (scaled dot-product, the `attention` helper's
#               rule; Luong's general and dot scores are its 1-head, scale-1 case), additive, cosine,
#               nadaraya_watson (the seeds' forms, passes/fuse_attention_forms.cpp)
#               A model that also returns the softmax weights (Luong's `align`) fuses with the
#               weights as Attention's qk_matmul_output (qk_matmul_output_mode=3).
#   needs       what compiling needs beyond today's lowerings ("-": nothing)
# `enabled:` lists the rules that have landed; counts that depend on a rule not listed are reported
# SKIPPED by fusion_test.sh, never passed. The lead adds rules here at integration:
#   layer_norm rms_norm gelu (fuse-core), sdpa (attention), the seed forms, optimize (ORT-loadable).
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    torch.set_num_threads(1)
    only = set(filter(None, args.only.split(",")))
    rows = []
    for si, spec in enumerate(SPECS):
        for opset in spec["opsets"]:
            name = f"{spec['name']}_op{opset}"
            if not only or name in only or spec["name"] in only:
                generate(spec, opset, args.out, seed=1000 + 17 * si + opset)
                print("wrote", name)
            a, ln, rms, gelu = spec["counts"]
            rows.append(f"{name:32} {a:9} {ln:10} {rms:8} {gelu:4}  {spec['form']:15} {spec.get('needs', '-')}")
    path = os.path.join(args.out, "manifest.txt")
    enabled = "enabled:"
    if os.path.exists(path):  # keep the enabled line the lead edits
        for line in open(path):
            if line.startswith("enabled:"):
                enabled = line.rstrip("\n")
    with open(path, "w") as f:
        f.write(MANIFEST_HEADER + enabled + "\n")
        f.write(f"# {'model':30} attention layer_norm rms_norm gelu  {'form':15} needs\n")
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
