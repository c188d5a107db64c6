"""The classic seq2seq attentions for the fusion suite (Bahdanau with a GRU, Luong/OpenNMT, NTM
content addressing, d2l's Nadaraya-Watson), sizes as in families.py."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from families import D, VOCAB


# ---------------------------------------------------------------- seq2seq attentions

class BahdanauAttention(nn.Module):
    """score = vᵀ tanh(W q + U k), masked, softmax, weighted sum of the values (the keys)."""

    def __init__(self):
        super().__init__()
        self.Wa, self.Ua, self.Va = nn.Linear(D, D), nn.Linear(D, D), nn.Linear(D, 1)

    def forward(self, query, keys, mask):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))  # query [b, 1, D], keys [b, s, D]
        scores = scores.squeeze(2).unsqueeze(1)
        scores = scores.masked_fill(mask.unsqueeze(1) == 0, -1e10)
        weights = F.softmax(scores, dim=-1)
        return torch.bmm(weights, keys), weights


class GruBahdanau(nn.Module):
    """A GRU encoder and one Bahdanau decoder step (embedding, attention, GRU, output layer)."""

    def __init__(self, with_encoder):
        super().__init__()
        self.with_encoder = with_encoder
        self.src_embed, self.tgt_embed = nn.Embedding(VOCAB, D), nn.Embedding(VOCAB, D)
        if with_encoder:
            self.encoder = nn.GRU(D, D, batch_first=True)
        self.attention = BahdanauAttention()
        self.out = nn.Linear(3 * D, VOCAB)

    def forward(self, src, mask, prev_token, hidden):
        # src: token ids [b, s] (with the encoder) or encoder outputs [b, s, D]; hidden [b, D]
        keys = self.encoder(self.src_embed(src))[0] if self.with_encoder else src
        query = hidden.unsqueeze(1)
        context, weights = self.attention(query, keys, mask)
        embedded = self.tgt_embed(prev_token).unsqueeze(1)
        logits = self.out(torch.cat((embedded, context, query), dim=2)).squeeze(1)
        return logits, weights.squeeze(1)


class LuongAttention(nn.Module):
    """OpenNMT's GlobalAttention: score = h_t·W·h_s ('general') or h_t·h_s ('dot'); masked
    softmax; context = Σ a·h_s; attn_h = tanh(W_out [c; h_t])."""

    def __init__(self, attn_type):
        super().__init__()
        self.attn_type = attn_type
        if attn_type == "general":
            self.linear_in = nn.Linear(D, D, bias=False)
        self.linear_out = nn.Linear(2 * D, D, bias=False)

    def score(self, h_t, h_s):
        if self.attn_type == "general":
            h_t = self.linear_in(h_t)
        return torch.bmm(h_t, h_s.transpose(1, 2))

    def forward(self, source, memory_bank, memory_mask):
        align = self.score(source, memory_bank)  # [b, t, s]
        align = align.masked_fill(~memory_mask.unsqueeze(1), -float("inf"))
        align_vectors = F.softmax(align, -1)
        c = torch.bmm(align_vectors, memory_bank)
        return torch.tanh(self.linear_out(torch.cat([c, source], 2))), align_vectors


class NtmRead(nn.Module):
    """NTM content addressing: w = softmax(β·cos(k, M_i)), read r = Σ w_i M_i."""

    def __init__(self, m=D):
        super().__init__()
        self.fc_key, self.fc_beta = nn.Linear(D, m), nn.Linear(D, 1)

    def forward(self, controller, memory):
        k = self.fc_key(controller)
        beta = F.softplus(self.fc_beta(controller))
        similarity = F.cosine_similarity(memory + 1e-16, k.unsqueeze(1) + 1e-16, dim=-1)
        w = F.softmax(beta * similarity, dim=1)
        return torch.matmul(w.unsqueeze(1), memory).squeeze(1), w


class NadarayaWatson(nn.Module):
    """d2l's parametric Nadaraya-Watson kernel regression."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand((1,)))

    def forward(self, queries, keys, values):
        # d2l writes queries.repeat_interleave(m).reshape(-1, m); torch 1.13 cannot export that with a
        # dynamic m, so the same tensor is built with repeat.
        queries = queries.reshape((-1, 1)).repeat(1, keys.shape[1])
        weights = nn.functional.softmax(-((queries - keys) * self.w) ** 2 / 2, dim=1)
        return torch.bmm(weights.unsqueeze(1), values.unsqueeze(-1)).reshape(-1)
