"""Shared fixtures of the Python API tests: where the bundled models are, and their data sets read
as numpy arrays. ctest runs these with PYTHONPATH=build/python (tests/python/CMakeLists.txt)."""
import glob
import os

import numpy as np
import pytest

import onnxc

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")
BUNDLED = ["encoder_layer", "decoder_prelayer_causal", "mha_cross_attention"]


def model_dir(name):
    return os.path.normpath(os.path.join(MODELS, name))


def data_sets(name):
    """[(inputs {name: array}, [expected outputs])] of a bundled model, in folder order."""
    sets = []
    for d in sorted(glob.glob(os.path.join(model_dir(name), "test_data_set_*"))):
        inputs = dict(onnxc.load_tensor(f) for f in sorted(glob.glob(os.path.join(d, "input_*.pb"))))
        outputs = [onnxc.load_tensor(f)[1] for f in sorted(glob.glob(os.path.join(d, "output_*.pb")))]
        sets.append((inputs, outputs))
    assert sets, f"no test_data_set_* under {model_dir(name)}"
    return sets


@pytest.fixture(scope="session")
def encoder():
    """The bundled encoder layer compiled once for the whole run."""
    return onnxc.compile(os.path.join(model_dir("encoder_layer"), "model.onnx"))


def random_feed(session, batch, seq, seed=0):
    """Inputs for the encoder layer (src [batch, seq, 64] float, padding mask [batch, seq] bool)."""
    rng = np.random.default_rng(seed)
    feed = {}
    for arg in session.get_inputs():
        shape = [batch if d == "batch" else seq if d == "seq" else d for d in arg.shape]
        if arg.type == "tensor(bool)":
            mask = np.zeros(shape, dtype=np.bool_)
            mask[:, seq // 2 + 1:] = True  # pad the tail, never a whole row
            feed[arg.name] = mask
        else:
            feed[arg.name] = rng.standard_normal(shape).astype(np.float32)
    return feed
