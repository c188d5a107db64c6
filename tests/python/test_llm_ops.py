"""The language-model ops exporters write (ONNX Runtime's com.microsoft GroupQueryAttention,
RotaryEmbedding, SkipSimplifiedLayerNormalization; SimplifiedLayerNormalization; opset-23
RMSNormalization) compiled by onnxc and checked against numpy written from the ops' specs, each
model at several shapes (symbolic dims: one compiled library per model)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnxc

MS = h.make_opsetid("com.microsoft", 1)


def model(tmp_path, name, node, inputs, outputs, opset=17):
    g = h.make_graph([node], name, [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                     [h.make_tensor_value_info(n, t, s) for n, t, s in outputs])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset), MS])
    m.ir_version = 8
    path = tmp_path / f"{name}.onnx"
    onnx.save(m, str(path))
    return onnxc.InferenceSession(str(path))


def rms_norm(x, g, eps):
    return x / np.sqrt(np.mean(x.astype(np.float64) ** 2, axis=-1, keepdims=True) + eps) * g


def rotate(x, cos, sin, pos, interleaved=False, rd=None):
    """x [b, n, s, d] (BNSH), pos [b or 1, s]: the first rd features of each head rotated."""
    d = x.shape[-1]
    rd = rd or d
    out = x.astype(np.float64).copy()
    c = cos[np.broadcast_to(pos, (x.shape[0], x.shape[2]))][:, None]  # [b, 1, s, rd/2]
    s = sin[np.broadcast_to(pos, (x.shape[0], x.shape[2]))][:, None]
    if interleaved:
        x1, x2 = x[..., 0:rd:2], x[..., 1:rd:2]
        out[..., 0:rd:2], out[..., 1:rd:2] = x1 * c - x2 * s, x2 * c + x1 * s
    else:
        x1, x2 = x[..., : rd // 2], x[..., rd // 2: rd]
        out[..., : rd // 2], out[..., rd // 2: rd] = x1 * c - x2 * s, x2 * c + x1 * s
    return out


def bsh_to_bnsh(x, heads):
    b, s, hd = x.shape
    return x.reshape(b, s, heads, hd // heads).transpose(0, 2, 1, 3)


def bnsh_to_bsh(x):
    b, n, s, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, s, n * d)


rng = np.random.default_rng(7)


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_simplified_layer_norm(tmp_path):
    node = h.make_node("SimplifiedLayerNormalization", ["x", "g"], ["y"], axis=-1, epsilon=1e-6)
    sess = model(tmp_path, "sln", node, [("x", T.FLOAT, ["b", "s", 48]), ("g", T.FLOAT, [48])],
                 [("y", T.FLOAT, ["b", "s", 48])])
    for b, s in [(1, 1), (2, 5), (3, 17)]:
        x, g = randn(b, s, 48), randn(48)
        np.testing.assert_allclose(sess.run(None, {"x": x, "g": g})[0], rms_norm(x, g, 1e-6), rtol=1e-5, atol=1e-5)


def test_skip_simplified_layer_norm(tmp_path):
    node = h.make_node("SkipSimplifiedLayerNormalization", ["x", "skip", "g", "bias"], ["y", "", "", "sum"],
                       domain="com.microsoft", epsilon=1e-5)
    dims = ["b", "s", 64]
    sess = model(tmp_path, "ssln", node, [("x", T.FLOAT, dims), ("skip", T.FLOAT, dims), ("g", T.FLOAT, [64]),
                                          ("bias", T.FLOAT, [64])], [("y", T.FLOAT, dims), ("sum", T.FLOAT, dims)])
    for b, s in [(1, 1), (2, 9)]:
        x, skip, g, bias = randn(b, s, 64), randn(b, s, 64), randn(64), randn(64)
        y, total = sess.run(None, {"x": x, "skip": skip, "g": g, "bias": bias})
        expect = (x + skip) + bias
        np.testing.assert_array_equal(total, expect)
        np.testing.assert_allclose(y, rms_norm(expect, g, 1e-5), rtol=1e-5, atol=1e-5)


def test_rms_normalization_opset23_is_compiled(tmp_path):
    # Written with onnx 1.12's helper, which knows no opset 23: the node's schema comes from onnxc.
    node = h.make_node("RMSNormalization", ["x", "g"], ["y"], axis=-1, epsilon=1e-5)
    sess = model(tmp_path, "rms", node, [("x", T.FLOAT, ["b", 32]), ("g", T.FLOAT, [32])],
                 [("y", T.FLOAT, ["b", 32])], opset=23)
    for b in (1, 6):
        x, g = randn(b, 32), randn(32)
        np.testing.assert_allclose(sess.run(None, {"x": x, "g": g})[0], rms_norm(x, g, 1e-5), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("interleaved", [0, 1])
def test_ms_rotary_embedding_3d_offset(tmp_path, interleaved):
    # 3-D input [b, s, heads * d] with position_ids [1]: positions offset + 0..s-1 (ORT's form).
    node = h.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain="com.microsoft",
                       num_heads=2, interleaved=interleaved)
    sess = model(tmp_path, f"rot3_{interleaved}", node,
                 [("x", T.FLOAT, ["b", "s", 32]), ("pos", T.INT64, [1]), ("cos", T.FLOAT, [64, 8]),
                  ("sin", T.FLOAT, [64, 8])], [("y", T.FLOAT, ["b", "s", 32])])
    cos, sin = randn(64, 8), randn(64, 8)
    for b, s, off in [(1, 1, 9), (2, 6, 0), (3, 4, 17)]:
        x = randn(b, s, 32)
        got = sess.run(None, {"x": x, "pos": np.array([off], np.int64), "cos": cos, "sin": sin})[0]
        ref = bnsh_to_bsh(rotate(bsh_to_bnsh(x, 2), cos, sin, np.arange(off, off + s)[None], interleaved))
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_ms_rotary_embedding_4d_positions(tmp_path):
    node = h.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain="com.microsoft")
    sess = model(tmp_path, "rot4", node,
                 [("x", T.FLOAT, ["b", 3, "s", 16]), ("pos", T.INT64, ["b", "s"]), ("cos", T.FLOAT, [32, 8]),
                  ("sin", T.FLOAT, [32, 8])], [("y", T.FLOAT, ["b", 3, "s", 16])])
    cos, sin = randn(32, 8), randn(32, 8)
    for b, s in [(1, 5), (2, 3)]:
        x, pos = randn(b, 3, s, 16), rng.integers(0, 32, (b, s)).astype(np.int64)
        got = sess.run(None, {"x": x, "pos": pos, "cos": cos, "sin": sin})[0]
        np.testing.assert_allclose(got, rotate(x, cos, sin, pos), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rd", [0, 32])
def test_rotary_embedding_transposed_head_of_whole_vectors(tmp_path, rd):
    # The decoder exports' form: BSNH projections transposed into the opset-23 op, a head of 64
    # features (whole AVX-512 vectors: each vector is unrolled and reads densely), all or half of it
    # rotated.
    n, d = 4, 64
    half = (rd or d) // 2
    nodes = [h.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1, 3]),
             h.make_node("RotaryEmbedding", ["xt", "cos", "sin", "pos"], ["y"], rotary_embedding_dim=rd)]
    g = h.make_graph(nodes, "rot_t", [h.make_tensor_value_info("x", T.FLOAT, ["b", "s", n, d]),
                                      h.make_tensor_value_info("cos", T.FLOAT, [256, half]),
                                      h.make_tensor_value_info("sin", T.FLOAT, [256, half]),
                                      h.make_tensor_value_info("pos", T.INT64, ["b", "s"])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["b", n, "s", d])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 23)])
    m.ir_version = 8
    onnx.save(m, str(tmp_path / "rot_t.onnx"))
    sess = onnxc.InferenceSession(str(tmp_path / "rot_t.onnx"))
    cos, sin = randn(256, half), randn(256, half)
    for b, s in [(1, 1), (1, 7), (2, 130)]:
        x, pos = randn(b, s, n, d), rng.integers(0, 256, (b, s)).astype(np.int64)
        got = sess.run(None, {"x": x, "cos": cos, "sin": sin, "pos": pos})[0]
        np.testing.assert_allclose(got, rotate(x.transpose(0, 2, 1, 3), cos, sin, pos, rd=rd or None),
                                   rtol=1e-5, atol=1e-5)


def gqa_reference(q, k, v, past_k, past_v, seqlens_k, heads, kv_heads, cos=None, sin=None, rd=None):
    """ORT's GroupQueryAttention for past and present not sharing a buffer: present = past ++ new."""
    p = past_k.shape[2]
    s = q.shape[1]
    qh, kh, vh = bsh_to_bnsh(q, heads), bsh_to_bnsh(k, kv_heads), bsh_to_bnsh(v, kv_heads)
    if cos is not None:
        pos = np.arange(p, p + s)[None]
        qh, kh = rotate(qh, cos, sin, pos, rd=rd), rotate(kh, cos, sin, pos, rd=rd)
    present_k = np.concatenate([past_k, kh], axis=2)
    present_v = np.concatenate([past_v, vh], axis=2)
    rep = heads // kv_heads
    kk, vv = np.repeat(present_k, rep, axis=1), np.repeat(present_v, rep, axis=1)
    scores = qh.astype(np.float64) @ kk.transpose(0, 1, 3, 2) / np.sqrt(q.shape[2] / heads)
    total = p + s
    key, row = np.arange(total)[None, :], np.arange(s)[:, None] + p
    allowed = (key <= row)[None, None] & (np.arange(total)[None, None, None, :] <= seqlens_k[:, None, None, None])
    scores = np.where(allowed, scores, -np.inf)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return bnsh_to_bsh(w @ vv), present_k, present_v


