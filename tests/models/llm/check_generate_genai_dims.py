#!/usr/bin/python3
"""`onnxc generate` on a past declared the way ONNX Runtime GenAI's model builder declares it:
[batch_size, kv_heads, past_sequence_length, kv_cache_dim], the head size a symbol too. The tiny
llama's past/present are renamed so (nothing else changes); generate must say which symbol it needs
without --dims, and with --dims kv_cache_dim=16 give torch's greedy tokens.

    check_generate_genai_dims.py ONNXC MODEL_DIR
"""
import json
import subprocess
import sys
import tempfile

import onnx

onnxc, model_dir = sys.argv[1], sys.argv[2]
expected = json.load(open(f"{model_dir}/expected.json"))
m = onnx.load(f"{model_dir}/model.onnx")
renamed = 0
for v in list(m.graph.input) + list(m.graph.output):
    if not (v.name.startswith("past_key_values.") or v.name.startswith("present.")):
        continue
    dims = v.type.tensor_type.shape.dim
    assert len(dims) == 4, v.name
    if v.name.startswith("past"):
        dims[2].dim_param = "past_sequence_length"
    dims[3].Clear()
    dims[3].dim_param = "kv_cache_dim"
    renamed += 1
assert renamed == 8, renamed
with tempfile.TemporaryDirectory() as d:
    path = f"{d}/model.onnx"
    onnx.save(m, path)
    base = [onnxc, "generate", path, "--prompt-ids", ",".join(str(t) for t in expected["prompt"]),
            "--max-new-tokens", str(len(expected["tokens"])), "--json"]
    r = subprocess.run(base, capture_output=True, text=True)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "'past_sequence_length' is the past length" in r.stderr and "--dims kv_cache_dim=N" in r.stderr, r.stderr
    print("without --dims:", r.stderr.strip())
    out = subprocess.run(base + ["--dims", "kv_cache_dim=16"], check=True, capture_output=True, text=True).stdout
    got = json.loads(out)
    assert got["tokens"] == expected["tokens"], f"tokens {got['tokens']}, torch {expected['tokens']}"
    print(f"--dims kv_cache_dim=16: the {len(got['tokens'])} greedy tokens match torch ({got['cache_in_place']} in place)")
