#!/usr/bin/env python3
"""Tables for bench/gpu/check.sh (standard library only: it runs on the GPU machine's Python).

    summary.py conformance-diff CUDA_TSV EXPECTED_PASS   tests that pass on the CPU, not on CUDA, with reasons
    summary.py report OUT                                 the Markdown summary of a check.sh run
"""
import os
import re
import sys

L, D, FF, H, DH = 12, 768, 3072, 12, 64  # bench/models.py's BERT-base-like encoder


def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


LOG_LINE = re.compile(r"^\[\s*\d+/\d+\] (\w+)\s+(\S+) \(([\d.]+) s\)(?:: (.*))?$")


def read_results(path):
    """{test: [test, status, seconds, reason]} from a --tsv table, or from test-suite's progress log
    (which holds every test that finished even when a time limit stopped the run)."""
    if path.endswith(".tsv"):
        return {r[0]: r for r in read_tsv(path)[1:]}
    rows = {}
    for line in open(path, errors="replace"):
        m = LOG_LINE.match(line.rstrip("\n"))
        if m:
            rows[m.group(2)] = [m.group(2), m.group(1), m.group(3), m.group(4) or ""]
    return rows


def conformance_diff(results, expected):
    rows = read_results(results)
    want = [l.strip() for l in open(expected) if l.strip() and not l.startswith("#")]
    ran = [t for t in want if t in rows]
    lost = [t for t in ran if rows[t][1] != "passed"]
    print(f"{len(ran) - len(lost)} of {len(ran)} CPU-passing tests that ran also pass on CUDA "
          f"({len(want) - len(ran)} not run); totals on CUDA: " +
          ", ".join(f"{sum(1 for r in rows.values() if r[1] == s)} {s}" for s in ("passed", "failed", "errored", "unsupported")))
    by_reason = {}
    for t in lost:
        reason = rows[t][3] if len(rows[t]) > 3 else ""
        reason = re.sub(r"/tmp/\S+", "…", reason)  # temporary paths differ per test
        by_reason.setdefault(reason[:160], []).append(t)
    for reason, tests in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(tests):4d}  {reason}\n      {' '.join(tests[:12])}{' ...' if len(tests) > 12 else ''}")


def bert_gflop(b, s):
    t = b * s
    return (2 * t * (4 * D * D + 2 * D * FF) + 4 * b * H * s * s * DH) * L / 1e9


def read_ceilings(out):
    p = os.path.join(out, "ceilings.txt")
    if not os.path.exists(p):
        return None, None
    kv = dict(f.split() for f in open(p).read().strip().split("\t") if len(f.split()) == 2)
    return float(kv.get("fp32_tflops", 0)) or None, float(kv.get("copy_tbps", 0)) or None


def report(out):
    env = open(os.path.join(out, "env.txt")).read().strip() if os.path.exists(os.path.join(out, "env.txt")) else "(no env stage)"
    print("# onnxc on the GPU: bench/gpu/check.sh\n\n```\n" + env + "\n```\n")
    skipped = os.path.join(out, "skipped.txt")
    if os.path.exists(skipped) and open(skipped).read().strip():
        print("## Not run\n\n```\n" + open(skipped).read().strip() + "\n```\n")
    fp32, bw = read_ceilings(out)
    if fp32:
        print(f"Ceilings measured through torch: float32 product {fp32:.1f} TFLOP/s (8192³, TF32 off), "
              f"copy {bw:.2f} TB/s (read + write).\n")
    models = read_tsv(os.path.join(out, "models.tsv"))
    if models:
        ok = sum(1 for r in models if r[1] == "pass")
        print(f"## Bundled and fusion test models on --target cuda: {ok} of {len(models)} match their references\n")
        for r in models:
            if r[1] != "pass":
                print(f"- {r[0]}: {r[2] if len(r) > 2 else ''}")
        print()
    device = os.path.join(out, "device_io.txt")
    if os.path.exists(device):
        lines = open(device).read().strip().splitlines()
        verdict = lines[-1] if lines else "(no output)"
        print("## The C API with device pointers and a stream of the caller's (onnxc-device-io, encoder layer)\n\n"
              f"{verdict}\n\n```\n" + "\n".join(lines[:40]) + "\n```\n")
    diff = os.path.join(out, "conformance_diff.txt")
    if os.path.exists(diff):
        print("## ONNX 1.12 backend tests on --target cuda\n\n```\n" + open(diff).read().strip() + "\n```\n")
    bert = timings(os.path.join(out, "bert.tsv"), 2)
    if bert:
        print("## BERT-base-like encoder (12 × 768, float32), median latency in ms\n")
        table(bert, ["batch", "seq"], lambda key: bert_gflop(*key), fp32)
    profile = os.path.join(out, "bert_profile_onnxc.txt")
    if bert and os.path.exists(profile):
        # A CUDA library waits for the GPU after each step while profiled: these are GPU times.
        lines = open(profile).read().strip().splitlines()
        print("## Where BERT b8 s128's time goes on the GPU (onnxc bench --profile, first 30 lines)\n\n```\n"
              + "\n".join(lines[:30]) + "\n```\n")
    attn = timings(os.path.join(out, "attention.tsv"), 1)
    if attn:
        print("## Fused attention alone: softmax(Q·Kᵀ/8)·V, batch 1, 12 heads of 64, float32, median ms\n")
        table(attn, ["seq"], lambda key: 4 * H * key[0] ** 2 * DH / 1e9, fp32)
    forms = read_tsv(os.path.join(out, "attention_form.tsv"))
    if forms:
        # Which CUDA form each build compiled the fused attention to (check.sh reads its PTX).
        print("CUDA form of the fused attention: " +
              ", ".join(sorted({f"{r[0]} {r[2]}" for r in forms if len(r) >= 3})) + "\n")


def timings(path, nkeys):
    """{key tuple: {column: ms or error text}} from lines "column key.. median ..." (onnxc bench --tsv)."""
    out = {}
    for r in read_tsv(path):
        if len(r) < nkeys + 2:
            continue
        key = tuple(int(v) for v in r[1:1 + nkeys])
        cell = r[1 + nkeys]
        try:
            out.setdefault(key, {})[r[0]] = float(cell.split()[0])
        except ValueError:
            out.setdefault(key, {})[r[0]] = cell[:60]
    return out


def table(rows, key_names, gflop, fp32):
    """One row per key: each build's ms, torch's, the ratio to torch, and the best onnxc's rate."""
    cols = [c for c in ("onnxc-base", "onnxc", "torch") if any(c in v for v in rows.values())]
    head = key_names + [f"{c} ms" for c in cols] + ["onnxc / torch", "onnxc TFLOP/s", "of fp32 ceiling"]
    print("| " + " | ".join(head) + " |\n|" + " ---: |" * len(head))
    for key, v in sorted(rows.items()):
        o, t = v.get("onnxc"), v.get("torch")
        num = lambda x: isinstance(x, float)
        rate = gflop(key) / o if num(o) else None
        cells = [str(k) for k in key] + [f"{v[c]:.3f}" if num(v.get(c)) else str(v.get(c, "-")) for c in cols]
        cells += [f"{o / t:.2f}" if num(o) and num(t) else "-", f"{rate:.2f}" if rate else "-",
                  f"{rate / fp32:.0%}" if rate and fp32 else "-"]
        print("| " + " | ".join(cells) + " |")
    print()


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "conformance-diff":
        conformance_diff(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 3 and sys.argv[1] == "report":
        report(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
