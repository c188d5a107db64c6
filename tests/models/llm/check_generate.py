#!/usr/bin/python3
"""`onnxc generate --json` on the tiny decoder against the tokens torch's greedy loop generated
(expected.json, written with the model by gen_tiny_decoder.py): with the KV cache kept in place
(every past/present pair appended by onnxc.CacheAppend, no copy per token), and with --copy-cache.

    check_generate.py ONNXC MODEL_DIR
"""
import json
import subprocess
import sys

onnxc, model_dir = sys.argv[1], sys.argv[2]
expected = json.load(open(f"{model_dir}/expected.json"))
prompt = ",".join(str(t) for t in expected["prompt"])
for extra, in_place in (([], 4), (["--copy-cache"], 0)):
    cmd = [onnxc, "generate", f"{model_dir}/model.onnx", "--prompt-ids", prompt,
           "--max-new-tokens", str(len(expected["tokens"])), "--json"] + extra
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    got = json.loads(out)
    for key in ("tokens", "prefill_tokens_per_s", "decode_tokens_per_s", "time_to_first_token_ms", "peak_rss_mib"):
        assert key in got, f"{' '.join(cmd)}: no '{key}' in {out}"
    assert got["tokens"] == expected["tokens"], f"{' '.join(cmd)}: tokens {got['tokens']}, torch {expected['tokens']}"
    assert got["cache_in_place"] == in_place and got["cache_in_place"] + got["cache_copied"] == 4, out
    assert got["prefill_tokens_per_s"] > 0 and got["decode_tokens_per_s"] > 0 and got["peak_rss_mib"] > 0, out
    print(f"{' '.join(extra) or 'in place'}: the {len(got['tokens'])} greedy tokens match torch")

# A bad prompt is a usage error naming the option, not a crash.
bad = subprocess.run([onnxc, "generate", f"{model_dir}/model.onnx", "--prompt-ids", "1,x"], capture_output=True, text=True)
assert bad.returncode == 2 and "--prompt-ids" in bad.stderr, (bad.returncode, bad.stderr)
print("ok")
