"""Builds the LLaMA-architecture decoder of the language-model benchmark (bench/llm_bench.sh) with
random weights, saves the checkpoint and exports it to ONNX with a key/value cache.

    llm_export.py OUT_DIR [--layers N] [--hidden N] [--heads N] [--kv-heads N] [--ffn N] [--vocab N]
                          [--check-tokens N]

Needs PyPI torch and transformers (`/work/venv` in this project; pinned in bench/peers/requirements-llm.txt).
Writes under OUT_DIR (never committed: a gitignored folder such as build/llm):
  hf/              the checkpoint (config.json, safetensors) and a word-level tokenizer of the ids,
                   what ONNX Runtime GenAI's model builder reads
  fp32/model.onnx  torch.onnx.export (TorchScript exporter, opset 17), weights in model.onnx.data;
                   inputs input_ids [batch, seq], attention_mask [batch, total], position_ids
                   [batch, seq], past_key_values.N.key/value [batch, kv_heads, past, head_dim];
                   outputs logits [batch, seq, vocab] and present.N.key/value (what optimum names)
  torch_tokens.json  with --check-tokens N: torch's greedy tokens for a fixed prompt (its own
                   DynamicCache loop), for `onnxc generate` to be compared with
The default size is about 0.43 B parameters (24 layers, hidden 1024, 16 heads over 4 key/value
heads, SiLU MLP of 4096, vocabulary 32000; RMSNorm, rotary positions), 1.7 GB in float32.
"""
import argparse
import json
import os
import time
import warnings

import torch
import transformers as tf


class WithPast(torch.nn.Module):
    """One call of the decoder on a cache of `past` positions given as tensors: the logits and the
    cache with the new positions appended (per layer)."""

    def __init__(self, model, layers):
        super().__init__()
        self.model, self.layers = model, layers

    def forward(self, input_ids, attention_mask, position_ids, *past):
        cache = tf.DynamicCache(config=self.model.config)
        for i in range(self.layers):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                         past_key_values=cache, use_cache=True)
        presents = []
        for layer in out.past_key_values.layers:
            presents += [layer.keys, layer.values]
        return (out.logits, *presents)


def save_tokenizer(path, vocab):
    """A word-level tokenizer over the ids ("t0" .. "tN"): ONNX Runtime GenAI's builder wants one."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    tok = Tokenizer(models.WordLevel({f"t{i}": i for i in range(vocab)}, unk_token="t0"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tf.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="t0", bos_token="t1", eos_token="t2").save_pretrained(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=4096)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--check-tokens", type=int, default=0)
    ap.add_argument("--prompt-len", type=int, default=16)
    ap.add_argument("--init-std", type=float, default=0.02, help="weights ~ N(0, std) (transformers' initializer_range)")
    o = ap.parse_args()
    torch.manual_seed(o.seed)
    cfg = tf.LlamaConfig(vocab_size=o.vocab, hidden_size=o.hidden, intermediate_size=o.ffn,
                         num_hidden_layers=o.layers, num_attention_heads=o.heads, num_key_value_heads=o.kv_heads,
                         max_position_embeddings=4096, rms_norm_eps=1e-5, tie_word_embeddings=False,
                         bos_token_id=1, eos_token_id=2, initializer_range=o.init_std)
    model = tf.LlamaForCausalLM(cfg).eval()
    n_params = sum(p.numel() for p in model.parameters())
    t0 = time.time()
    model.save_pretrained(os.path.join(o.out, "hf"), safe_serialization=True)
    save_tokenizer(os.path.join(o.out, "hf"), o.vocab)
    print(f"checkpoint: {n_params / 1e6:.0f} M parameters in {time.time() - t0:.0f} s")

    hd = o.hidden // o.heads
    b, s, past = 1, 4, 3
    ids = torch.randint(3, o.vocab, (b, s))
    mask = torch.ones(b, past + s, dtype=torch.int64)
    pos = torch.arange(past, past + s).unsqueeze(0)
    pasts = [torch.randn(b, o.kv_heads, past, hd) for _ in range(2 * o.layers)]
    names = ["input_ids", "attention_mask", "position_ids"]
    outs = ["logits"]
    dyn = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"},
           "position_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
    for i in range(o.layers):
        for kv in ("key", "value"):
            names.append(f"past_key_values.{i}.{kv}")
            outs.append(f"present.{i}.{kv}")
            dyn[names[-1]] = {0: "batch", 2: "past"}
            dyn[outs[-1]] = {0: "batch", 2: "total"}
    path = os.path.join(o.out, "fp32", "model.onnx")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    t0 = time.time()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(WithPast(model, o.layers), (ids, mask, pos, *pasts), path, input_names=names,
                          output_names=outs, dynamic_axes=dyn, opset_version=17, dynamo=False, external_data=True)
    print(f"export: {path} in {time.time() - t0:.0f} s")

    if o.check_tokens:
        # torch's own greedy loop (its DynamicCache), on a fixed prompt.
        prompt = torch.randint(3, o.vocab, (1, o.prompt_len), generator=torch.Generator().manual_seed(o.seed + 7))
        with torch.no_grad():
            got = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=o.check_tokens,
                                 do_sample=False, min_new_tokens=o.check_tokens, eos_token_id=None, pad_token_id=0,
                                 output_scores=True, return_dict_in_generate=True)
        new = got.sequences[0, o.prompt_len:].tolist()
        # How far the chosen token's logit is above the next one, per step: a comparison of greedy
        # tokens across machines needs a margin well above float32 rounding.
        gaps = [float(s[0].topk(2).values[0] - s[0].topk(2).values[1]) for s in got.scores]
        print(f"smallest top-1 margin: {min(gaps):.3g}")
        with open(os.path.join(o.out, "torch_tokens.json"), "w") as f:
            json.dump({"prompt": prompt[0].tolist(), "tokens": new, "min_margin": min(gaps),
                       "torch": torch.__version__, "transformers": tf.__version__}, f)
        print(f"torch greedy: {len(new)} tokens")


if __name__ == "__main__":
    main()
