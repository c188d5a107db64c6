"""Export a small PyTorch model to ONNX, compile it with onnxc, run it through onnxc.InferenceSession
(ONNX Runtime's interface) and compare the outputs with PyTorch's at a few shapes.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/torch_to_onnxc.py   # CMake build
    python3 examples/python/torch_to_onnxc.py                                    # after pip install .

Needs torch (Debian: python3-torch) and numpy."""
import io
import time

import numpy as np
import torch

import onnxc


class TinyEncoder(torch.nn.Module):
    """One pre-LN transformer block: attention and a GELU MLP, each with a residual."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.norm1, self.norm2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.attn = torch.nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


def main():
    torch.manual_seed(0)
    model = TinyEncoder().eval()
    onnx_bytes = io.BytesIO()
    torch.onnx.export(model, torch.randn(1, 4, 32), onnx_bytes, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}, opset_version=14)
    print(f"exported TinyEncoder to ONNX ({len(onnx_bytes.getvalue())} bytes, opset 14)")

    t0 = time.perf_counter()
    sess = onnxc.InferenceSession(onnx_bytes.getvalue())  # compiles through the kernel cache
    lib = sess.library
    print(f"compiled in {time.perf_counter() - t0:.1f} s: {lib.kernels['kernels']} kernel calls per run, "
          f"fusions {lib.fusions['counts']}")
    for arg in sess.get_inputs() + sess.get_outputs():
        print(f"  {arg.name}: {arg.type} {arg.shape}")

    rng = np.random.default_rng(0)
    worst = 0.0
    for batch, seq in [(1, 1), (2, 9), (4, 64)]:
        x = rng.standard_normal((batch, seq, 32)).astype(np.float32)
        with torch.no_grad():
            want = model(torch.from_numpy(x)).numpy()
        (got,) = sess.run(None, {"x": x})
        err = float(np.abs(got - want).max())
        worst = max(worst, err)
        ok = np.allclose(got, want, rtol=1e-4, atol=1e-5)
        print(f"batch {batch} seq {seq:2d}: max abs error vs torch {err:.2e} -> {'match' if ok else 'DIFFER'}")
        if not ok:
            raise SystemExit("onnxc and torch differ beyond rtol 1e-4 / atol 1e-5")
    print(f"all shapes match torch (worst max abs error {worst:.2e})")


if __name__ == "__main__":
    main()
