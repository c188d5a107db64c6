"""Tiny transformer and attention modules, each written the way its family's own code writes it
(HF BERT/DistilBERT/GPT-2/LLaMA/T5/Whisper/BART, torch nn.Transformer*); vision transformers are in
families_vision.py, the classic seq2seq attentions in families_seq2seq.py. Written for this test suite;
the spelling of each op follows the family so the exported graphs look like real exports.
Sizes: d_model 32, 4 heads of 8, feed-forward 64, vocabulary 50.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

D, H, HD, FF, VOCAB = 32, 4, 8, 64, 50
FMIN = torch.finfo(torch.float32).min


# ---------------------------------------------------------------- torch nn.Transformer*

class TorchEncoder(nn.Module):
    """nn.TransformerEncoder with a key padding mask (bool, True = padded); pre-LN adds a causal
    mask from nn.Transformer.generate_square_subsequent_mask and a final norm."""

    def __init__(self, norm_first):
        super().__init__()
        act = "gelu" if norm_first else "relu"
        layer = nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, activation=act, batch_first=True,
                                           norm_first=norm_first)
        self.causal = norm_first
        self.enc = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(D) if norm_first else None,
                                         enable_nested_tensor=False)

    def forward(self, src, pad):
        mask = nn.Transformer.generate_square_subsequent_mask(src.size(1)) if self.causal else None
        return self.enc(src, mask=mask, src_key_padding_mask=pad)


class TorchDecoder(nn.Module):
    """nn.TransformerDecoder, post-LN: causal self-attention and cross-attention to a padded memory."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, activation="gelu", batch_first=True)
        self.dec = nn.TransformerDecoder(layer, num_layers=1)

    def forward(self, tgt, memory, memory_pad):
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.size(1))
        return self.dec(tgt, memory, tgt_mask=mask, memory_key_padding_mask=memory_pad)


# ---------------------------------------------------------------- the extended-mask repro

class MaskedPositionBias(nn.Module):
    """A learned position bias sliced to the length plus HF's extended mask (1 - m)·finfo.min: where
    the mask is 1 the bias must come through unchanged (issue 6's silent-wrong-answer repro)."""

    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(1, 4, 64, 64))

    def forward(self, attention_mask):
        seq = attention_mask.size(1)
        ext = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
        return self.bias[:, :, :seq, :seq] + ext


# ---------------------------------------------------------------- HF BERT

class BertSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.query, self.key, self.value = nn.Linear(D, D), nn.Linear(D, D), nn.Linear(D, D)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (H, HD)
        return x.view(new_x_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        q = self.transpose_for_scores(self.query(hidden_states))
        k = self.transpose_for_scores(self.key(hidden_states))
        v = self.transpose_for_scores(self.value(hidden_states))
        scores = torch.matmul(q, k.transpose(-1, -2))
        scores = scores / math.sqrt(HD)
        scores = scores + attention_mask
        probs = nn.functional.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v)
        ctx = ctx.permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size()[:-2] + (D,))


class BertLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = BertSelfAttention()
        self.attn_out, self.attn_ln = nn.Linear(D, D), nn.LayerNorm(D, eps=1e-12)
        self.intermediate, self.output, self.out_ln = nn.Linear(D, FF), nn.Linear(FF, D), nn.LayerNorm(D, eps=1e-12)

    def forward(self, x, mask):
        a = self.attn_ln(self.attn_out(self.attention(x, mask)) + x)
        return self.out_ln(self.output(F.gelu(self.intermediate(a))) + a)


class Bert(nn.Module):
    def __init__(self):
        super().__init__()
        self.word, self.pos, self.token_type = nn.Embedding(VOCAB, D), nn.Embedding(64, D), nn.Embedding(2, D)
        self.ln = nn.LayerNorm(D, eps=1e-12)
        self.register_buffer("position_ids", torch.arange(64).expand((1, -1)))
        self.register_buffer("token_type_ids", torch.zeros((1, 64), dtype=torch.long))
        self.layers = nn.ModuleList([BertLayer() for _ in range(2)])

    def forward(self, input_ids, attention_mask):
        seq = input_ids.size(1)
        x = self.word(input_ids) + self.token_type(self.token_type_ids[:, :seq]) + self.pos(self.position_ids[:, :seq])
        x = self.ln(x)
        ext = attention_mask[:, None, None, :].to(dtype=x.dtype)  # get_extended_attention_mask
        ext = (1.0 - ext) * torch.finfo(x.dtype).min
        for layer in self.layers:
            x = layer(x, ext)
        return x


