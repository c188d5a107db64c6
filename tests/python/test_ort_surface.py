"""The calls an ONNX Runtime user's script makes, made on onnxc.InferenceSession unchanged."""
import os

import numpy as np
import pytest

import onnxc
from conftest import data_sets, model_dir, random_feed

ENCODER = os.path.join(model_dir("encoder_layer"), "model.onnx")


def ort_style_script(ort, path):
    # Written as for onnxruntime: only the module differs.
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(path, sess_options=so, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    inputs, expected = data_sets("encoder_layer")[0]
    outputs = sess.run(None, {n: inputs[n] for n in names})
    return sess, outputs, expected


def test_an_ort_script_runs_unchanged():
    sess, outputs, expected = ort_style_script(onnxc, ENCODER)
    np.testing.assert_allclose(outputs[0], expected[0], rtol=1e-4, atol=1e-5)
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert sess.get_session_options().intra_op_num_threads == 1


def test_inputs_and_outputs_describe_the_model(encoder):
    sess = onnxc.InferenceSession(encoder)
    ins, outs = sess.get_inputs(), sess.get_outputs()
    assert [(i.name, i.type) for i in ins] == [("src", "tensor(float)"), ("src_key_padding_mask", "tensor(bool)")]
    assert ins[0].shape[:2] == ["batch", "seq"] and isinstance(ins[0].shape[2], int)
    assert ins[1].shape == ["batch", "seq"]
    assert len(outs) == 1 and outs[0].type == "tensor(float)" and outs[0].shape == ins[0].shape


def test_modelmeta_from_onnx_and_from_library(encoder):
    meta = onnxc.InferenceSession(ENCODER).get_modelmeta()
    assert meta.producer_name == "pytorch" and meta.graph_name == "torch_jit"  # the ONNX graph name, as ONNX Runtime gives it
    assert isinstance(meta.custom_metadata_map, dict)
    meta = onnxc.InferenceSession(encoder.path).get_modelmeta()
    assert meta.producer_name.startswith("onnxc") and meta.graph_name == "encoder_layer"


def test_output_names_select_and_order(encoder):
    sess = onnxc.InferenceSession(encoder)
    feed = random_feed(sess, 2, 6)
    name = sess.get_outputs()[0].name
    (a,) = sess.run([name], feed)
    (b,) = sess.run(None, feed)
    np.testing.assert_array_equal(a, b)


def test_outputs_survive_the_next_run(encoder):
    # The session's arena is reused by each run; returned arrays must not change with it.
    sess = onnxc.InferenceSession(encoder)
    first = sess.run(None, random_feed(sess, 2, 6, seed=1))[0]
    keep = first.copy()
    sess.run(None, random_feed(sess, 2, 6, seed=2))
    np.testing.assert_array_equal(first, keep)


def test_every_shape_from_one_library(encoder):
    sess = onnxc.InferenceSession(encoder)
    for batch, seq in [(1, 1), (3, 9), (2, 33)]:
        (out,) = sess.run(None, random_feed(sess, batch, seq))
        assert out.shape == (batch, seq, sess.get_inputs()[0].shape[2])
        assert np.isfinite(out).all()


def test_serialized_bytes_and_non_contiguous_input(encoder):
    with open(ENCODER, "rb") as f:
        sess = onnxc.InferenceSession(f.read())
    inputs, expected = data_sets("encoder_layer")[0]
    src = np.asfortranarray(inputs["src"])  # not C-contiguous: copied once, same result
    out = sess.run(None, {"src": src, "src_key_padding_mask": inputs["src_key_padding_mask"]})[0]
    np.testing.assert_allclose(out, expected[0], rtol=1e-4, atol=1e-5)


def test_other_providers_warn_and_run_on_the_cpu(encoder):
    with pytest.warns(UserWarning, match="CUDAExecutionProvider"):
        sess = onnxc.InferenceSession(encoder.path, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert onnxc.get_available_providers() == ["CPUExecutionProvider"]


def test_against_onnxruntime_when_installed():
    ort = pytest.importorskip("onnxruntime", reason="PyPI onnxruntime is not installed (optional cross-check)")
    _, ours, expected = ort_style_script(onnxc, ENCODER)
    _, theirs, _ = ort_style_script(ort, ENCODER)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-4, atol=1e-5)
