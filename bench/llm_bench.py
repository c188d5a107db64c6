"""The language-model benchmark: a LLaMA-architecture decoder (bench/llm_export.py, random weights)
generating greedily, prefill of PROMPT tokens then NEW decode steps, by onnxc and by ONNX Runtime,
each decode row also as a fraction of its memory-bandwidth roofline.

    llm_bench.py DIR --onnxc build/tools/onnxc --triad build/bench/triad [--threads 2] [--prompt 128]
                 [--new 64] [--rounds 2] [--rows onnxc_fp32,onnxc_int4,ort_fp32,ort_int4,genai_int4]
                 [--ort-no-spin]

DIR is llm_export.py's folder (fp32/model.onnx, hf/, and genai_int4/ when ONNX Runtime GenAI's
model builder wrote it). Rows:
  onnxc_fp32   `onnxc generate --json` on the float32 export (KV cache kept in place)
  onnxc_int4   the same compiled with `--quantize int4-weights` (block 32, asymmetric)
  ort_fp32     ONNX Runtime on the float32 export, a Python greedy loop with I/O binding: each step
               binds the previous step's present OrtValues as its pasts and lets ONNX Runtime
               allocate the new presents (no numpy copies of the cache), logits read back for argmax
  ort_int4     the same loop on the MatMulNBits model `onnxc optimize --quantize int4-weights` writes
               (the weights onnxc_int4 runs)
  onnxc_int4acc  `--quantize int4-weights:acc=int8` (accuracy_level 4, as GenAI's builder writes for
               CPUs: a decode step quantizes A to int8 per block and multiplies the codes in integers)
  ort_int4acc  ONNX Runtime's loop on the MatMulNBits model `onnxc optimize` writes with :acc=int8
  genai_int4   ONNX Runtime GenAI's generator on its model builder's int4 model of the same checkpoint
  onnxc_genai  `onnxc generate` on that same GenAI model (its MatMulNBits, accuracy_level 4, and
               GroupQueryAttention; --dims kv_cache_dim=head_size from genai_config.json): the
               same-model comparison with genai_int4
Each row runs in its own process (peak RSS is its own), ROUNDS times alternating; the table shows
medians. CPU ms/step is the process's CPU time per decode step (all its threads, spinning included). Decode tokens/s counts the NEW steps after the first token; the roofline is the weight bytes
a step reads (every initializer but the embedding table, of which a step gathers one row) over the
triad bandwidth measured in the same run (before and after the rows; the higher of the two). Needs onnxruntime (and onnxruntime-genai for its row) in
this Python: bench/peers/requirements-llm.txt pins them.
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
from bench_peer import ort_runner  # noqa: E402  the session options every ORT row uses


def prompt_ids(n, vocab):
    """The prompt: n token ids drawn with a fixed seed (the weights are random: any ids will do)."""
    return [int(t) for t in np.random.default_rng(7).integers(3, vocab, size=n)]


# ---- engines, each run in a child process: print one JSON object ----

def ort_loop(sess, prompt, new):
    """Greedy generation with ONNX Runtime: prefill, then one token per step, I/O binding throughout."""
    ins = {i.name: i for i in sess.get_inputs()}
    pasts = [n for n in ins if n.startswith("past_key_values.")]
    presents = {p: "present." + p[len("past_key_values."):] for p in pasts}
    kv = ins[pasts[0]].shape  # [batch, kv_heads, past, head_dim]
    binding = sess.io_binding()
    tokens, step, total = [], list(prompt), 0
    prefill_s = decode_s = 0.0
    prev = None
    decode_cpu = 0.0
    for t in range(new + 1):
        s = len(step)
        t0, c0 = time.perf_counter(), time.process_time()
        binding.bind_cpu_input("input_ids", np.array([step], dtype=np.int64))
        binding.bind_cpu_input("attention_mask", np.ones((1, total + s), dtype=np.int64))
        binding.bind_cpu_input("position_ids", np.arange(total, total + s, dtype=np.int64)[None])
        for p in pasts:
            if prev is None:
                binding.bind_cpu_input(p, np.zeros((1, kv[1], 0, kv[3]), dtype=np.float32))
            else:
                binding.bind_ortvalue_input(p, prev[presents[p]])
        for o in sess.get_outputs():
            binding.bind_output(o.name, "cpu")
        sess.run_with_iobinding(binding)
        outs = dict(zip([o.name for o in sess.get_outputs()], binding.get_outputs()))
        logits = outs["logits"].numpy()
        nxt = int(np.argmax(logits[0, -1]))
        dt = time.perf_counter() - t0
        if t == 0:
            prefill_s = dt
        else:
            decode_s += dt
            decode_cpu += time.process_time() - c0
        prev = outs
        tokens.append(nxt)
        total += s
        step = [nxt]
    return dict(tokens=tokens[:new + 1], prefill_tokens_per_s=len(prompt) / prefill_s,
                decode_tokens_per_s=new / decode_s, time_to_first_token_ms=prefill_s * 1e3,
                decode_cpu_ms_per_step=decode_cpu * 1e3 / new)


def genai_model(model_dir, threads):
    import onnxruntime_genai as og
    cfg = og.Config(model_dir)
    cfg.clear_providers()
    cfg.overlay(json.dumps({"model": {"decoder": {"session_options": {"intra_op_num_threads": threads,
                                                                       "inter_op_num_threads": 1}}}}))
    return og.Model(cfg)


def genai_loop(model, prompt, new):
    import onnxruntime_genai as og
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=len(prompt) + new + 1, min_length=len(prompt) + new + 1)
    gen = og.Generator(model, params)
    t0 = time.perf_counter()
    gen.append_tokens(np.array([prompt], dtype=np.int32))
    gen.generate_next_token()
    tokens = [int(gen.get_next_tokens()[0])]
    prefill_s = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(new):
        gen.generate_next_token()
        tokens.append(int(gen.get_next_tokens()[0]))
    decode_s = time.perf_counter() - t0
    return dict(tokens=tokens, prefill_tokens_per_s=len(prompt) / prefill_s, decode_tokens_per_s=new / decode_s,
                time_to_first_token_ms=prefill_s * 1e3, decode_cpu_ms_per_step=(time.process_time() - c0) * 1e3 / new)


def peak_rss_mib():
    """This process's RSS high-water mark (VmHWM: its own memory since exec, unlike ru_maxrss, which a
    child inherits from the process that forked it)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(o):
    prompt = prompt_ids(o.prompt, o.vocab)
    # One short generation first (4 tokens, 2 steps), untimed: the first runs of a session allocate.
    if o.child == "ort":
        sess = ort_runner(o.model, o.threads, not o.ort_no_spin)[2]
        ort_loop(sess, prompt[:4], 2)
        r = ort_loop(sess, prompt, o.new)
    else:
        model = genai_model(o.model, o.threads)
        genai_loop(model, prompt[:4], 2)
        r = genai_loop(model, prompt, o.new)
    r["peak_rss_mib"] = peak_rss_mib()
    print(json.dumps(r))


