#!/usr/bin/python3
"""Generate the committed ONNX test models and their reference data.

Run with the Debian interpreter (torch 1.13, onnx 1.12, numpy):

    /usr/bin/python3 tests/models/gen_models.py [--out tests/models] [--no-check]

For every model this writes, under <out>/<name>/:
    model.onnx                          torch.onnx.export, opset 17, dynamic batch/seq(/mem_seq)
    test_data_set_K/input_I.pb          TensorProto, named after graph input I
    test_data_set_K/output_J.pb         TensorProto, named after graph output J
    shapes.txt                          "test_data_set_K batch=.. seq=.. [mem_seq=..]" per set

Reference outputs are the PyTorch module's own fp32 outputs (never produced by an
ONNX runtime).  The self-check at the end validates each export with
onnx.checker (full_check), checks the dynamic dim_params, and runs every data set
through a tiny numpy ONNX interpreter (defined below, only used for this check)
to confirm the exported graph reproduces the torch outputs at every shape.

Everything is deterministic: fixed torch seeds for weights, fixed numpy seeds for
inputs, single-threaded torch.
"""

import argparse
import collections
import math
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import numpy_helper

OPSET = 17
D_MODEL = 64
N_HEAD = 4
D_FF = 128

# (batch, seq, mem_seq) per test_data_set_K.  mem_seq is only used by
# mha_cross_attention.  Set 0 is the "nominal" shape, 1..5 cover dynamic shapes
# (size-1 dims, odd lengths, the longest sequence).
SHAPES = [
    (2, 5, 6),
    (1, 1, 1),
    (1, 7, 3),
    (3, 7, 12),
    (3, 64, 40),
    (1, 64, 64),
]

# Example shape used for tracing: deliberately not 1 anywhere, and seq != mem_seq,
# so the tracer cannot specialise on size-1 or equal dimensions.
TRACE_SHAPE = (2, 5, 6)


# ----------------------------------------------------------------------------
# Models
# ----------------------------------------------------------------------------

