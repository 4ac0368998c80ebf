"""GPT-2 in plain PyTorch with Hugging Face's parameter names (Conv1D weights [in, out],
the LM head tied to the token table), for tools/gpu/pretrain.py."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


# ---------------------------------------------------------------- model

class Conv1D(nn.Module):
    """Hugging Face GPT-2 Conv1D: weight [in, out]."""

    def __init__(self, nx, nf):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):  # addmm: one bf16 op under autocast (matmul + bias would promote to f32)
        y = torch.addmm(self.bias, x.reshape(-1, x.size(-1)), self.weight)
        return y.view(*x.shape[:-1], y.size(-1))


USE_SDPA = [hasattr(F, "scaled_dot_product_attention")]  # cleared if it fails at the first step


class Attention(nn.Module):
    def __init__(self, k, heads, positions, dropout):
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.c_attn = Conv1D(k, 3 * k)
        self.c_proj = Conv1D(k, k)
        self.resid_drop = nn.Dropout(dropout)
        mask = torch.tril(torch.ones(positions, positions, dtype=torch.bool))
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x):
        B, T, k = x.shape
        q, kk, v = self.c_attn(x).split(k, dim=2)
        sh = lambda t: t.view(B, T, self.heads, k // self.heads).transpose(1, 2)
        q, kk, v = sh(q), sh(kk), sh(v)
        p = self.dropout if self.training else 0.0
        if USE_SDPA[0]:
            y = F.scaled_dot_product_attention(q, kk, v, dropout_p=p, is_causal=True)
        else:
            att = (q @ kk.transpose(-2, -1)) * (1.0 / math.sqrt(q.size(-1)))
            att = att.masked_fill(~self.mask[:T, :T], float("-inf"))
            att = F.dropout(F.softmax(att.float(), dim=-1).to(q.dtype), p, self.training)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, k)
        return self.resid_drop(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, k, dropout):
        super().__init__()
        self.c_fc = Conv1D(k, 4 * k)
        self.c_proj = Conv1D(4 * k, k)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return self.drop(self.c_proj(F.gelu(self.c_fc(x), approximate="tanh")))  # gelu_new


class Block(nn.Module):
    def __init__(self, k, heads, positions, dropout, eps):
        super().__init__()
        self.ln_1 = nn.LayerNorm(k, eps=eps)
        self.attn = Attention(k, heads, positions, dropout)
        self.ln_2 = nn.LayerNorm(k, eps=eps)
        self.mlp = MLP(k, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    """Parameter names are Hugging Face GPT2Model's (without 'transformer.')."""

    def __init__(self, vocab, positions, k, layers, heads, dropout, eps=1e-5):
        super().__init__()
        self.wte = nn.Embedding(vocab, k)
        self.wpe = nn.Embedding(positions, k)
        self.drop = nn.Dropout(dropout)
        self.h = nn.ModuleList(Block(k, heads, positions, dropout, eps) for _ in range(layers))
        self.ln_f = nn.LayerNorm(k, eps=eps)
        # GPT-2's initialisation: N(0, 0.02), residual projections scaled by 1/sqrt(2L).
        for name, p in self.named_parameters():
            if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
                nn.init.ones_(p)
            elif name.endswith(".bias"):
                nn.init.zeros_(p)
            elif name.endswith("c_proj.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * layers))
            else:
                nn.init.normal_(p, 0.0, 0.02)

    def forward(self, idx):
        pos = torch.arange(idx.size(1), device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for b in self.h:
            x = b(x)
        x = self.ln_f(x)
        return x @ self.wte.weight.t()  # lm_head tied to wte