@pytest.mark.parametrize("rotary", [False, True])
def test_group_query_attention(tmp_path, rotary):
    heads, kv_heads, d = 4, 2, 16
    attrs = dict(num_heads=heads, kv_num_heads=kv_heads)
    ins = ["q", "k", "v", "past_k", "past_v", "seqlens_k", "total"]
    decl = [("q", T.FLOAT, ["b", "s", heads * d]), ("k", T.FLOAT, ["b", "s", kv_heads * d]),
            ("v", T.FLOAT, ["b", "s", kv_heads * d]), ("past_k", T.FLOAT, ["b", kv_heads, "p", d]),
            ("past_v", T.FLOAT, ["b", kv_heads, "p", d]), ("seqlens_k", T.INT32, ["b"]), ("total", T.INT32, [])]
    cos = sin = None
    if rotary:
        attrs["do_rotary"] = 1
        ins += ["cos", "sin"]
        decl += [("cos", T.FLOAT, [64, 6]), ("sin", T.FLOAT, [64, 6])]  # rotates 12 of 16 features
        cos, sin = randn(64, 6), randn(64, 6)
    node = h.make_node("GroupQueryAttention", ins, ["y", "present_k", "present_v"], domain="com.microsoft", **attrs)
    out = [("y", T.FLOAT, ["b", "s", heads * d]), ("present_k", T.FLOAT, ["b", kv_heads, "t", d]),
           ("present_v", T.FLOAT, ["b", kv_heads, "t", d])]
    sess = model(tmp_path, f"gqa_{rotary}", node, decl, out)
    for b, s, p in [(1, 7, 0), (2, 1, 9), (1, 3, 40)]:
        q, k, v = randn(b, s, heads * d), randn(b, s, kv_heads * d), randn(b, s, kv_heads * d)
        pk, pv = randn(b, kv_heads, p, d), randn(b, kv_heads, p, d)
        seqlens = np.full(b, p + s - 1, np.int32)
        feeds = {"q": q, "k": k, "v": v, "past_k": pk, "past_v": pv, "seqlens_k": seqlens,
                 "total": np.array(p + s, np.int32)}
        if rotary:
            feeds.update(cos=cos, sin=sin)
        got = sess.run(None, feeds)
        ref = gqa_reference(q, k, v, pk, pv, seqlens, heads, kv_heads, cos, sin, 12 if rotary else None)
        for g, r in zip(got, ref):
            np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-4)


