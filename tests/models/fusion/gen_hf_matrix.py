#!/usr/bin/env python3
"""Exports the Hugging Face Transformers model matrix (tests/models/fusion/hf_<arch>_<exporter>/)
and writes hf_manifest.txt. Needs PyPI's torch 2.x, transformers 5.x and onnxscript (checked with
torch 2.15.0, transformers 5.23.0, onnxscript 0.7.2):

    python tests/models/fusion/gen_hf_matrix.py [--out DIR] [--only ARCH,...] [--manifest-only]

Each architecture is the real transformers class built from a tiny config (hidden 32, 4 heads,
2 layers, random weights from a fixed seed; no model hub), exported twice: by the TorchScript
exporter (`dynamo=False`, opset 17) and by the dynamo exporter (`dynamo=True`, its default opset),
with dynamic batch and sequence dims. Two test_data_set_K folders hold inputs and the framework's
own fp32 outputs. The expected fusion counts per (arch, exporter) are written by hand in ARCHS:
every attention block, norm and GELU of the architecture.
"""

import argparse
import copy
import os
import sys
import warnings

import numpy as np
import onnx
import torch
import transformers as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_fusion_models import randomize, write_tensor  # noqa: E402  (the same weights and data files)

VOCAB = 100
BASE = dict(vocab_size=VOCAB, hidden_size=32, num_attention_heads=4, num_hidden_layers=2,
            intermediate_size=64, max_position_embeddings=64)
LLM = dict(BASE, num_key_value_heads=2, rms_norm_eps=1e-6, tie_word_embeddings=False)


def pad_mask(b, s):
    """1 = keep, 0 = padded: row 1 has its last two positions padded (left rows full)."""
    m = np.ones((b, s), dtype=np.int64)
    if b > 1 and s > 2:
        m[1, -2:] = 0
    return m


class Hidden(torch.nn.Module):
    """The base model's last_hidden_state: input_ids and attention_mask in, one tensor out."""

    def __init__(self, model, mask=True):
        super().__init__()
        self.model, self.mask = model, mask

    def forward(self, input_ids, attention_mask):
        kw = dict(use_cache=False) if "use_cache" in self.model.forward.__code__.co_varnames else {}
        return self.model(input_ids=input_ids, attention_mask=attention_mask, **kw).last_hidden_state