# ---- the parent: builds what the rows need, runs them, prints the table ----

def weight_bytes(model):
    """Bytes of the initializers a decode step reads: all but the tables Gather indexes (the embedding)."""
    import onnx
    m = onnx.load(model, load_external_data=False)
    gathered = {n.input[0] for n in m.graph.node if n.op_type == "Gather"}
    total = 0
    for t in m.graph.initializer:
        if t.name in gathered:
            continue
        n = int(np.prod(t.dims)) if len(t.dims) else 1
        bits = {1: 32, 10: 16, 16: 16, 2: 8, 3: 8, 22: 4, 21: 4, 6: 32, 7: 64}.get(t.data_type, 32)
        total += n * bits // 8
    return total


def run_json(cmd, env=None):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--onnxc", default="build/tools/onnxc")
    ap.add_argument("--triad", default="build/bench/triad")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--new", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--rows", default="onnxc_fp32,onnxc_int4,ort_fp32,ort_int4,genai_int4")
    ap.add_argument("--child", choices=["ort", "genai"])
    ap.add_argument("--model")
    ap.add_argument("--libs", help="where compiled libraries go (default DIR/lib)")
    ap.add_argument("--vocab", type=int, default=0)
    ap.add_argument("--ort-no-spin", action="store_true",
                    help="ONNX Runtime's worker threads sleep instead of spinning (its better setting on a shared machine)")
    o = ap.parse_args()
    if o.child:
        return child(o)

    d = o.dir
    fp32 = os.path.join(d, "fp32", "model.onnx")
    rows = o.rows.split(",")
    libs = o.libs or os.path.join(d, "lib")
    cmds, roof_bytes = {}, {}
    with open(os.path.join(d, "hf", "config.json")) as f:
        vocab = json.load(f)["vocab_size"]
    prompt = ",".join(map(str, prompt_ids(o.prompt, vocab)))

    def onnxc_row(name, extra, src=fp32, gen_extra=()):
        lib = os.path.join(libs, name, f"lib{name}.so")
        if not os.path.exists(lib):
            t0 = time.time()
            subprocess.run([o.onnxc, "compile", src, "-o", os.path.dirname(lib), "--name", name, "-q", *extra],
                           check=True)
            print(f"compiled {name} in {time.time() - t0:.0f} s", file=sys.stderr)
        cmds[name] = [o.onnxc, "generate", lib, "--prompt-ids", prompt, "--max-new-tokens", str(o.new + 1),
                      "--threads", str(o.threads), "--json", *gen_extra]

    int4_onnx = os.path.join(d, "int4_onnxc", "model.onnx")
    if "onnxc_fp32" in rows:
        onnxc_row("onnxc_fp32", [])
        roof_bytes["onnxc_fp32"] = weight_bytes(fp32)
    if "onnxc_int4" in rows or "ort_int4" in rows:
        if not os.path.exists(int4_onnx):
            os.makedirs(os.path.dirname(int4_onnx), exist_ok=True)
            subprocess.run([o.onnxc, "optimize", fp32, "-o", int4_onnx, "--quantize", "int4-weights"], check=True)
    if "onnxc_int4" in rows:
        onnxc_row("onnxc_int4", ["--quantize", "int4-weights"])
        roof_bytes["onnxc_int4"] = weight_bytes(int4_onnx)
    acc_onnx = os.path.join(d, "int4acc_onnxc", "model.onnx")
    if ("ort_int4acc" in rows or "onnxc_int4acc" in rows) and not os.path.exists(acc_onnx):
        os.makedirs(os.path.dirname(acc_onnx), exist_ok=True)
        subprocess.run([o.onnxc, "optimize", fp32, "-o", acc_onnx, "--quantize", "int4-weights:acc=int8"], check=True)
    if "onnxc_int4acc" in rows:
        onnxc_row("onnxc_int4acc", ["--quantize", "int4-weights:acc=int8"])
        roof_bytes["onnxc_int4acc"] = weight_bytes(acc_onnx)
    me = [sys.executable, os.path.abspath(__file__), d, "--threads", str(o.threads), "--prompt", str(o.prompt),
          "--new", str(o.new), "--vocab", str(vocab)] + (["--ort-no-spin"] if o.ort_no_spin else [])
    if "ort_fp32" in rows:
        cmds["ort_fp32"] = me + ["--child", "ort", "--model", fp32]
        roof_bytes["ort_fp32"] = weight_bytes(fp32)
    if "ort_int4" in rows:
        cmds["ort_int4"] = me + ["--child", "ort", "--model", int4_onnx]
        roof_bytes["ort_int4"] = weight_bytes(int4_onnx)
    if "ort_int4acc" in rows:
        cmds["ort_int4acc"] = me + ["--child", "ort", "--model", acc_onnx]
        roof_bytes["ort_int4acc"] = weight_bytes(acc_onnx)
    genai = os.path.join(d, "genai_int4")
    if "onnxc_genai" in rows and os.path.exists(os.path.join(genai, "genai_config.json")):
        with open(os.path.join(genai, "genai_config.json")) as f:
            head = json.load(f)["model"]["decoder"]["head_size"]
        onnxc_row("onnxc_genai", ["--allow-external-path", genai], os.path.join(genai, "model.onnx"),
                  ["--dims", f"kv_cache_dim={head}"])
        roof_bytes["onnxc_genai"] = weight_bytes(os.path.join(genai, "model.onnx"))
    if "genai_int4" in rows:
        if os.path.exists(os.path.join(genai, "genai_config.json")):
            cmds["genai_int4"] = me + ["--child", "genai", "--model", genai]
            roof_bytes["genai_int4"] = weight_bytes(os.path.join(genai, "model.onnx"))
        else:
            print(f"genai_int4: skipped, no {genai}/genai_config.json (run ONNX Runtime GenAI's builder: "
                  "see bench/llm_bench.sh)", file=sys.stderr)

    tri = subprocess.run([o.triad, str(o.threads), "256", "9"], check=True, capture_output=True, text=True).stdout
    bw = float(re.search(r"median ([0-9.]+) GB/s", tri).group(1))
    load0 = open("/proc/loadavg").read().split()[:3]
    results = {k: [] for k in cmds}
    for _ in range(o.rounds):
        for k, cmd in cmds.items():
            results[k].append(run_json(cmd))
    tri2 = subprocess.run([o.triad, str(o.threads), "256", "9"], check=True, capture_output=True, text=True).stdout
    bw2 = float(re.search(r"median ([0-9.]+) GB/s", tri2).group(1))
    load1 = open("/proc/loadavg").read().split()[:3]

    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores; {o.threads} threads; "
          f"prompt {o.prompt}, {o.new} decode steps; triad {bw:.1f} GB/s before, {bw2:.1f} after; "
          f"load {' '.join(load0)} -> {' '.join(load1)}")
    print(f"{'row':<12} {'prefill tok/s':>13} {'decode tok/s':>12} {'ms/step':>8} {'CPU ms/step':>11} {'TTFT ms':>8} {'peak MiB':>9} "
          f"{'weights MiB':>11} {'roofline':>8} {'same tokens as onnxc':>20}")
    bwm = max(bw, bw2)  # the better figure: a fraction of it is not flattered by a busy moment
    for k, rs in results.items():
        pre = statistics.median(r["prefill_tokens_per_s"] for r in rs)
        dec = statistics.median(r["decode_tokens_per_s"] for r in rs)
        ttft = statistics.median(r["time_to_first_token_ms"] for r in rs)
        cpu = statistics.median(r.get("decode_cpu_ms_per_step", float("nan")) for r in rs)
        rss = max(r["peak_rss_mib"] for r in rs)
        wb = roof_bytes[k]
        frac = (wb / 1e9 * dec) / bwm
        ref = results.get("onnxc_" + k.split("_")[-1], [{}])[0].get("tokens")
        same = "-" if ref is None else ("yes" if rs[0]["tokens"][:o.new + 1] == ref[:o.new + 1] else
                                        f"{sum(a == b for a, b in zip(rs[0]['tokens'], ref))}/{len(ref)}")
        print(f"{k:<12} {pre:>13.1f} {dec:>12.2f} {1e3 / dec:>8.1f} {cpu:>11.1f} {ttft:>8.0f} {rss:>9.0f} {wb / 2**20:>11.0f} "
              f"{frac:>7.0%} {same:>20}")
    # Greedy tokens of every row against float32's and GenAI's (how far int4 moved the choices).
    for ref_row in ("onnxc_fp32", "genai_int4"):
        if ref_row in results:
            ref = results[ref_row][0]["tokens"]
            agree = ", ".join(f"{k} {sum(a == b for a, b in zip(rs[0]['tokens'], ref))}/{len(ref)}"
                              for k, rs in results.items() if k != ref_row)
            print(f"greedy tokens equal to {ref_row}'s: {agree}")
    print("roofline: weight bytes per step x decode tokens/s / the higher triad figure; same tokens: the greedy\n"
          "tokens against onnxc's row of the same precision (genai_int4 quantizes its own way)")


if __name__ == "__main__":
    main()
