#!/usr/bin/python3
"""Writes tests/models/conv/patch_embed: convolutions whose windows tile their input (a 4x4/stride-4
patch embedding, a pointwise conv, a 1-D patch conv), which passes/conv_as_matmul turns into GEMMs,
around one 3x3 conv with padding that stays a direct convolution. Reference outputs are torch's,
at batch 1 and 3 (the batch dim is dynamic).

    /usr/bin/python3 tests/models/conv/gen_conv.py
"""
import os

import numpy as np
import torch
import torch.nn as nn
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


class PatchEmbed(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(3, 24, 4, stride=4)
        self.point = nn.Conv2d(24, 20, 1, bias=False)
        self.spatial = nn.Conv2d(20, 8, 3, padding=1)
        self.patch1d = nn.Conv1d(8, 6, 2, stride=2)

    def forward(self, x):
        y = torch.nn.functional.gelu(self.point(self.patch(x)))
        y = self.spatial(y).flatten(2)
        return self.patch1d(y)


def main():
    torch.manual_seed(0)
    model = PatchEmbed().eval()
    out = os.path.join(HERE, "patch_embed")
    os.makedirs(out, exist_ok=True)
    x = torch.randn(1, 3, 16, 16)
    torch.onnx.export(model, (x,), os.path.join(out, "model.onnx"), opset_version=17, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    rng = np.random.default_rng(1)
    for k, batch in enumerate((1, 3)):
        ds = os.path.join(out, f"test_data_set_{k}")
        os.makedirs(ds, exist_ok=True)
        xi = rng.standard_normal((batch, 3, 16, 16)).astype(np.float32)
        with torch.no_grad():
            yi = model(torch.from_numpy(xi)).numpy()
        for name, arr, file in (("x", xi, "input_0.pb"), ("y", yi, "output_0.pb")):
            with open(os.path.join(ds, file), "wb") as f:
                f.write(numpy_helper.from_array(arr, name).SerializeToString())


if __name__ == "__main__":
    main()