class EncDec(torch.nn.Module):
    """An encoder-decoder's decoder output: source ids + mask, decoder ids."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        return self.model(input_ids=input_ids, attention_mask=attention_mask,
                          decoder_input_ids=decoder_input_ids, use_cache=False).last_hidden_state


class Pixels(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, pixel_values):
        return self.model(pixel_values=pixel_values).last_hidden_state


class WhisperEnc(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_features):
        return self.model(input_features=input_features).last_hidden_state


def text(rng, b, s):
    return [rng.randint(0, VOCAB, size=(b, s)).astype(np.int64), pad_mask(b, s)]


TEXT = dict(inputs=text, names=["input_ids", "attention_mask"],
            dyn={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}})


def causal_lm(cls_name, cfg_name, **extra):
    def make():
        cfg = getattr(tf, cfg_name)(**dict(LLM, **extra))
        return Hidden(getattr(tf, cls_name)(cfg))
    return make


# name: factory, inputs, counts (attention, layer_norm, rms_norm, gelu), the same for both exporters;
# ROTARY: RotaryEmbedding count (Q and K of each layer) of the architectures with rotary positions.
ARCHS = {
    "bert": dict(make=lambda: Hidden(tf.BertModel(tf.BertConfig(**BASE), add_pooling_layer=False)),
                 counts=(2, 5, 0, 2), **TEXT),
    "gpt2": dict(make=lambda: Hidden(tf.GPT2Model(tf.GPT2Config(vocab_size=VOCAB, n_embd=32, n_head=4, n_layer=2,
                                                                 n_positions=64))),
                 counts=(2, 5, 0, 2), **TEXT),
    "llama": dict(make=causal_lm("LlamaModel", "LlamaConfig"), counts=(2, 0, 5, 0), **TEXT),
    "qwen2": dict(make=causal_lm("Qwen2Model", "Qwen2Config"), counts=(2, 0, 5, 0), **TEXT),
    "mistral": dict(make=causal_lm("MistralModel", "MistralConfig", sliding_window=4), counts=(2, 0, 5, 0), **TEXT),
    "gemma2": dict(make=causal_lm("Gemma2Model", "Gemma2Config", head_dim=8, attn_logit_softcapping=50.0,
                                  final_logit_softcapping=None, sliding_window=4, query_pre_attn_scalar=8),
                   counts=(2, 0, 9, 2), **TEXT),
    "bloom": dict(make=lambda: Hidden(tf.BloomModel(tf.BloomConfig(vocab_size=VOCAB, hidden_size=32, n_head=4,
                                                                   n_layer=2))),
                  counts=(2, 6, 0, 2), **TEXT),
    "bart": dict(make=lambda: EncDec(tf.BartModel(tf.BartConfig(vocab_size=VOCAB, d_model=32, encoder_layers=1,
                                                                decoder_layers=1, encoder_attention_heads=4,
                                                                decoder_attention_heads=4, encoder_ffn_dim=64,
                                                                decoder_ffn_dim=64, max_position_embeddings=64))),
                 counts=(3, 7, 0, 2),
                 inputs=lambda r, b, s: text(r, b, s) + [r.randint(0, VOCAB, size=(b, s + 1)).astype(np.int64)],
                 names=["input_ids", "attention_mask", "decoder_input_ids"],
                 dyn=dict(TEXT["dyn"], decoder_input_ids={0: "batch", 1: "dec_seq"})),
    "t5": dict(make=lambda: EncDec(tf.T5Model(tf.T5Config(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=1,
                                                          num_decoder_layers=1, num_heads=4))),
               counts=(3, 0, 7, 0),
               inputs=lambda r, b, s: text(r, b, s) + [r.randint(0, VOCAB, size=(b, s + 1)).astype(np.int64)],
               names=["input_ids", "attention_mask", "decoder_input_ids"],
               dyn=dict(TEXT["dyn"], decoder_input_ids={0: "batch", 1: "dec_seq"})),
    "vit": dict(make=lambda: Pixels(tf.ViTModel(tf.ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                                             intermediate_size=64, image_size=16, patch_size=4),
                                                add_pooling_layer=False)),
                counts=(2, 5, 0, 2), inputs=lambda r, b, s: [r.standard_normal((b, 3, 16, 16)).astype(np.float32)],
                names=["pixel_values"], dyn={"pixel_values": {0: "batch"}}),
    "whisper_encoder": dict(
        make=lambda: WhisperEnc(tf.WhisperModel(tf.WhisperConfig(
            vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=1, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=8,
            max_source_positions=16, max_target_positions=16, pad_token_id=0, bos_token_id=1, eos_token_id=2,
            decoder_start_token_id=1)).get_encoder()),
        counts=(2, 5, 0, 4), inputs=lambda r, b, s: [r.standard_normal((b, 8, 32)).astype(np.float32)],
        names=["input_features"], dyn={"input_features": {0: "batch"}}),
}
def encoder(cls, cfg, **kw):
    return lambda: Hidden(getattr(tf, cls)(cfg(), **kw))


def pixels(cls, cfg, **kw):
    return lambda: Pixels(getattr(tf, cls)(cfg(), **kw))


IMAGE = dict(inputs=lambda r, b, s: [r.standard_normal((b, 3, 16, 16)).astype(np.float32)], names=["pixel_values"],
             dyn={"pixel_values": {0: "batch"}})
VISION = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=16,
              patch_size=4)
ARCHS.update({
    "roberta": dict(make=encoder("RobertaModel", lambda: tf.RobertaConfig(**dict(BASE, pad_token_id=1)),
                                 add_pooling_layer=False), counts=(2, 5, 0, 2), **TEXT),
    "distilbert": dict(make=encoder("DistilBertModel", lambda: tf.DistilBertConfig(
        vocab_size=VOCAB, dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=64)),
        counts=(2, 5, 0, 2), **TEXT),
    "albert": dict(make=encoder("AlbertModel", lambda: tf.AlbertConfig(**dict(BASE, embedding_size=16)),
                                add_pooling_layer=False), counts=(2, 5, 0, 2), **TEXT),
    "electra": dict(make=encoder("ElectraModel", lambda: tf.ElectraConfig(**dict(BASE, embedding_size=32))),
                    counts=(2, 5, 0, 2), **TEXT),
    "opt": dict(make=lambda: Hidden(tf.OPTModel(tf.OPTConfig(
        vocab_size=VOCAB, hidden_size=32, num_attention_heads=4, num_hidden_layers=2, ffn_dim=64,
        max_position_embeddings=64, word_embed_proj_dim=32))), counts=(2, 5, 0, 0), **TEXT),
    "gpt_neox": dict(make=lambda: Hidden(tf.GPTNeoXModel(tf.GPTNeoXConfig(**dict(BASE, rotary_pct=0.5)))),
                     counts=(2, 5, 0, 2), **TEXT),
    "falcon": dict(make=lambda: Hidden(tf.FalconModel(tf.FalconConfig(
        vocab_size=VOCAB, hidden_size=32, num_attention_heads=4, num_hidden_layers=2, num_kv_heads=1,
        new_decoder_architecture=False, multi_query=True, parallel_attn=True, bias=False, alibi=False))),
        counts=(2, 3, 0, 2), **TEXT),
    "qwen3": dict(make=causal_lm("Qwen3Model", "Qwen3Config", head_dim=8), counts=(2, 0, 9, 0), **TEXT),
    "phi3": dict(make=causal_lm("Phi3Model", "Phi3Config", pad_token_id=0), counts=(2, 0, 5, 0), **TEXT),
    "deit": dict(make=pixels("DeiTModel", lambda: tf.DeiTConfig(**VISION), add_pooling_layer=False),
                 counts=(2, 5, 0, 2), **IMAGE),
    "clip_text": dict(make=lambda: Hidden(tf.CLIPTextModel(tf.CLIPTextConfig(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        max_position_embeddings=64, projection_dim=32))), counts=(2, 5, 0, 0), **TEXT),
    "clip_vision": dict(make=pixels("CLIPVisionModel", lambda: tf.CLIPVisionConfig(**VISION)), counts=(2, 5, 0, 0),
                        **IMAGE),  # post_layernorm normalizes the pooled output only
    "siglip_vision": dict(make=pixels("SiglipVisionModel", lambda: tf.SiglipVisionConfig(**VISION)),
                          counts=(2, 5, 0, 2), **IMAGE),  # the pooling head is not in last_hidden_state
    "swin": dict(make=pixels("SwinModel", lambda: tf.SwinConfig(
        image_size=16, patch_size=2, embed_dim=16, depths=[2], num_heads=[2], window_size=4)),
        counts=(2, 6, 0, 2), **IMAGE),
})
class Seq2SeqFeatures(torch.nn.Module):
    """Whisper's whole encoder-decoder: log-mel features in, the decoder's hidden states out."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_features, decoder_input_ids, decoder_attention_mask):
        return self.model(input_features=input_features, decoder_input_ids=decoder_input_ids,
                          decoder_attention_mask=decoder_attention_mask, use_cache=False).last_hidden_state


