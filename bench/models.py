#!/usr/bin/python3
"""Builds the transformer models bench/run.sh times (random weights, fixed seed; never committed).

    /usr/bin/python3 bench/models.py OUT_DIR [NAME ...]

NAME is one of: bert gpt2 gpt2_step gpt2_step_stacked vit nn_transformer (default: all of these), or a torchvision CNN:
resnet50 mobilenet_v3_large efficientnet_b0 convnext_tiny lraspp_mobilenet_v3 (segmentation, dynamic H x W). Each becomes OUT_DIR/NAME.onnx
(opset 17, dynamic batch and sequence dims) unless it already exists, with the torch module's outputs
on the (small) tracing inputs in OUT_DIR/NAME_data/test_data_set_0 for `onnxc compare`. The models follow the public
architectures at their base sizes:
  bert            BERT-base-like post-LN encoder: 12 x nn.TransformerEncoderLayer(768, 12 heads, 3072,
                  GELU), key padding mask input (bool [batch, seq], True = padded)
  gpt2            GPT-2-small-like pre-LN causal decoder, 12 x 768, 12 heads, no LM head; causal mask
                  built from the run-time sequence length
  gpt2_step       the same decoder, one decoding step: x [batch, 1, 768] and each layer's past keys
                  and values past_key_values.N.key/value [batch, 12, past, 64] (the per-layer layout
                  exporters write); returns the hidden state and present.N.key/value
  gpt2_step_stacked  the same step with every layer's keys in one past_key [12, batch, 12, past, 64]
                  and values in past_value (as older exporters write): past_key[i] per layer (Gather),
                  torch.stack of the layers' keys into present_key / present_value
  vit             ViT-B/16 (torchvision's vit_b_16 layout, rebuilt here: torchvision is not packaged):
                  image [batch, 3, 224, 224] -> 1000 logits
  nn_transformer  nn.Transformer(d_model 512, 8 heads, 6 + 6 layers, 2048), seq-first src and tgt
"""
import os
import sys

import torch
import torch.nn as nn

OPSET = 17
D, HEADS, FF, LAYERS = 768, 12, 3072, 12


class Bert(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.0, activation="gelu", batch_first=True)
        self.enc = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)

    def forward(self, x, mask):
        return self.enc(x, src_key_padding_mask=mask)


class Gpt2Attention(nn.Module):
    """GPT-2's attention: one fused QKV projection, heads by reshape/transpose, causal softmax."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)

    def forward(self, x, past_k=None, past_v=None):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).split(D, dim=2)
        heads = lambda z: z.view(b, t, HEADS, D // HEADS).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        if past_k is not None:
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        s = q @ k.transpose(-1, -2) / (D // HEADS) ** 0.5
        if past_k is None:  # a step's one query sees the whole past: no mask
            causal = torch.triu(torch.full((t, t), float("-inf"), dtype=x.dtype), diagonal=1)
            s = s + causal
        o = torch.softmax(s, dim=-1) @ v
        return self.proj(o.transpose(1, 2).reshape(b, t, D)), k, v


class Gpt2Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.attn = Gpt2Attention()
        self.mlp = nn.Sequential(nn.Linear(D, FF), nn.GELU(approximate="tanh"), nn.Linear(FF, D))

    def forward(self, x, past_k=None, past_v=None):
        a, k, v = self.attn(self.ln1(x), past_k, past_v)
        x = x + a
        return x + self.mlp(self.ln2(x)), k, v


class Gpt2(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Gpt2Block() for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(D)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)[0]
        return self.ln_f(x)


class Gpt2Step(Gpt2):
    def forward(self, x, *past):
        present = []
        for i, blk in enumerate(self.blocks):
            x, k, v = blk(x, past[2 * i], past[2 * i + 1])
            present += [k, v]
        return (self.ln_f(x), *present)


class Gpt2StepStacked(Gpt2):
    def forward(self, x, past_k, past_v):
        ks, vs = [], []
        for i, blk in enumerate(self.blocks):
            x, k, v = blk(x, past_k[i], past_v[i])
            ks.append(k)
            vs.append(v)
        return self.ln_f(x), torch.stack(ks), torch.stack(vs)


class VitB16(nn.Module):
    """torchvision.models.vit_b_16's structure: conv patches, class token, learned positions, 12
    pre-LN encoder blocks (nn.MultiheadAttention + GELU MLP), final LN, linear head."""

    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(3, D, 16, 16)
        self.cls = nn.Parameter(torch.randn(1, 1, D) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, 197, D) * 0.02)
        layer = nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.enc = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.ln = nn.LayerNorm(D)
        self.head = nn.Linear(D, 1000)

    def forward(self, img):
        x = self.patch(img).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        return self.head(self.ln(self.enc(x))[:, 0])


def randomize(model):
    """Fresh random values for every parameter: nn.TransformerEncoder deep-copies one layer, and the
    exporter merges identical initializers, which would leave one layer's weights shared by all."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_((1.0 if name.endswith("weight") else 0.0) + 0.1 * torch.randn(p.shape))
            else:
                p.copy_(torch.randn(p.shape) * (1.0 / p.shape[-1]) ** 0.5)