def _randomize_affine_params(module, gen):
    """PyTorch initialises MHA in/out-projection biases to 0 and LayerNorm to
    (weight=1, bias=0).  Give them non-trivial values so a compiler that drops
    a bias or a LayerNorm scale fails the test.  Weight matrices keep their
    default (Xavier/Kaiming) init."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
            elif isinstance(_owner(module, name), nn.LayerNorm) and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=gen))


def _owner(root, param_name):
    mod = root
    for part in param_name.split(".")[:-1]:
        mod = getattr(mod, part)
    return mod


class EncoderLayerWrapper(nn.Module):
    """nn.TransformerEncoderLayer with the padding mask passed by keyword.

    TransformerEncoderLayer.forward(src, src_mask=None, src_key_padding_mask=None):
    torch.onnx.export passes the args tuple positionally, so without this wrapper
    the padding mask would land in `src_mask` (an attention mask) instead.
    """

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(
            d_model=D_MODEL, nhead=N_HEAD, dim_feedforward=D_FF, dropout=0.0,
            batch_first=True)

    def forward(self, src, src_key_padding_mask):
        return self.layer(src, src_key_padding_mask=src_key_padding_mask)


class PreLNBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D_MODEL)
        self.attn = nn.MultiheadAttention(D_MODEL, N_HEAD, dropout=0.0, batch_first=True)
        self.ln2 = nn.LayerNorm(D_MODEL)
        self.mlp = nn.Sequential(nn.Linear(D_MODEL, D_FF), nn.GELU(), nn.Linear(D_FF, D_MODEL))

    def forward(self, x, causal_mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=causal_mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class DecoderPreLNCausal(nn.Module):
    """2-layer pre-LN causal self-attention decoder stack (GPT-style blocks)."""

    def __init__(self, n_layers=2):
        super().__init__()
        self.layers = nn.ModuleList([PreLNBlock() for _ in range(n_layers)])

    def forward(self, x):
        # The causal mask is built from the *runtime* sequence length so the
        # exported graph contains the Shape->Gather->...->ConstantOfShape->Trilu
        # subgraph (same as nn.Transformer.generate_square_subsequent_mask).
        t = x.shape[1]
        mask = torch.triu(torch.full((t, t), float("-inf"), dtype=x.dtype, device=x.device),
                          diagonal=1)
        for layer in self.layers:
            x = layer(x, mask)
        return x


class CrossAttention(nn.Module):
    """nn.MultiheadAttention: query from `q`, key/value from `memory`."""

    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(embed_dim=D_MODEL, num_heads=N_HEAD, batch_first=True)

    def forward(self, q, memory):
        return self.mha(q, memory, memory, need_weights=False)[0]


# ----------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------

def _padding_mask(rng, batch, seq):
    """bool [batch, seq], True = padded.  Tail padding, every row keeps >= 1
    real token (a fully padded row makes softmax produce NaN).  Whenever
    seq > 1 at least one position is padded, and row 0 is never padded so the
    mask is not uniform across the batch."""
    lengths = np.full(batch, seq, dtype=np.int64)
    if seq > 1:
        for b in range(1, batch):
            lengths[b] = rng.randint(1, seq + 1)
        if batch == 1 or lengths[1:].min() == seq:
            lengths[-1] = max(1, seq - 1 - rng.randint(0, max(1, seq // 2)))
            if batch == 1:
                lengths[0] = lengths[-1]
    mask = np.arange(seq)[None, :] >= lengths[:, None]
    assert not mask.all(axis=1).any()
    return mask


def inputs_encoder_layer(rng, batch, seq, mem_seq):
    src = rng.randn(batch, seq, D_MODEL).astype(np.float32)
    return [src, _padding_mask(rng, batch, seq)]


def inputs_decoder(rng, batch, seq, mem_seq):
    return [rng.randn(batch, seq, D_MODEL).astype(np.float32)]


def inputs_cross(rng, batch, seq, mem_seq):
    return [rng.randn(batch, seq, D_MODEL).astype(np.float32),
            rng.randn(batch, mem_seq, D_MODEL).astype(np.float32)]


MODELS = [
    dict(name="encoder_layer", cls=EncoderLayerWrapper, seed=1001,
         inputs=["src", "src_key_padding_mask"], outputs=["output"],
         dyn={"src": {0: "batch", 1: "seq"},
              "src_key_padding_mask": {0: "batch", 1: "seq"},
              "output": {0: "batch", 1: "seq"}},
         make_inputs=inputs_encoder_layer, uses_mem=False),
    dict(name="decoder_prelayer_causal", cls=DecoderPreLNCausal, seed=1002,
         inputs=["x"], outputs=["output"],
         dyn={"x": {0: "batch", 1: "seq"}, "output": {0: "batch", 1: "seq"}},
         make_inputs=inputs_decoder, uses_mem=False),
    dict(name="mha_cross_attention", cls=CrossAttention, seed=1003,
         inputs=["q", "memory"], outputs=["attn_output"],
         dyn={"q": {0: "batch", 1: "seq"}, "memory": {0: "batch", 1: "mem_seq"},
              "attn_output": {0: "batch", 1: "seq"}},
         make_inputs=inputs_cross, uses_mem=True),
]


# ----------------------------------------------------------------------------
# Export + reference data
# ----------------------------------------------------------------------------

def torch_forward(model, np_inputs):
    """The module's own fp32 output.

    Run with autograd enabled (parameters require grad), which is exactly the
    condition under which torch.onnx.export traces the model: in torch 1.13
    TransformerEncoderLayer / MultiheadAttention only take their fused "fast
    path" (torch._transformer_encoder_layer_fwd / _native_multi_head_attention)
    when grad is disabled or nothing requires grad.  So this is the same
    decomposed math that ends up in the ONNX graph.
    """
    with torch.enable_grad():
        out = model(*[torch.from_numpy(a) for a in np_inputs])
    return out.detach().numpy()


def torch_forward_fastpath(model, np_inputs):
    """Plain inference (no_grad) -- may take the fused fast path."""
    with torch.no_grad():
        out = model(*[torch.from_numpy(a) for a in np_inputs])
    return out.numpy()


def export_model(spec, model, path):
    rng = np.random.RandomState(spec["seed"] + 7)
    args = tuple(torch.from_numpy(a) for a in spec["make_inputs"](rng, *TRACE_SHAPE))
    assert all(p.requires_grad for p in model.parameters())
    with torch.enable_grad():  # keeps torch 1.13's fused fast paths off while tracing
        torch.onnx.export(
            model, args, path,
            export_params=True,
            opset_version=OPSET,
            do_constant_folding=True,
            input_names=spec["inputs"],
            output_names=spec["outputs"],
            dynamic_axes=spec["dyn"],
        )


def write_tensor(path, arr, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(arr, name).SerializeToString())


def generate(spec, out_dir):
    name = spec["name"]
    mdir = os.path.join(out_dir, name)
    os.makedirs(mdir, exist_ok=True)

    torch.manual_seed(spec["seed"])
    model = spec["cls"]()
    _randomize_affine_params(model, torch.Generator().manual_seed(spec["seed"] + 1))
    model.eval()

    model_path = os.path.join(mdir, "model.onnx")
    export_model(spec, model, model_path)

    shapes_lines = []
    for k, (batch, seq, mem_seq) in enumerate(SHAPES):
        rng = np.random.RandomState(spec["seed"] * 100 + k)
        ins = spec["make_inputs"](rng, batch, seq, mem_seq)
        out = torch_forward(model, ins)
        assert np.isfinite(out).all(), (name, k)
        # The decomposed (exported) path and the fused fast path must agree.
        fast = torch_forward_fastpath(model, ins)
        np.testing.assert_allclose(out, fast, rtol=1e-4, atol=1e-5,
                                   err_msg=f"{name} set {k}: fast path != decomposed path")

        ddir = os.path.join(mdir, f"test_data_set_{k}")
        os.makedirs(ddir, exist_ok=True)
        for i, (iname, arr) in enumerate(zip(spec["inputs"], ins)):
            write_tensor(os.path.join(ddir, f"input_{i}.pb"), arr, iname)
        write_tensor(os.path.join(ddir, "output_0.pb"), out, spec["outputs"][0])

        line = f"test_data_set_{k} batch={batch} seq={seq}"
        if spec["uses_mem"]:
            line += f" mem_seq={mem_seq}"
        if name == "encoder_layer":
            n_pad = int(ins[1].sum())
            line += f" padded_positions={n_pad}"
        shapes_lines.append(line)

    with open(os.path.join(mdir, "shapes.txt"), "w") as f:
        f.write("\n".join(shapes_lines) + "\n")
    return mdir


# ----------------------------------------------------------------------------
# Self-check: a tiny numpy ONNX interpreter (test-only, covers the ops the
# exporter emits for these models and fails loudly on anything else).
# ----------------------------------------------------------------------------

def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


_erf = np.vectorize(math.erf, otypes=[np.float64])


def _np_dtype(onnx_type):
    return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[onnx_type]


def _run_node(op, ins, at):
    if op == "Constant":
        if "value" in at:
            return [numpy_helper.to_array(at["value"])]
        for k, dt in (("value_float", np.float32), ("value_int", np.int64),
                      ("value_floats", np.float32), ("value_ints", np.int64)):
            if k in at:
                return [np.array(at[k], dtype=dt)]
        raise NotImplementedError(f"Constant attrs {list(at)}")
    if op == "Identity":
        return [ins[0]]
    if op in ("Add", "Sub", "Mul", "Div", "Pow"):
        a, b = ins
        r = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply,
             "Div": np.divide, "Pow": np.power}[op](a, b)
        if op == "Div" and np.issubdtype(a.dtype, np.integer):
            r = np.trunc(np.true_divide(a, b))  # ONNX integer Div truncates
        return [r.astype(a.dtype)]
    if op in ("Equal", "Less", "Greater", "And", "Or"):
        f = {"Equal": np.equal, "Less": np.less, "Greater": np.greater,
             "And": np.logical_and, "Or": np.logical_or}[op]
        return [f(*ins)]
    if op == "Not":
        return [np.logical_not(ins[0])]
    if op == "Where":
        return [np.where(ins[0], ins[1], ins[2])]
    if op == "Sqrt":
        return [np.sqrt(ins[0])]
    if op == "Relu":
        return [np.maximum(ins[0], 0).astype(ins[0].dtype)]
    if op == "Erf":
        return [_erf(ins[0]).astype(ins[0].dtype)]
    if op == "Neg":
        return [-ins[0]]
    if op == "MatMul":
        return [np.matmul(ins[0], ins[1])]
    if op == "Gemm":
        a, b = ins[0], ins[1]
        if at.get("transA", 0):
            a = a.T
        if at.get("transB", 0):
            b = b.T
        y = at.get("alpha", 1.0) * (a @ b)
        if len(ins) > 2 and ins[2] is not None:
            y = y + at.get("beta", 1.0) * ins[2]
        return [y.astype(ins[0].dtype)]
    if op == "Softmax":
        x = ins[0]
        axis = at.get("axis", -1)
        m = np.max(x, axis=axis, keepdims=True)
        e = np.exp(x - m)
        return [(e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)]
    if op == "LayerNormalization":
        x, scale = ins[0], ins[1]
        bias = ins[2] if len(ins) > 2 else None
        axis = at.get("axis", -1)
        axis = axis + x.ndim if axis < 0 else axis
        axes = tuple(range(axis, x.ndim))
        eps = at.get("epsilon", 1e-5)
        mean = x.mean(axis=axes, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
        y = (x - mean) / np.sqrt(var + eps) * scale
        if bias is not None:
            y = y + bias
        return [y.astype(x.dtype)]
    if op == "Shape":
        s = np.array(ins[0].shape, dtype=np.int64)
        start, end = at.get("start", 0), at.get("end", None)
        return [s[start:end]]
    if op == "Gather":
        return [np.take(ins[0], ins[1], axis=at.get("axis", 0))]
    if op == "Unsqueeze":
        x = ins[0]
        axes = sorted(int(a) + (x.ndim + len(ins[1]) if a < 0 else 0) for a in ins[1])
        for a in axes:
            x = np.expand_dims(x, a)
        return [x]
    if op == "Squeeze":
        x = ins[0]
        if len(ins) > 1 and ins[1] is not None:
            return [np.squeeze(x, axis=tuple(int(a) for a in ins[1]))]
        return [np.squeeze(x)]
    if op == "Concat":
        return [np.concatenate(ins, axis=at["axis"])]
    if op == "Reshape":
        x, shape = ins[0], [int(s) for s in ins[1]]
        if not at.get("allowzero", 0):
            shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
        return [x.reshape(shape)]
    if op == "Transpose":
        return [np.transpose(ins[0], at.get("perm"))]
    if op == "Slice":
        x, starts, ends = ins[0], ins[1], ins[2]
        axes = ins[3] if len(ins) > 3 and ins[3] is not None else range(len(starts))
        steps = ins[4] if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
        sl = [slice(None)] * x.ndim
        for s, e, a, st in zip(starts, ends, axes, steps):
            sl[int(a)] = slice(int(s), int(e), int(st))
        return [x[tuple(sl)]]
    if op == "Expand":
        shape = np.broadcast_shapes(ins[0].shape, tuple(int(s) for s in ins[1]))
        return [np.broadcast_to(ins[0], shape).copy()]
    if op == "ConstantOfShape":
        v = numpy_helper.to_array(at["value"]) if "value" in at else np.zeros(1, np.float32)
        return [np.full(tuple(int(s) for s in ins[0]), v.reshape(-1)[0], dtype=v.dtype)]
    if op == "Cast":
        return [ins[0].astype(_np_dtype(at["to"]))]
    if op == "Range":
        return [np.arange(ins[0], ins[1], ins[2]).astype(ins[0].dtype)]
    if op == "Trilu":
        k = int(ins[1]) if len(ins) > 1 and ins[1] is not None else 0
        f = np.triu if at.get("upper", 1) else np.tril
        return [f(ins[0], k)]
    raise NotImplementedError(f"numpy reference interpreter: op {op}")


def run_numpy(model, feeds):
    env = {init.name: numpy_helper.to_array(init) for init in model.graph.initializer}
    env.update(feeds)
    with np.errstate(invalid="ignore", over="ignore"):
        for node in model.graph.node:
            if node.domain not in ("", "ai.onnx"):
                raise NotImplementedError(f"non-standard domain {node.domain}:{node.op_type}")
            ins = [env[n] if n else None for n in node.input]
            outs = _run_node(node.op_type, ins, _attrs(node))
            for n, v in zip(node.output, outs):
                if n:
                    env[n] = np.asarray(v)
    return [env[o.name] for o in model.graph.output]


def _dims(vi):
    return [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]


def check(spec, mdir):
    name = spec["name"]
    path = os.path.join(mdir, "model.onnx")
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)

    opset = {o.domain: o.version for o in model.opset_import}
    assert opset.get("", opset.get("ai.onnx")) == OPSET, opset
    assert [i.name for i in model.graph.input] == spec["inputs"], [i.name for i in model.graph.input]
    assert [o.name for o in model.graph.output] == spec["outputs"]
    for vi in list(model.graph.input) + list(model.graph.output):
        want = spec["dyn"][vi.name]
        dims = _dims(vi)
        for axis, param in want.items():
            assert dims[axis] == param, f"{name}:{vi.name} dims {dims}, want {param} at {axis}"
    assert os.path.getsize(path) < 2 * 1024 * 1024

    hist = collections.Counter(n.op_type for n in model.graph.node)
    max_err = 0.0
    for k in range(len(SHAPES)):
        ddir = os.path.join(mdir, f"test_data_set_{k}")
        feeds = {}
        for i, iname in enumerate(spec["inputs"]):
            t = onnx.TensorProto()
            with open(os.path.join(ddir, f"input_{i}.pb"), "rb") as f:
                t.ParseFromString(f.read())
            assert t.name == iname
            feeds[iname] = numpy_helper.to_array(t)
        t = onnx.TensorProto()
        with open(os.path.join(ddir, "output_0.pb"), "rb") as f:
            t.ParseFromString(f.read())
        assert t.name == spec["outputs"][0]
        ref = numpy_helper.to_array(t)
        got, = run_numpy(model, feeds)
        assert got.shape == ref.shape, (name, k, got.shape, ref.shape)
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4,
                                   err_msg=f"{name} test_data_set_{k}")
        max_err = max(max_err, float(np.abs(got.astype(np.float64) - ref).max()))
    return hist, max_err


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--no-check", action="store_true", help="skip the numpy self-check")
    args = ap.parse_args()

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    print(f"torch {torch.__version__}  onnx {onnx.__version__}  numpy {np.__version__}  opset {OPSET}")

    for spec in MODELS:
        mdir = generate(spec, args.out)
        if args.no_check:
            print(f"{spec['name']}: written (self-check skipped)")
            continue
        hist, max_err = check(spec, mdir)
        size = os.path.getsize(os.path.join(mdir, "model.onnx"))
        print(f"{spec['name']}: model.onnx {size} bytes, {sum(hist.values())} nodes, "
              f"numpy-vs-torch max abs err {max_err:.3g} over {len(SHAPES)} data sets")
        print("  ops: " + ", ".join(f"{k}={v}" for k, v in sorted(hist.items(), key=lambda kv: (-kv[1], kv[0]))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