class Audio(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_values):
        return self.model(input_values=input_values).last_hidden_state


def enc_dec(cls, cfg_cls, **extra):
    """A BART-family encoder-decoder (one layer each side) from its config class."""
    cfg = dict(vocab_size=VOCAB, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4,
               decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64,
               pad_token_id=1, decoder_start_token_id=2)
    return lambda: EncDec(getattr(tf, cls)(getattr(tf, cfg_cls)(**dict(cfg, **extra))))


ENC_DEC = dict(inputs=lambda r, b, s: text(r, b, s) + [r.randint(0, VOCAB, size=(b, s + 1)).astype(np.int64)],
               names=["input_ids", "attention_mask", "decoder_input_ids"],
               dyn=dict(TEXT["dyn"], decoder_input_ids={0: "batch", 1: "dec_seq"}))
WHISPER = dict(vocab_size=VOCAB, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4,
               decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=8,
               max_source_positions=16, max_target_positions=16, pad_token_id=0, bos_token_id=1, eos_token_id=2,
               decoder_start_token_id=1)
SAM = dict(hidden_size=32, output_channels=16, num_hidden_layers=2, num_attention_heads=4, num_channels=3,
           image_size=32, patch_size=4, mlp_dim=64, window_size=4, global_attn_indexes=[1], use_rel_pos=True,
           initializer_range=0.02)  # SAM's default, 1e-10, makes every patch alike: the output would be constant