# ---------------------------------------------------------------- HF DistilBERT

class DistilMHSA(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_lin, self.k_lin, self.v_lin, self.out_lin = (nn.Linear(D, D) for _ in range(4))

    def forward(self, query, key, value, mask):
        bs, q_length, dim = query.size()
        k_length = key.size(1)
        mask_reshp = (bs, 1, 1, k_length)

        def shape(x):
            return x.view(bs, -1, H, HD).transpose(1, 2)

        def unshape(x):
            return x.transpose(1, 2).contiguous().view(bs, -1, H * HD)

        q, k, v = shape(self.q_lin(query)), shape(self.k_lin(key)), shape(self.v_lin(value))
        q = q / math.sqrt(HD)
        scores = torch.matmul(q, k.transpose(2, 3))
        mask = (mask == 0).view(mask_reshp).expand_as(scores)
        scores = scores.masked_fill(mask, torch.tensor(torch.finfo(scores.dtype).min))
        weights = nn.functional.softmax(scores, dim=-1)
        return self.out_lin(unshape(torch.matmul(weights, v)))


class DistilBert(nn.Module):
    def __init__(self):
        super().__init__()
        self.word, self.pos = nn.Embedding(VOCAB, D), nn.Embedding(64, D)
        self.ln = nn.LayerNorm(D, eps=1e-12)
        self.attn = nn.ModuleList([DistilMHSA() for _ in range(2)])
        self.sa_ln = nn.ModuleList([nn.LayerNorm(D, eps=1e-12) for _ in range(2)])
        self.lin1 = nn.ModuleList([nn.Linear(D, FF) for _ in range(2)])
        self.lin2 = nn.ModuleList([nn.Linear(FF, D) for _ in range(2)])
        self.out_ln = nn.ModuleList([nn.LayerNorm(D, eps=1e-12) for _ in range(2)])

    def forward(self, input_ids, attention_mask):
        position_ids = torch.arange(input_ids.size(1), dtype=torch.long).unsqueeze(0).expand_as(input_ids)
        x = self.ln(self.word(input_ids) + self.pos(position_ids))
        for i in range(2):
            sa = self.sa_ln[i](self.attn[i](x, x, x, attention_mask) + x)
            x = self.out_ln[i](self.lin2[i](F.gelu(self.lin1[i](sa))) + sa)
        return x


# ---------------------------------------------------------------- HF GPT-2

class Conv1D(nn.Module):
    """GPT-2's Conv1D: a linear layer with the weight stored transposed, applied with addmm."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.02)
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class GPT2Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("bias", torch.tril(torch.ones((64, 64), dtype=torch.bool)).view(1, 1, 64, 64))
        self.c_attn, self.c_proj = Conv1D(3 * D, D), Conv1D(D, D)

    def _split_heads(self, t):
        return t.view(t.size()[:-1] + (H, HD)).permute(0, 2, 1, 3)

    def _attn(self, query, key, value, attention_mask):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full([], value.size(-1) ** 0.5, dtype=attn_weights.dtype)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        mask_value = torch.full([], torch.finfo(attn_weights.dtype).min, dtype=attn_weights.dtype)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states, layer_past, attention_mask):
        query, key, value = self.c_attn(hidden_states).split(D, dim=2)
        query, key, value = self._split_heads(query), self._split_heads(key), self._split_heads(value)
        if layer_past is not None:
            past_key, past_value = layer_past
            key = torch.cat((past_key, key), dim=-2)
            value = torch.cat((past_value, value), dim=-2)
        present = (key, value)
        a = self._attn(query, key, value, attention_mask)
        a = a.permute(0, 2, 1, 3).contiguous()
        a = a.view(a.size()[:-2] + (D,))
        return self.c_proj(a), present


class NewGELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GPT2Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.attn, self.ln_2 = nn.LayerNorm(D, eps=1e-5), GPT2Attention(), nn.LayerNorm(D, eps=1e-5)
        self.c_fc, self.c_proj, self.act = Conv1D(FF, D), Conv1D(D, FF), NewGELU()

    def forward(self, x, layer_past, attention_mask):
        a, present = self.attn(self.ln_1(x), layer_past, attention_mask)
        x = x + a
        return x + self.c_proj(self.act(self.c_fc(self.ln_2(x)))), present


class GPT2(nn.Module):
    """GPT-2 with a padding mask; with `past`, also past keys/values per layer (present returned)."""

    def __init__(self, past):
        super().__init__()
        self.past = past
        self.wte, self.wpe = nn.Embedding(VOCAB, D), nn.Embedding(64, D)
        self.h = nn.ModuleList([GPT2Block() for _ in range(2)])
        self.ln_f = nn.LayerNorm(D, eps=1e-5)

    def forward(self, input_ids, attention_mask, *past):
        past_length = past[0].size(-2) if self.past else 0
        position_ids = torch.arange(past_length, input_ids.size(-1) + past_length, dtype=torch.long).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(position_ids)
        mask = attention_mask[:, None, None, :].to(dtype=x.dtype)
        mask = (1.0 - mask) * torch.finfo(x.dtype).min
        presents = []
        for i, block in enumerate(self.h):
            layer_past = (past[2 * i], past[2 * i + 1]) if self.past else None
            x, present = block(x, layer_past, mask)
            presents += list(present)
        x = self.ln_f(x)
        return (x, *presents) if self.past else x


# ---------------------------------------------------------------- HF LLaMA

class LlamaRMSNorm(nn.Module):
    def __init__(self, eps=1e-6):
        super().__init__()
        self.weight, self.variance_epsilon = nn.Parameter(torch.ones(D)), eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class LlamaAttention(nn.Module):
    KV = 2

    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(D, H * HD, bias=False)
        self.k_proj = nn.Linear(D, self.KV * HD, bias=False)
        self.v_proj = nn.Linear(D, self.KV * HD, bias=False)
        self.o_proj = nn.Linear(H * HD, D, bias=False)

    def forward(self, x, cos, sin, mask):
        bsz, q_len, _ = x.size()
        q = self.q_proj(x).view(bsz, q_len, H, HD).transpose(1, 2)
        k = self.k_proj(x).view(bsz, q_len, self.KV, HD).transpose(1, 2)
        v = self.v_proj(x).view(bsz, q_len, self.KV, HD).transpose(1, 2)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = (q * cos) + (rotate_half(q) * sin)
        k = (k * cos) + (rotate_half(k) * sin)
        k, v = repeat_kv(k, H // self.KV), repeat_kv(v, H // self.KV)
        w = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(HD)
        w = w + mask[:, :, :, : k.shape[-2]]
        w = nn.functional.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        o = torch.matmul(w, v).transpose(1, 2).contiguous().reshape(bsz, q_len, -1)
        return self.o_proj(o)


class LlamaMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj, self.up_proj = nn.Linear(D, FF, bias=False), nn.Linear(D, FF, bias=False)
        self.down_proj, self.act_fn = nn.Linear(FF, D, bias=False), nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class Llama(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, D)
        self.attn = nn.ModuleList([LlamaAttention() for _ in range(2)])
        self.mlp = nn.ModuleList([LlamaMLP() for _ in range(2)])
        self.ln1 = nn.ModuleList([LlamaRMSNorm() for _ in range(2)])
        self.ln2 = nn.ModuleList([LlamaRMSNorm() for _ in range(2)])
        self.norm = LlamaRMSNorm()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, HD, 2).float() / HD)), persistent=False)

    def forward(self, input_ids, attention_mask):
        bsz, seq = input_ids.shape
        x = self.embed_tokens(input_ids)
        position_ids = torch.arange(seq, dtype=torch.long).unsqueeze(0).expand(bsz, seq)
        inv = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        freqs = (inv @ position_ids[:, None, :].float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        causal = torch.full((seq, seq), FMIN).triu(1)[None, None, :, :]
        mask = causal.masked_fill(attention_mask[:, None, None, :] == 0, FMIN)
        for i in range(2):
            x = x + self.attn[i](self.ln1[i](x), cos, sin, mask)
            x = x + self.mlp[i](self.ln2[i](x))
        return self.norm(x)


# ---------------------------------------------------------------- HF T5 (encoder)

class T5LayerNorm(nn.Module):
    def __init__(self, eps=1e-6):
        super().__init__()
        self.weight, self.variance_epsilon = nn.Parameter(torch.ones(D)), eps

    def forward(self, hidden_states):
        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states


class T5Attention(nn.Module):
    BUCKETS, MAX_DISTANCE = 32, 128

    def __init__(self, has_relative_attention_bias):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(D, D, bias=False) for _ in range(4))
        if has_relative_attention_bias:
            self.relative_attention_bias = nn.Embedding(self.BUCKETS, H)

    @staticmethod
    def _relative_position_bucket(relative_position, num_buckets, max_distance):
        num_buckets //= 2
        relative_buckets = (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
        max_exact = num_buckets // 2
        is_small = relative_position < max_exact
        if_large = max_exact + (torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact)
                                * (num_buckets - max_exact)).to(torch.long)
        if_large = torch.min(if_large, torch.full_like(if_large, num_buckets - 1))
        return relative_buckets + torch.where(is_small, relative_position, if_large)

    def compute_bias(self, query_length, key_length):
        context_position = torch.arange(query_length, dtype=torch.long)[:, None]
        memory_position = torch.arange(key_length, dtype=torch.long)[None, :]
        bucket = self._relative_position_bucket(memory_position - context_position, self.BUCKETS, self.MAX_DISTANCE)
        return self.relative_attention_bias(bucket).permute([2, 0, 1]).unsqueeze(0)

    def forward(self, x, mask, position_bias):
        bsz, seq = x.shape[:2]

        def shape(s):
            return s.view(bsz, -1, H, HD).transpose(1, 2)

        q, k, v = shape(self.q(x)), shape(self.k(x)), shape(self.v(x))
        scores = torch.matmul(q, k.transpose(3, 2))
        if position_bias is None:
            position_bias = self.compute_bias(seq, seq) + mask
        scores += position_bias
        w = nn.functional.softmax(scores.float(), dim=-1).type_as(scores)
        o = torch.matmul(w, v).transpose(1, 2).contiguous().view(bsz, -1, D)
        return self.o(o), position_bias


class T5Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.attn = nn.ModuleList([T5Attention(i == 0) for i in range(2)])
        self.ln_a = nn.ModuleList([T5LayerNorm() for _ in range(2)])
        self.ln_f = nn.ModuleList([T5LayerNorm() for _ in range(2)])
        self.wi = nn.ModuleList([nn.Linear(D, FF, bias=False) for _ in range(2)])
        self.wo = nn.ModuleList([nn.Linear(FF, D, bias=False) for _ in range(2)])
        self.final_layer_norm = T5LayerNorm()

    def forward(self, input_ids, attention_mask):
        x = self.embed(input_ids)
        ext = attention_mask[:, None, None, :].to(dtype=x.dtype)
        ext = (1.0 - ext) * torch.finfo(x.dtype).min
        bias = None
        for i in range(2):
            a, bias = self.attn[i](self.ln_a[i](x), ext, bias)
            x = x + a
            x = x + self.wo[i](F.relu(self.wi[i](self.ln_f[i](x))))
        return self.final_layer_norm(x)


# ---------------------------------------------------------------- HF Whisper (encoder)

class WhisperAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.scaling = HD ** -0.5
        self.k_proj = nn.Linear(D, D, bias=False)
        self.v_proj, self.q_proj, self.out_proj = nn.Linear(D, D), nn.Linear(D, D), nn.Linear(D, D)

    def _shape(self, tensor, seq_len, bsz):
        return tensor.view(bsz, seq_len, H, HD).transpose(1, 2).contiguous()

    def forward(self, hidden_states):
        bsz, tgt_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states) * self.scaling
        key_states = self._shape(self.k_proj(hidden_states), -1, bsz)
        value_states = self._shape(self.v_proj(hidden_states), -1, bsz)
        proj_shape = (bsz * H, -1, HD)
        query_states = self._shape(query_states, tgt_len, bsz).view(*proj_shape)
        key_states = key_states.reshape(*proj_shape)
        value_states = value_states.reshape(*proj_shape)
        attn_weights = torch.bmm(query_states, key_states.transpose(1, 2))
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_output = torch.bmm(attn_weights, value_states)
        attn_output = attn_output.view(bsz, H, tgt_len, HD).transpose(1, 2).reshape(bsz, tgt_len, D)
        return self.out_proj(attn_output)


class WhisperEncoder(nn.Module):
    MELS = 8

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(self.MELS, D, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(D, D, kernel_size=3, stride=2, padding=1)
        self.embed_positions = nn.Embedding(64, D)
        self.attn = nn.ModuleList([WhisperAttention() for _ in range(2)])
        self.attn_ln = nn.ModuleList([nn.LayerNorm(D) for _ in range(2)])
        self.fc1 = nn.ModuleList([nn.Linear(D, FF) for _ in range(2)])
        self.fc2 = nn.ModuleList([nn.Linear(FF, D) for _ in range(2)])
        self.final_ln = nn.ModuleList([nn.LayerNorm(D) for _ in range(2)])
        self.layer_norm = nn.LayerNorm(D)

    def forward(self, input_features):
        x = F.gelu(self.conv1(input_features))
        x = F.gelu(self.conv2(x))
        x = x.permute(0, 2, 1)
        x = x + self.embed_positions.weight[: x.shape[1]]
        for i in range(2):
            x = x + self.attn[i](self.attn_ln[i](x))
            x = x + self.fc2[i](F.gelu(self.fc1[i](self.final_ln[i](x))))
        return self.layer_norm(x)


# ---------------------------------------------------------------- HF BART (post-LN encoder-decoder)

class BartAttention(nn.Module):
    """HF BartAttention: q scaled, heads merged into the batch for 3-D bmm, and the mask added
    through a [b, h, t, s] view of the [b·h, t, s] scores that is viewed back before the softmax."""

    def __init__(self):
        super().__init__()
        self.scaling = HD ** -0.5
        self.k_proj, self.v_proj = nn.Linear(D, D), nn.Linear(D, D)
        self.q_proj, self.out_proj = nn.Linear(D, D), nn.Linear(D, D)

    def _shape(self, tensor, seq_len, bsz):
        return tensor.view(bsz, seq_len, H, HD).transpose(1, 2).contiguous()

    def forward(self, hidden_states, key_value_states, attention_mask):
        bsz, tgt_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states) * self.scaling
        key_states = self._shape(self.k_proj(key_value_states), -1, bsz)
        value_states = self._shape(self.v_proj(key_value_states), -1, bsz)
        proj_shape = (bsz * H, -1, HD)
        query_states = self._shape(query_states, tgt_len, bsz).view(*proj_shape)
        key_states = key_states.reshape(*proj_shape)
        value_states = value_states.reshape(*proj_shape)
        src_len = key_states.size(1)
        attn_weights = torch.bmm(query_states, key_states.transpose(1, 2))
        attn_weights = attn_weights.view(bsz, H, tgt_len, src_len) + attention_mask
        attn_weights = attn_weights.view(bsz * H, tgt_len, src_len)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_output = torch.bmm(attn_weights, value_states)
        attn_output = attn_output.view(bsz, H, tgt_len, HD).transpose(1, 2).reshape(bsz, tgt_len, D)
        return self.out_proj(attn_output)


def bart_padding_mask(mask, tgt_len):
    """[b, s] 1/0 -> [b, 1, t, s] additive, (1 - m)·finfo.min as HF's _expand_mask writes it."""
    m = mask[:, None, None, :].expand(mask.size(0), 1, tgt_len, mask.size(1)).to(torch.float32)
    return (1.0 - m).masked_fill((1.0 - m).to(torch.bool), FMIN)


class Bart(nn.Module):
    """One encoder and one decoder layer: encoder self-attention under the padding mask, decoder
    causal self-attention and cross-attention to the encoder under its padding mask."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.enc_attn, self.dec_attn, self.cross_attn = BartAttention(), BartAttention(), BartAttention()
        self.enc_ln1, self.enc_ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.dec_ln1, self.dec_ln2, self.dec_ln3 = nn.LayerNorm(D), nn.LayerNorm(D), nn.LayerNorm(D)
        self.enc_fc1, self.enc_fc2 = nn.Linear(D, FF), nn.Linear(FF, D)
        self.dec_fc1, self.dec_fc2 = nn.Linear(D, FF), nn.Linear(FF, D)

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        x = self.embed(input_ids)
        enc_mask = bart_padding_mask(attention_mask, input_ids.size(1))
        x = self.enc_ln1(x + self.enc_attn(x, x, enc_mask))
        x = self.enc_ln2(x + self.enc_fc2(F.gelu(self.enc_fc1(x))))
        y = self.embed(decoder_input_ids)
        t = decoder_input_ids.size(1)
        causal = torch.full((t, t), FMIN)
        cond = torch.arange(t)
        causal = causal.masked_fill(cond < (cond + 1).view(t, 1), 0.0)[None, None].expand(y.size(0), 1, t, t)
        y = self.dec_ln1(y + self.dec_attn(y, y, causal))
        y = self.dec_ln2(y + self.cross_attn(y, x, bart_padding_mask(attention_mask, t)))
        return self.dec_ln3(y + self.dec_fc2(F.gelu(self.dec_fc1(y))))
