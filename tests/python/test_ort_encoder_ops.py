"""ONNX Runtime's com.microsoft encoder ops that its transformer optimizer and Optimum write
(Attention, MultiHeadAttention, SkipLayerNormalization, FastGelu) compiled by onnxc and checked
against numpy written from ORT's kernels (PrepareMask: masked keys get mask_filter_value added,
`unidirectional` adds it again after each query's position), and the forms onnxc rejects, by name.
tests/models/fusion/ortc_* check the same ops against ONNX Runtime's own outputs."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import onnxc

MS = h.make_opsetid("com.microsoft", 1)
rng = np.random.default_rng(21)


def randn(*shape, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def session(tmp_path, name, node, inputs, outputs, inits=()):
    g = h.make_graph([node], name, [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                     [h.make_tensor_value_info(n, T.FLOAT, None) for n in outputs],
                     [numpy_helper.from_array(a, n) for n, a in inits])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), MS])
    m.ir_version = 8
    path = tmp_path / f"{name}.onnx"
    onnx.save(m, str(path))
    return onnxc.InferenceSession(str(path))


def ort_attention(q, k, v, heads, keep, causal, filt, past=0):
    """q [b, s, d], k/v [b, t, d]; keep [b, 1|s, t] booleans: ORT's scores, mask and softmax in float64."""
    b, s, d = q.shape
    t = k.shape[1]
    split = lambda x: x.reshape(b, x.shape[1], heads, -1).transpose(0, 2, 1, 3).astype(np.float64)
    qh, kh, vh = split(q), split(k), split(v)
    scores = qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(d // heads)
    mask = np.where(keep, 0.0, filt)[:, None]
    if causal:
        mask = mask + np.where(np.arange(t)[None, :] > np.arange(s)[:, None] + past, filt, 0.0)
    scores = scores + mask
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return (w @ vh).transpose(0, 2, 1, 3).reshape(b, s, -1)


def test_attention_raw_mask_unidirectional(tmp_path):
    b, s, d, heads = 2, 5, 16, 4
    w, bias = randn(d, 3 * d, scale=0.3), randn(3 * d, scale=0.1)
    node = h.make_node("Attention", ["x", "w", "b", "mask"], ["y"], domain="com.microsoft", num_heads=heads,
                       unidirectional=1)
    sess = session(tmp_path, "att", node, [("x", T.FLOAT, ["b", "s", d]), ("mask", T.INT32, ["b", "s"])], ["y"],
                   [("w", w), ("b", bias)])
    for bb, ss in ((b, s), (1, 3)):
        x = randn(bb, ss, d)
        mask = np.ones((bb, ss), np.int32)
        mask[-1, -2:] = 0
        qkv = x @ w + bias
        q, k, v = qkv[..., :d], qkv[..., d:2 * d], qkv[..., 2 * d:]
        ref = ort_attention(q, k, v, heads, (mask > 0)[:, None], True, -10000.0)
        np.testing.assert_allclose(sess.run(None, {"x": x, "mask": mask})[0], ref, rtol=1e-4, atol=1e-5)


def test_multi_head_attention_lengths_mask(tmp_path):
    b, s, t, d, heads = 2, 4, 6, 16, 2
    node = h.make_node("MultiHeadAttention", ["q", "k", "v", "", "mask"], ["y"], domain="com.microsoft",
                       num_heads=heads, mask_filter_value=-1e30)
    sess = session(tmp_path, "mha", node, [("q", T.FLOAT, ["b", s, d]), ("k", T.FLOAT, ["b", t, d]),
                                           ("v", T.FLOAT, ["b", t, d]), ("mask", T.INT32, ["b"])], ["y"])
    q, k, v = randn(b, s, d), randn(b, t, d), randn(b, t, d)
    ends = np.array([t, 3], np.int32)
    keep = (np.arange(t)[None, :] < ends[:, None])[:, None]
    ref = ort_attention(q, k, v, heads, keep, False, -1e30)
    np.testing.assert_allclose(sess.run(None, {"q": q, "k": k, "v": v, "mask": ends})[0], ref, rtol=1e-4, atol=1e-5)


def test_skip_layer_norm_sum_output(tmp_path):
    d = 8
    g, beta, bias = randn(d, scale=0.1) + 1, randn(d, scale=0.1), randn(d, scale=0.1)
    node = h.make_node("SkipLayerNormalization", ["x", "skip", "g", "beta", "bias"], ["y", "", "", "sum"],
                       domain="com.microsoft", epsilon=1e-5)
    sess = session(tmp_path, "sln", node, [("x", T.FLOAT, ["n", d]), ("skip", T.FLOAT, ["n", d])], ["y", "sum"],
                   [("g", g), ("beta", beta), ("bias", bias)])
    x, skip = randn(3, d), randn(3, d)
    y, total = sess.run(None, {"x": x, "skip": skip})
    ref_sum = (x + skip) + bias
    mu, var = ref_sum.mean(-1, keepdims=True), ref_sum.var(-1, keepdims=True)
    np.testing.assert_array_equal(total, ref_sum)
    np.testing.assert_allclose(y, (ref_sum - mu) / np.sqrt(var + 1e-5) * g + beta, rtol=1e-5, atol=1e-5)


def test_multi_head_attention_rejects_packed_kv(tmp_path):
    node = h.make_node("MultiHeadAttention", ["q", "kv"], ["y"], domain="com.microsoft", num_heads=2)
    with pytest.raises(onnxc.CompileError, match="MultiHeadAttention.*key and value must be given"):
        session(tmp_path, "mha_bad", node, [("q", T.FLOAT, [1, 2, 8]), ("kv", T.FLOAT, [1, 2, 2, 2, 4])], ["y"])


def test_attention_rejects_megatron_mask(tmp_path):
    node = h.make_node("Attention", ["x", "w", "", "mask"], ["y"], domain="com.microsoft", num_heads=2)
    with pytest.raises(onnxc.CompileError, match="Attention.*4-D is ORT's Megatron form"):
        session(tmp_path, "att_bad", node, [("x", T.FLOAT, [1, 2, 8]), ("mask", T.INT32, [1, 1, 2, 2])], ["y"],
                [("w", randn(8, 24))])