def with_random(make, suffixes, scale):
    """make(), then the parameters whose names end in one of `suffixes` drawn from scale·N(0,1): tables a
    model starts at zero or near it (SAM's positions, DETR's object queries, input projection and attention projections,
    under which every query attends alike), so the position terms added to the scores or queries are not
    a zero the compiler could drop, nor the output a constant that hides an error."""
    def build():
        model = make()
        with torch.no_grad():
            for name, p in model.named_parameters():
                if name.endswith(suffixes):
                    p.copy_(scale * torch.randn(p.shape))
        return model
    return build


ARCHS.update({
    "mt5": dict(make=lambda: EncDec(tf.MT5Model(tf.MT5Config(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64,
                                                             num_layers=1, num_decoder_layers=1, num_heads=4))),
                counts=(3, 0, 7, 2), **ENC_DEC),  # gated-gelu feed-forward: one Gelu per layer
    "mbart": dict(make=enc_dec("MBartModel", "MBartConfig"), counts=(3, 9, 0, 2), **ENC_DEC),
    "marian": dict(make=enc_dec("MarianModel", "MarianConfig"), counts=(3, 5, 0, 2), **ENC_DEC),
    "whisper": dict(make=lambda: Seq2SeqFeatures(tf.WhisperModel(tf.WhisperConfig(**WHISPER))), counts=(3, 7, 0, 4),
                    inputs=lambda r, b, s: [r.standard_normal((b, 8, 32)).astype(np.float32),
                                            r.randint(0, VOCAB, size=(b, s)).astype(np.int64), pad_mask(b, s)],
                    names=["input_features", "decoder_input_ids", "decoder_attention_mask"],
                    dyn={"input_features": {0: "batch"}, "decoder_input_ids": {0: "batch", 1: "dec_seq"},
                         "decoder_attention_mask": {0: "batch", 1: "dec_seq"}}),
    "wav2vec2": dict(make=lambda: Audio(tf.Wav2Vec2Model(tf.Wav2Vec2Config(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, conv_dim=(16, 16),
        conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=8, num_conv_pos_embedding_groups=4,
        feat_extract_norm="group", do_stable_layer_norm=False, mask_time_prob=0.0))),
        counts=(2, 6, 0, 5), inputs=lambda r, b, s: [r.standard_normal((b, 40 * s)).astype(np.float32)],
        names=["input_values"], dyn={"input_values": {0: "batch", 1: "samples"}}),
    "sam_vision": dict(make=with_random(lambda: Pixels(tf.SamVisionModel(tf.SamVisionConfig(**SAM))),
                                         ("pos_embed", "rel_pos_h", "rel_pos_w"), 0.1), counts=(2, 6, 0, 2),
                       inputs=lambda r, b, s: [r.standard_normal((b, 3, 32, 32)).astype(np.float32)],
                       names=["pixel_values"], dyn={"pixel_values": {0: "batch"}}),
    "detr": dict(make=with_random(lambda: Pixels(tf.DetrModel(tf.DetrConfig(
        use_timm_backbone=False, use_pretrained_backbone=False,
        backbone_config=tf.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], layer_type="basic",
                                        out_features=["stage2"]),
        d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4,
        encoder_ffn_dim=64, decoder_ffn_dim=64, num_queries=5))),
        ("query_position_embeddings.weight", "input_projection.weight", "_proj.weight"), 0.3),
        counts=(3, 6, 0, 0),
        inputs=lambda r, b, s: [r.standard_normal((b, 3, 32, 32)).astype(np.float32)],
        names=["pixel_values"], dyn={"pixel_values": {0: "batch"}}),
    "gemma": dict(make=causal_lm("GemmaModel", "GemmaConfig", head_dim=8), counts=(2, 0, 5, 2), **TEXT),
    "gemma3": dict(make=causal_lm("Gemma3TextModel", "Gemma3TextConfig", head_dim=8, sliding_window=4,
                                  query_pre_attn_scalar=8, final_logit_softcapping=None,
                                  layer_types=["sliding_attention", "full_attention"]),
                   counts=(2, 0, 13, 2), **TEXT),
})


