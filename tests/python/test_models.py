"""The bundled PyTorch exports through onnxc.InferenceSession against their reference outputs, and
through onnxc.compare (the CLI's check) returned as data."""
import os
import shutil

import numpy as np
import pytest

import onnxc
from conftest import BUNDLED, data_sets, model_dir


@pytest.mark.parametrize("name", BUNDLED)
def test_session_matches_reference(name):
    sess = onnxc.InferenceSession(os.path.join(model_dir(name), "model.onnx"))
    sets = data_sets(name)
    for inputs, expected in sets:
        got = sess.run(None, inputs)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.dtype == e.dtype and g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", BUNDLED)
def test_compare_returns_data(name):
    r = onnxc.compare(model_dir(name), rtol=1e-4, atol=1e-5)
    assert r.ok and r.total == len(data_sets(name)) == r.matched
    out = r.data_sets[0]["outputs"][0]
    assert out["ok"] and out["mismatches"] == 0 and out["max_abs_err"] <= 1e-5


def test_compare_reports_a_mismatch(tmp_path):
    # A reference with one element changed: compare must say which output and where, and not raise.
    src = os.path.join(model_dir("encoder_layer"), "test_data_set_0")
    dst = tmp_path / "test_data_set_0"
    shutil.copytree(src, dst)
    name, ref = onnxc.load_tensor(dst / "output_0.pb")
    raw = (dst / "output_0.pb").read_bytes()
    at = raw.index(ref.tobytes())
    bad = ref.copy()
    bad.reshape(-1)[3] += 1.0
    (dst / "output_0.pb").write_bytes(raw[:at] + bad.tobytes() + raw[at + ref.nbytes:])
    lib = onnxc.compile(os.path.join(model_dir("encoder_layer"), "model.onnx"))
    r = onnxc.compare(lib, str(dst), rtol=1e-4, atol=1e-5)
    assert not r.ok and r.matched == 0 and r.total == 1
    assert f"output '{name}' differs" in r.first_failure
    out = r.data_sets[0]["outputs"][0]
    assert out["mismatches"] == 1 and out["worst"][0]["index"] == list(np.unravel_index(3, ref.shape))


def test_inspect_returns_data():
    info = onnxc.inspect(os.path.join(model_dir("encoder_layer"), "model.onnx"), fusions=True)
    assert info["producer_name"] == "pytorch"
    assert [i["name"] for i in info["inputs"]] == ["src", "src_key_padding_mask"]
    assert info["inputs"][0]["shape"][:2] == ["batch", "seq"]
    assert info["unsupported"] == []
    assert info["ops"]["MatMul"] > 0
    assert info["fusions"]["counts"]["attention"] == 1


def test_compile_library_fields(tmp_path):
    lib = onnxc.compile(os.path.join(model_dir("encoder_layer"), "model.onnx"), tmp_path / "out", name="enc")
    assert lib.path == str(tmp_path / "out" / "libenc.so") and os.path.exists(lib.path)
    assert os.path.exists(lib.header) and os.path.exists(lib.static_library)
    assert [a.name for a in lib.inputs] == ["src", "src_key_padding_mask"]
    assert lib.kernels["kernels"] > 0 and lib.kernels["distinct_kernels"] > 0
    assert lib.fusions["counts"]["attention"] == 1
    assert lib.metadata().producer_name == "pytorch"
