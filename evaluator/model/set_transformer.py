"""Set Transformer blocks (Lee et al. 2019): MAB, SAB, ISAB and PMA with key-padding masks.

The metric branch must not depend on the order of its metrics, and must accept any subset of
them, so every block here is permutation-equivariant (SAB, ISAB) or -invariant (PMA) and takes
an optional ``mask`` (batch, set) that is True for present elements. Absent elements get
exactly zero attention weight, so a padded set gives the same result as the smaller set.
"""

from __future__ import annotations

import math

import torch
from einops import rearrange
from torch import Tensor, nn


class MAB(nn.Module):
    """Multihead attention block: H = LN(X + MHA(X, Y, Y)); MAB(X, Y) = LN(H + rFF(H)).

    ``dropout`` acts in the feed-forward only. The attention weights get none (nor did Lee et
    al.'s): drawing a mask over (batch, heads, set, set) was a quarter of a CPU training step.
    """

    def __init__(self, dim: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        if dim % num_heads:
            raise ValueError(f"dim {dim} is not divisible by num_heads {num_heads}")
        self.num_heads = num_heads
        self.to_q = nn.Linear(dim, dim)
        self.to_k = nn.Linear(dim, dim)
        self.to_v = nn.Linear(dim, dim)
        self.to_out = nn.Linear(dim, dim)
        self.norm_attention = nn.LayerNorm(dim)
        self.feed_forward = nn.Sequential(
            nn.Linear(dim, dim), nn.ReLU(), nn.Dropout(dropout), nn.Linear(dim, dim)
        )
        self.norm_output = nn.LayerNorm(dim)

    def forward(self, x: Tensor, y: Tensor, key_mask: Tensor | None = None) -> Tensor:
        """Attend from queries x (b, n, d) to keys/values y (b, m, d); key_mask (b, m) True = keep."""
        q, k, v = (
            rearrange(proj(t), "b n (h d) -> b h n d", h=self.num_heads)
            for proj, t in ((self.to_q, x), (self.to_k, y), (self.to_v, y))
        )
        scores = torch.einsum("bhnd,bhmd->bhnm", q, k) / math.sqrt(q.shape[-1])
        if key_mask is not None:
            scores = scores.masked_fill(~key_mask[:, None, None, :], float("-inf"))
        weights = scores.softmax(dim=-1)
        attended = rearrange(torch.einsum("bhnm,bhmd->bhnd", weights, v), "b h n d -> b n (h d)")
        h = self.norm_attention(x + self.to_out(attended))
        return self.norm_output(h + self.feed_forward(h))


class SAB(nn.Module):
    """Set attention block: self-attention among the set's elements, SAB(X) = MAB(X, X)."""

    def __init__(self, dim: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.mab = MAB(dim, num_heads, dropout)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        return self.mab(x, x, mask)


class ISAB(nn.Module):
    """Induced set attention block: attention through m learned inducing points, O(n m) not O(n^2)."""

    def __init__(self, dim: int, num_heads: int, num_inducing: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.inducing = nn.Parameter(torch.empty(1, num_inducing, dim))
        nn.init.xavier_uniform_(self.inducing)
        self.summarise = MAB(dim, num_heads, dropout)
        self.broadcast = MAB(dim, num_heads, dropout)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        inducing = self.inducing.expand(x.shape[0], -1, -1)
        h = self.summarise(inducing, x, mask)
        return self.broadcast(x, h)


class PMA(nn.Module):
    """Pooling by multihead attention: k learned seed vectors attend to the set, PMA(Z) = MAB(S, rFF(Z))."""

    def __init__(self, dim: int, num_heads: int, num_seeds: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.seeds = nn.Parameter(torch.empty(1, num_seeds, dim))
        nn.init.xavier_uniform_(self.seeds)
        self.feed_forward = nn.Sequential(nn.Linear(dim, dim), nn.ReLU())
        self.mab = MAB(dim, num_heads, dropout)

    def forward(self, z: Tensor, mask: Tensor | None = None) -> Tensor:
        seeds = self.seeds.expand(z.shape[0], -1, -1)
        return self.mab(seeds, self.feed_forward(z), mask)