class WithPast(torch.nn.Module):
    """A decoder run on a key/value cache of `past` positions (DynamicCache built from the inputs):
    the new tokens' hidden states and the updated cache (present keys and values per layer)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, past_key_0, past_value_0, past_key_1, past_value_1):
        cache = tf.DynamicCache(config=self.model.config)
        cache.update(past_key_0, past_value_0, 0)
        cache.update(past_key_1, past_value_1, 1)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache, use_cache=True)
        layers = out.past_key_values.layers
        return (out.last_hidden_state, layers[0].keys, layers[0].values, layers[1].keys, layers[1].values)


PAST = 3
KV = [f"{kv}_{i}" for i in (0, 1) for kv in ("key", "value")]
ARCHS["llama_past"] = dict(
    make=lambda: WithPast(tf.LlamaModel(tf.LlamaConfig(**LLM))), counts=(2, 0, 5, 0),
    inputs=lambda r, b, s: [r.randint(0, VOCAB, size=(b, s)).astype(np.int64), pad_mask(b, s + PAST)]
    + [r.standard_normal((b, 2, PAST, 8)).astype(np.float32) for _ in KV],
    names=["input_ids", "attention_mask"] + [f"past_{n}" for n in KV],
    outputs=["last_hidden_state"] + [f"present_{n}" for n in KV],
    dyn=dict({"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"}},
             **{f"past_{n}": {0: "batch", 2: "past"} for n in KV}),
    out_dyn={f"present_{n}": {0: "batch", 2: "total"} for n in KV})
ROTARY = {a: 4 for a in ("llama", "llama_past", "qwen2", "mistral", "gemma2", "gpt_neox", "falcon", "qwen3", "phi3",
                         "gemma", "gemma3")}
EXPORTERS = {"ts": dict(dynamo=False, opset_version=17), "dynamo": dict(dynamo=True),
             "dynamo_fp16": dict(dynamo=True), "dynamo_op23": dict(dynamo=True, opset_version=23)}
# fp16 exports (the model in half precision, model.half()): the reference is the fp32 model's output
# rounded to fp16, compared at the tolerance TOL gives (fp16 keeps 11 bits).
FP16 = ("llama", "bert")
# opset 23 (dynamo=True, opset_version=23): the exporter writes Attention, RMSNormalization and
# RotaryEmbedding itself where it can.
OP23 = ("llama", "bert", "gemma2", "bloom", "t5", "phi3", "mt5", "whisper", "wav2vec2", "sam_vision", "detr", "gemma3")
TOL = {"dynamo_fp16": "2e-2,2e-2"}
DATA_SHAPES = [(2, 7), (1, 5)]
TRACE_SHAPE = (2, 6)


def generate(arch, spec, exporter, out_dir, seed):
    name = f"hf_{arch}_{exporter}"
    mdir = os.path.join(out_dir, name)
    os.makedirs(mdir, exist_ok=True)
    torch.manual_seed(seed)
    model = spec["make"]()
    randomize(model, torch.Generator().manual_seed(seed + 1))
    model.eval()
    exported = model
    if exporter.endswith("_fp16"):
        exported = copy.deepcopy(model).half()
    trace = tuple(torch.from_numpy(a) for a in spec["inputs"](np.random.RandomState(seed), *TRACE_SHAPE))
    path = os.path.join(mdir, "model.onnx")
    outputs = spec.get("outputs", ["last_hidden_state"])
    dyn = dict(spec["dyn"], last_hidden_state={0: "batch"} if spec["names"] in (["pixel_values"], ["input_features"])
               else {0: "batch", 1: "out_seq"})
    dyn.update(spec.get("out_dyn", {}))
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(exported, trace, path, input_names=spec["names"], output_names=outputs,
                          dynamic_axes=dyn, external_data=False, **EXPORTERS[exporter])
    m = onnx.load(path)
    # The dynamo exporter annotates every node and value with torch's stack trace and module path
    # (two thirds of the file): metadata, not graph; dropped to keep the committed files small.
    for item in [*m.graph.node, *m.graph.value_info, *m.graph.input, *m.graph.output, *m.graph.initializer]:
        del item.metadata_props[:]
    onnx.save(m, path)
    onnx.checker.check_model(m, full_check=True)
    graph_inputs = [i.name for i in m.graph.input]
    for k, (b, s) in enumerate(DATA_SHAPES):
        arrays = spec["inputs"](np.random.RandomState(seed * 10 + k), b, s)
        with torch.no_grad():
            outs = model(*[torch.from_numpy(a) for a in arrays])
        outs = [o.numpy() for o in (outs if isinstance(outs, tuple) else (outs,))]
        if exported is not model:
            outs = [o.astype(np.float16) for o in outs]
        assert all(np.isfinite(o).all() for o in outs), name
        ddir = os.path.join(mdir, f"test_data_set_{k}")
        os.makedirs(ddir, exist_ok=True)
        feeds = [(n, a) for n, a in zip(spec["names"], arrays) if n in graph_inputs]
        for i, (n, a) in enumerate(feeds):
            write_tensor(os.path.join(ddir, f"input_{i}.pb"), a, n)
        for j, (n, o) in enumerate(zip(outputs, outs)):
            write_tensor(os.path.join(ddir, f"output_{j}.pb"), o, n)
    opset = next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
    return name, opset, os.path.getsize(path)


HEADER = """\
# Hugging Face Transformers model matrix (generated by gen_hf_matrix.py with PyPI torch {torch},
# transformers {tf}; counts written by hand in ARCHS). Columns as in manifest.txt, plus `rotary`:
# RotaryEmbedding nodes after `onnxc optimize` (fuse_rotary). fusion_test.sh reads both files.
# `_ts`: torch.onnx.export(dynamo=False, opset 17); `_dynamo`: dynamo=True (its default, opset 20);
# `_dynamo_fp16`: the half-precision model, against the fp32 model's outputs at rtol,atol;
# `_dynamo_op23`: dynamo=True, opset_version=23 (native Attention/RMSNormalization/RotaryEmbedding count).
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--only", default="")
    ap.add_argument("--exporters", default="ts,dynamo,dynamo_fp16,dynamo_op23")
    ap.add_argument("--manifest-only", action="store_true", help="rewrite hf_manifest.txt, export nothing")
    args = ap.parse_args()
    torch.set_num_threads(1)
    only = set(filter(None, args.only.split(",")))
    rows = []
    for ai, (arch, spec) in enumerate(ARCHS.items()):
        for exporter in args.exporters.split(","):
            if (only and arch not in only) or (exporter.endswith("_fp16") and arch not in FP16) or \
                    (exporter.endswith("_op23") and arch not in OP23):
                continue
            name = f"hf_{arch}_{exporter}"
            if not args.manifest_only:
                try:
                    name, opset, size = generate(arch, spec, exporter, args.out, seed=2000 + 31 * ai)
                except Exception as e:  # report and go on: the matrix says which exports fail
                    print(f"FAILED {name}: {type(e).__name__}: {str(e).splitlines()[0][:300]}")
                    continue
                print(f"wrote {name} (opset {opset}, {size} bytes)")
            a, ln, rms, gelu = spec["counts"]
            rows.append(f"{name:32} {a:9} {ln:10} {rms:8} {gelu:4}  {'sdpa':15} {'-':5} {ROTARY.get(arch, 0):6} "
                        f"{TOL.get(exporter, '1e-4,1e-5')}")
    path = os.path.join(args.out, "hf_manifest.txt")
    if only and os.path.exists(path):  # keep the rows of the models not regenerated
        done = {r.split()[0] for r in rows}
        rows = [l.rstrip("\n") for l in open(path) if l[:3] == "hf_" and l.split()[0] not in done] + rows
    with open(path, "w") as f:
        f.write(HEADER.format(torch=torch.__version__.split("+")[0], tf=tf.__version__))
        f.write(f"# {'model':30} attention layer_norm rms_norm gelu  {'form':15} needs rotary rtol,atol\n")
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    sys.exit(main())
