#!/usr/bin/python3
"""Writes tests/models/conv/patch_embed: convolutions whose windows tile their input (a 4x4/stride-4
patch embedding, a 1-D patch conv), which passes/conv_as_matmul turns into GEMMs, around a pointwise
conv and a 3x3 conv with padding that stay Convs (codegen's implicit GEMM). Reference outputs are torch's,
at batch 1 and 3 (the batch dim is dynamic).

And tests/models/conv/small_cnn: a small CNN in the MobileNetV3/ResNet style with dynamic batch,
height and width, exported in eval mode with TrainingMode.PRESERVE so its BatchNormalization nodes stay for
passes/fold_batch_norm: a strided stem, depthwise 3x3 and 5x5 (stride 2) convolutions, squeeze-and-
excitation, HardSwish, a dilated and a grouped conv, a residual Add, global average pooling and a
classifier. Reference outputs are torch's at two image sizes and batches.

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


def bn_act(conv, channels, act):
    return nn.Sequential(conv, nn.BatchNorm2d(channels), act)


class SqueezeExcite(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.fc1, self.fc2 = nn.Conv2d(c, c // 4, 1), nn.Conv2d(c // 4, c, 1)

    def forward(self, x):
        s = torch.nn.functional.adaptive_avg_pool2d(x, 1)
        return x * torch.nn.functional.hardsigmoid(self.fc2(torch.relu(self.fc1(s))))


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = bn_act(nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False), 16, nn.ReLU())
        self.dw = bn_act(nn.Conv2d(16, 16, 3, padding=1, groups=16, bias=False), 16, nn.Hardswish())
        self.se = SqueezeExcite(16)
        self.pw = bn_act(nn.Conv2d(16, 16, 1, bias=False), 16, nn.Identity())
        self.expand = bn_act(nn.Conv2d(16, 32, 1, bias=False), 32, nn.Hardswish())
        self.dw5 = bn_act(nn.Conv2d(32, 32, 5, stride=2, padding=2, groups=32, bias=False), 32, nn.Hardswish())
        self.dilated = bn_act(nn.Conv2d(32, 24, 3, padding=2, dilation=2), 24, nn.SiLU())
        self.grouped = bn_act(nn.Conv2d(24, 24, 3, padding=1, groups=2), 24, nn.ReLU())
        self.fc = nn.Linear(24, 10)

    def forward(self, x):
        x = self.stem(x)
        x = x + self.pw(self.se(self.dw(x)))
        x = self.grouped(self.dilated(self.dw5(self.expand(x))))
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))


def randomize_batch_norms(model):
    """Running statistics and affine parameters away from (0, 1): folding them must matter."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(0.2 * torch.randn(m.num_features))
                m.running_var.copy_(0.5 + torch.rand(m.num_features))
                m.weight.copy_(1 + 0.2 * torch.randn(m.num_features))
                m.bias.copy_(0.2 * torch.randn(m.num_features))


def small_cnn():
    torch.manual_seed(0)
    model = SmallCnn().eval()
    randomize_batch_norms(model)
    out = os.path.join(HERE, "small_cnn")
    os.makedirs(out, exist_ok=True)
    dyn = {"x": {0: "batch", 2: "height", 3: "width"}, "y": {0: "batch"}}
    torch.onnx.export(model, (torch.randn(1, 3, 32, 32),), os.path.join(out, "model.onnx"), opset_version=17,
                      input_names=["x"], output_names=["y"], dynamic_axes=dyn,
                      training=torch.onnx.TrainingMode.PRESERVE)  # eval mode, BatchNormalization kept
    rng = np.random.default_rng(2)
    for k, shape in enumerate(((1, 3, 32, 32), (2, 3, 24, 40))):
        ds = os.path.join(out, f"test_data_set_{k}")
        os.makedirs(ds, exist_ok=True)
        xi = rng.standard_normal(shape).astype(np.float32)
        with torch.no_grad():
            yi = model(torch.from_numpy(xi)).numpy()
        for name, arr, file in (("x", xi, "input_0.pb"), ("y", yi, "output_0.pb")):
            with open(os.path.join(ds, file), "wb") as f:
                f.write(numpy_helper.from_array(arr, name).SerializeToString())


def main():
    small_cnn()
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
