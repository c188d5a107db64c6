"""A torch model exported and compiled in this process, compared with torch's own outputs at several
shapes (skipped, saying so, where torch is not installed: Debian's python3-torch is optional)."""
import io

import numpy as np
import pytest

import onnxc

torch = pytest.importorskip("torch", reason="torch is not installed (Debian python3-torch, optional)")


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 16)
        self.norm = torch.nn.LayerNorm(16)

    def forward(self, x):
        return self.norm(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))))


def test_torch_export_matches_torch(tmp_path):
    torch.manual_seed(0)
    model = Block().eval()
    buf = io.BytesIO()
    torch.onnx.export(model, torch.randn(2, 3, 16), buf, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}, opset_version=14)
    # Opset 14 spells LayerNorm out in ReduceMean/Sub/Pow/... and GELU in Erf: both must fuse.
    sess = onnxc.InferenceSession(buf.getvalue())
    assert sess.get_inputs()[0].shape == ["batch", "seq", 16]
    fusions = sess.library.fusions["counts"]
    assert fusions["layer_norm"] == 1 and fusions["gelu"] == 1
    rng = np.random.default_rng(0)
    for batch, seq in [(1, 1), (2, 7), (5, 31)]:
        x = rng.standard_normal((batch, seq, 16)).astype(np.float32)
        with torch.no_grad():
            want = model(torch.from_numpy(x)).numpy()
        (got,) = sess.run(None, {"x": x})
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
