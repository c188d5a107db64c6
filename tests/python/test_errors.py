"""Bad input raises the right exception, carrying the one-line message the CLI or the runtime gives."""
import os
import subprocess

import numpy as np
import pytest

import onnxc
from onnxc import _native
from conftest import model_dir, random_feed


def cli_error_line(*args):
    proc = subprocess.run([_native.cli_path(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 2
    return proc.stderr.splitlines()[0]


def test_bad_model_file_raises_the_cli_message(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not an ONNX model\n")
    with pytest.raises(onnxc.CompileError) as e:
        onnxc.InferenceSession(str(bad))
    assert str(e.value) == cli_error_line("compile", str(bad), "-o", str(tmp_path / "out"))
    assert str(e.value).startswith("onnxc compile: error: ") and str(bad) in str(e.value)
    assert "\n" not in str(e.value)
    assert not os.path.exists(tmp_path / "out")


def test_missing_file_and_bad_options(tmp_path):
    with pytest.raises(onnxc.CompileError, match="no-such.onnx"):
        onnxc.compile(tmp_path / "no-such.onnx")
    enc = os.path.join(model_dir("encoder_layer"), "model.onnx")
    with pytest.raises(onnxc.CompileError, match="unknown fusion 'bogus'"):
        onnxc.compile(enc, no_fuse=["bogus"])
    with pytest.raises(onnxc.CompileError, match="onnxc inspect: error: "):
        onnxc.inspect(tmp_path / "no-such.onnx")


def test_wrong_dtype_rank_and_dim(encoder):
    sess = onnxc.InferenceSession(encoder)
    feed = random_feed(sess, 2, 5)
    with pytest.raises(onnxc.InvalidArgument, match="src") as e:
        sess.run(None, {**feed, "src": feed["src"].astype(np.float64)})
    assert e.value.status == "ONNXC_ERR_DTYPE_MISMATCH"
    with pytest.raises(onnxc.InvalidArgument) as e:
        sess.run(None, {**feed, "src": feed["src"][0]})
    assert e.value.status == "ONNXC_ERR_SHAPE_MISMATCH"
    with pytest.raises(onnxc.InvalidArgument) as e:  # `seq` bound to 5 by src, 4 by the mask
        sess.run(None, {**feed, "src_key_padding_mask": feed["src_key_padding_mask"][:, :4]})
    assert e.value.status == "ONNXC_ERR_SHAPE_MISMATCH" and "seq" in str(e.value)
    # The session is still usable after each refusal.
    assert sess.run(None, feed)[0].shape[:2] == (2, 5)


def test_unknown_and_missing_names(encoder):
    sess = onnxc.InferenceSession(encoder)
    feed = random_feed(sess, 1, 3)
    with pytest.raises(onnxc.InvalidArgument, match="'nope' is not an input of the model"):
        sess.run(None, {**feed, "nope": feed["src"]})
    with pytest.raises(onnxc.InvalidArgument, match="missing input.*src_key_padding_mask"):
        sess.run(None, {"src": feed["src"]})
    with pytest.raises(onnxc.InvalidArgument, match="'nope' is not an output"):
        sess.run(["nope"], feed)
    with pytest.raises(ValueError):  # InvalidArgument is a ValueError too
        sess.run(None, {**feed, "src": np.zeros((1, 3, 2), np.complex64)})


def test_library_that_is_not_a_model(tmp_path):
    junk = tmp_path / "libjunk.so"
    junk.write_bytes(b"\x7fELF not really")
    with pytest.raises(onnxc.LoadError) as e:
        onnxc.InferenceSession(str(junk))
    assert e.value.status == "ONNXC_ERR_LOAD_FAILED" and "libjunk.so" in str(e.value)


def test_negative_threads(encoder):
    so = onnxc.SessionOptions()
    so.intra_op_num_threads = -1
    with pytest.raises(onnxc.InvalidArgument, match="intra_op_num_threads"):
        onnxc.InferenceSession(encoder, sess_options=so)
