"""Vision transformers for the fusion suite: a torchvision-style ViT written out, and torchvision's
own Swin and MaxViT classes at tiny sizes (sizes as in families.py)."""

import torch
import torch.nn as nn

from families import D, FF, H


# ---------------------------------------------------------------- torchvision ViT (vit_b_16 style)

class ViTBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(D, eps=1e-6)
        self.self_attention = nn.MultiheadAttention(D, H, dropout=0.0, batch_first=True)
        self.ln_2 = nn.LayerNorm(D, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(D, FF), nn.GELU(), nn.Dropout(0.0), nn.Linear(FF, D), nn.Dropout(0.0))

    def forward(self, input):
        x = self.ln_1(input)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = x + input
        return x + self.mlp(self.ln_2(x))


class ViT(nn.Module):
    IMAGE, PATCH = 32, 8

    def __init__(self):
        super().__init__()
        self.conv_proj = nn.Conv2d(3, D, kernel_size=self.PATCH, stride=self.PATCH)
        n = (self.IMAGE // self.PATCH) ** 2
        self.class_token = nn.Parameter(torch.zeros(1, 1, D))
        self.pos_embedding = nn.Parameter(torch.empty(1, n + 1, D).normal_(std=0.02))
        self.layers = nn.Sequential(ViTBlock(), ViTBlock())
        self.ln = nn.LayerNorm(D, eps=1e-6)
        self.head = nn.Linear(D, 10)

    def forward(self, x):
        n, _, h, w = x.shape
        x = self.conv_proj(x)
        x = x.reshape(n, D, (h // self.PATCH) * (w // self.PATCH)).permute(0, 2, 1)
        x = torch.cat([self.class_token.expand(n, -1, -1), x], dim=1)
        x = self.ln(self.layers(x + self.pos_embedding))
        return self.head(x[:, 0])


# ---------------------------------------------------------------- torchvision Swin (the library's own class)

def swin():
    """torchvision's SwinTransformer itself, tiny: 32x32 images, patches of 4, windows of 4 tokens.
    Stage 1 (8x8 tokens) has a regular and a shifted-window block, whose mask is added to the
    scores viewed per image ([B, windows, heads, n, n]); stage 2 (4x4 tokens, one window) drops the
    shift as torchvision does. Its attention dropout is exported as Dropout(p=0, training=True)."""
    from torchvision.models.swin_transformer import SwinTransformer
    return SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 2], window_size=[4, 4],
                           num_classes=10)


# ---------------------------------------------------------------- torchvision MaxViT

def maxvit():
    """torchvision's MaxVit itself, tiny: 32x32 images, one stage of one layer (an MBConv, then
    attention within 4x4 windows and across a 4x4 grid; 2 heads of 8). Its scores are 5-D,
    [B, partitions, heads, n, n] (an Einsum), with a learned relative position bias added."""
    from torchvision.models.maxvit import MaxVit
    return MaxVit(input_size=(32, 32), stem_channels=8, partition_size=4, block_channels=[16], block_layers=[1],
                  head_dim=8, stochastic_depth_prob=0.0, num_classes=10)