def test_group_query_attention_padded_prompt(tmp_path):
    # A right-padded batch of prompts (no past): keys past seqlens_k[b] are left out.
    heads, kv_heads, d = 2, 1, 8
    node = h.make_node("GroupQueryAttention", ["q", "k", "v", "", "", "seqlens_k", "total"], ["y"],
                       domain="com.microsoft", num_heads=heads, kv_num_heads=kv_heads)
    sess = model(tmp_path, "gqa_pad", node,
                 [("q", T.FLOAT, ["b", "s", heads * d]), ("k", T.FLOAT, ["b", "s", d]), ("v", T.FLOAT, ["b", "s", d]),
                  ("seqlens_k", T.INT32, ["b"]), ("total", T.INT32, [])], [("y", T.FLOAT, ["b", "s", heads * d])])
    q, k, v = randn(2, 6, heads * d), randn(2, 6, d), randn(2, 6, d)
    seqlens = np.array([5, 3], np.int32)
    got = sess.run(None, {"q": q, "k": k, "v": v, "seqlens_k": seqlens, "total": np.array(6, np.int32)})[0]
    empty = np.zeros((2, kv_heads, 0, d), np.float32)
    ref = gqa_reference(q, k, v, empty, empty, seqlens, heads, kv_heads)[0]
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[1, :4], ref[1, :4], rtol=1e-4, atol=1e-4)  # rows past the prompt: padding


def test_group_query_attention_rejects_smooth_softmax(tmp_path):
    node = h.make_node("GroupQueryAttention", ["q", "k", "v", "", "", "seqlens_k", "total"], ["y"],
                       domain="com.microsoft", num_heads=2, kv_num_heads=1, smooth_softmax=1)
    with pytest.raises(onnxc.CompileError, match="smooth_softmax"):
        model(tmp_path, "gqa_bad", node,
              [("q", T.FLOAT, [1, 2, 16]), ("k", T.FLOAT, [1, 2, 8]), ("v", T.FLOAT, [1, 2, 8]),
               ("seqlens_k", T.INT32, [1]), ("total", T.INT32, [])], [("y", T.FLOAT, [1, 2, 16])])
