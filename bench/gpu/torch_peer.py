#!/usr/bin/env python3
"""The PyTorch-eager column of bench/gpu/check.sh, and the GPU's two ceilings, measured in one process
on the GPU machine (CUDA events; warm-up first; medians).

    python3 bench/gpu/torch_peer.py ceilings
        -> "fp32_tflops X\\ttf32_tflops Y\\tcopy_tbps Z" (a 8192^3 float32 product with TF32 off and on;
           a 2 GiB device-to-device copy, bytes read + written)
    python3 bench/gpu/torch_peer.py bert B S [B S ...]
        -> one line per shape: "bert B S median_ms" for bench/models.py's BERT-base-like encoder in float32
           eval mode under no_grad (torch's fused encoder path: its best eager form), TF32 off
    python3 bench/gpu/torch_peer.py sdpa S [S ...]
        -> "sdpa S median_ms" for F.scaled_dot_product_attention on [1, 12, S, 64] float32
"""
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def median_ms(fn, warmup=5, runs=30):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def ceilings():
    n = 8192
    x, y = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    fp32 = 2 * n**3 / median_ms(lambda: x @ y, 2, 10) / 1e9
    torch.backends.cuda.matmul.allow_tf32 = True
    tf32 = 2 * n**3 / median_ms(lambda: x @ y, 2, 10) / 1e9
    torch.backends.cuda.matmul.allow_tf32 = False
    src = torch.randn(2**29, device="cuda")  # 2 GiB
    dst = torch.empty_like(src)
    tbps = 2 * src.numel() * 4 / median_ms(lambda: dst.copy_(src), 3, 20) / 1e9
    print(f"fp32_tflops {fp32:.1f}\ttf32_tflops {tf32:.1f}\tcopy_tbps {tbps:.2f}")


def bert(shapes):
    import models  # bench/models.py: the same architecture onnxc runs
    torch.manual_seed(1234)
    m = models.Bert()
    models.randomize(m)
    m = m.cuda().eval()
    torch.backends.cuda.matmul.allow_tf32 = False
    for b, s in shapes:
        x = torch.randn(b, s, models.D, device="cuda")
        mask = torch.zeros(b, s, dtype=torch.bool, device="cuda")
        with torch.no_grad():
            ms = median_ms(lambda: m(x, mask))
        print(f"bert {b} {s} {ms:.3f}", flush=True)


def sdpa(seqs):
    import torch.nn.functional as F
    for s in seqs:
        q, k, v = (torch.randn(1, 12, s, 64, device="cuda") for _ in range(3))
        ms = median_ms(lambda: F.scaled_dot_product_attention(q, k, v), 3, 20)
        print(f"sdpa {s} {ms:.3f}", flush=True)


def main():
    if len(sys.argv) < 2 or not torch.cuda.is_available():
        sys.exit(__doc__ if len(sys.argv) < 2 else "torch_peer.py: torch sees no CUDA device")
    what, rest = sys.argv[1], [int(v) for v in sys.argv[2:]]
    if what == "ceilings":
        ceilings()
    elif what == "bert":
        bert(list(zip(rest[0::2], rest[1::2])))
    elif what == "sdpa":
        sdpa(rest)
    else:
        sys.exit(f"torch_peer.py: unknown '{what}'")


if __name__ == "__main__":
    main()
