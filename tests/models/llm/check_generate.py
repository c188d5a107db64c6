#!/usr/bin/python3
"""`onnxc generate --json` on a tiny decoder against the tokens torch's greedy loop generated
(expected.json, written with the model by gen_tiny_decoder.py or bench/llm_export.py): with the KV
cache kept in place (every past/present pair appended by onnxc.CacheAppend, no copy per token), and
with --copy-cache. Then `onnxc bench --keep-cache` times a decode step reading its past from the kept
cache (it checks that step's outputs against the same step without the cache itself).

    check_generate.py ONNXC MODEL_DIR
"""
import json
import subprocess
import sys

onnxc, model_dir = sys.argv[1], sys.argv[2]
expected = json.load(open(f"{model_dir}/expected.json"))
prompt = ",".join(str(t) for t in expected["prompt"])
pairs = expected.get("cache_pairs", 4)  # past/present pairs: stacked caches have fewer
for extra, in_place in (([], pairs), (["--copy-cache"], 0)):
    cmd = [onnxc, "generate", f"{model_dir}/model.onnx", "--prompt-ids", prompt,
           "--max-new-tokens", str(len(expected["tokens"])), "--json"] + extra
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    got = json.loads(out)
    for key in ("tokens", "prefill_tokens_per_s", "decode_tokens_per_s", "time_to_first_token_ms", "peak_rss_mib"):
        assert key in got, f"{' '.join(cmd)}: no '{key}' in {out}"
    assert got["tokens"] == expected["tokens"], f"{' '.join(cmd)}: tokens {got['tokens']}, torch {expected['tokens']}"
    assert got["cache_in_place"] == in_place and got["cache_in_place"] + got["cache_copied"] == pairs, out
    assert got["prefill_tokens_per_s"] > 0 and got["decode_tokens_per_s"] > 0 and got["peak_rss_mib"] > 0, out
    print(f"{' '.join(extra) or 'in place'}: the {len(got['tokens'])} greedy tokens match torch")

# A decode step timed as a generation loop runs it: past 7, one new token.
dims = {}
import onnx  # noqa: E402  (the model's own symbol names)
m = onnx.load(f"{model_dir}/model.onnx", load_external_data=False)
for v in m.graph.input:
    for d in v.type.tensor_type.shape.dim:
        if d.dim_param:
            s = d.dim_param.lower()
            dims[d.dim_param] = 1 if "batch" in s else 8 if "total" in s else 7 if "past" in s else 1
bench = subprocess.run([onnxc, "bench", f"{model_dir}/model.onnx", "--keep-cache", "--runs", "3", "--warmup", "1",
                        "--dims", ",".join(f"{k}={v}" for k, v in dims.items())], capture_output=True, text=True)
assert bench.returncode == 0 and "read in place from the kept cache" in bench.stdout, (bench.returncode, bench.stdout,
                                                                                      bench.stderr)
print("bench --keep-cache: a step reading the kept cache gives the outputs of the same step without it")

# A bad prompt is a usage error naming the option, not a crash.
bad = subprocess.run([onnxc, "generate", f"{model_dir}/model.onnx", "--prompt-ids", "1,x"], capture_output=True, text=True)
assert bad.returncode == 2 and "--prompt-ids" in bad.stderr, (bad.returncode, bad.stderr)
print("ok")