def exporter_kwargs():
    """torch >= 2.5 has two exporters and 2.9+ defaults to dynamo: these benchmarks use the TorchScript
    one (the spelling bench/run.sh's figures were taken with) unless ONNXC_EXPORTER=dynamo."""
    import inspect
    if "dynamo" not in inspect.signature(torch.onnx.export).parameters:
        return {}
    return {"dynamo": os.environ.get("ONNXC_EXPORTER", "torchscript") == "dynamo"}


def export(model, args, path, names_in, names_out, dyn):
    randomize(model)
    model.eval()  # with autograd on: under no_grad torch picks a fused encoder path that cannot export
    torch.onnx.export(model, args, path, opset_version=OPSET, input_names=names_in, output_names=names_out,
                      dynamic_axes=dyn, do_constant_folding=True, **exporter_kwargs())
    write_reference(model, args, path[: -len(".onnx.tmp")] + "_data/test_data_set_0")


def write_reference(model, args, folder):
    """The torch module's own outputs on the tracing inputs, as ONNX test data (onnxc compare reads it)."""
    from onnx import numpy_helper
    os.makedirs(folder, exist_ok=True)
    outs = model(*args)  # autograd on, as in export: the same (unfused) path torch traced
    outs = tuple(t.detach() for t in (outs if isinstance(outs, tuple) else (outs,)))
    for kind, tensors in (("input", args), ("output", outs)):
        for i, t in enumerate(tensors):
            with open(os.path.join(folder, f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(t.numpy()).SerializeToString())


def build(name, path):
    torch.manual_seed(1234)
    bs = {0: "batch", 1: "seq"}
    if name == "bert":
        mask = torch.zeros(2, 7, dtype=torch.bool)
        mask[1, 5:] = True
        export(Bert(), (torch.randn(2, 7, D), mask), path, ["x", "mask"], ["y"], {"x": bs, "mask": bs, "y": bs})
    elif name == "gpt2":
        export(Gpt2(), (torch.randn(2, 7, D),), path, ["x"], ["y"], {"x": bs, "y": bs})
    elif name == "gpt2_step":
        kv = [f"{i}.{n}" for i in range(LAYERS) for n in ("key", "value")]
        pasts = tuple(torch.randn(2, HEADS, 5, D // HEADS) for _ in kv)
        dyn = {"x": {0: "batch"}, "y": {0: "batch"}}
        dyn.update({f"past_key_values.{n}": {0: "batch", 2: "past"} for n in kv})
        dyn.update({f"present.{n}": {0: "batch", 2: "past_plus_1"} for n in kv})
        export(Gpt2Step(), (torch.randn(2, 1, D), *pasts), path, ["x"] + [f"past_key_values.{n}" for n in kv],
               ["y"] + [f"present.{n}" for n in kv], dyn)
    elif name == "gpt2_step_stacked":
        pk, pv = (torch.randn(LAYERS, 2, HEADS, 5, D // HEADS) for _ in range(2))
        past, present = {1: "batch", 3: "past"}, {1: "batch", 3: "past_plus_1"}
        export(Gpt2StepStacked(), (torch.randn(2, 1, D), pk, pv), path, ["x", "past_key", "past_value"],
               ["y", "present_key", "present_value"], {"x": {0: "batch"}, "y": {0: "batch"}, "past_key": past,
                                                       "past_value": past, "present_key": present, "present_value": present})
    elif name == "vit":
        export(VitB16(), (torch.randn(2, 3, 224, 224),), path, ["img"], ["logits"],
               {"img": {0: "batch"}, "logits": {0: "batch"}})
    elif name in CNNS:
        export_cnn(name, path)
    elif name == "nn_transformer":
        sb = {0: "seq", 1: "batch"}
        tb = {0: "tgt_seq", 1: "batch"}
        model = nn.Transformer(512, 8, 6, 6, 2048, dropout=0.0)
        export(model, (torch.randn(7, 2, 512), torch.randn(5, 2, 512)), path, ["src", "tgt"], ["y"],
               {"src": sb, "tgt": tb, "y": tb})
    else:
        sys.exit(f"models.py: unknown model '{name}'")


# torchvision CNNs with torchvision's own random initialisation (randomize() would scale the deep stacks
# of convolutions into overflow); eval mode, so the exporter folds each BatchNormalization into its Conv.
CNNS = {
    "resnet50": ("resnet50", False),
    "mobilenet_v3_large": ("mobilenet_v3_large", False),
    "efficientnet_b0": ("efficientnet_b0", False),
    "convnext_tiny": ("convnext_tiny", False),
    "lraspp_mobilenet_v3": ("lraspp_mobilenet_v3_large", True),  # segmentation, dynamic H x W
}


def export_cnn(name, path):
    try:
        import torchvision
    except ImportError:
        sys.exit(f"models.py: {name} needs torchvision (Debian: apt-get install python3-torchvision)")
    arch, segmentation = CNNS[name]
    if segmentation:
        model = getattr(torchvision.models.segmentation, arch)(weights=None, weights_backbone=None)
        wrapped = lambda x: model(x)["out"]
        module = type("Seg", (nn.Module,), {"forward": lambda self, x: wrapped(x)})()
        module.inner = model
        image = torch.randn(1, 3, 224, 288)
        dyn = {"img": {0: "batch", 2: "height", 3: "width"}, "out": {0: "batch", 2: "height", 3: "width"}}
        names_out = ["out"]
    else:
        module = getattr(torchvision.models, arch)(weights=None)
        image = torch.randn(1, 3, 224, 224)
        dyn = {"img": {0: "batch"}, "logits": {0: "batch"}}
        names_out = ["logits"]
    module.eval()
    torch.onnx.export(module, (image,), path, opset_version=OPSET, input_names=["img"], output_names=names_out,
                      dynamic_axes=dyn, do_constant_folding=True, **exporter_kwargs())
    with torch.no_grad():
        write_reference(module, (image,), path[: -len(".onnx.tmp")] + "_data/test_data_set_0")


TRANSFORMERS = ["bert", "gpt2", "gpt2_step", "gpt2_step_stacked", "vit", "nn_transformer"]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return
    out = sys.argv[1]
    if out.startswith("-"):
        sys.exit(f"models.py: unknown option '{out}' (usage: models.py OUT_DIR [NAME ...])")
    torch.set_num_threads(1)
    names = sys.argv[2:] or TRANSFORMERS
    unknown = [n for n in names if n not in TRANSFORMERS and n not in CNNS]
    if unknown:
        sys.exit(f"models.py: unknown model {', '.join(unknown)} (known: {', '.join(TRANSFORMERS + list(CNNS))})")
    os.makedirs(out, exist_ok=True)
    for name in names:
        path = os.path.join(out, name + ".onnx")
        if not os.path.exists(path):
            build(name, path + ".tmp")
            os.replace(path + ".tmp", path)
        print(path)


if __name__ == "__main__":
    main()
