"""Token-level comparison of reference and generated text (ESIM-style soft alignment).

Mean-pooled sentence vectors cannot tell a harmless rewording from a changed fact: both move
the vector a little. Here every token of one side is softly aligned to the other side's
tokens (attention on the cosine of the frozen encoder's unit-length token states, with a
learned temperature) and compared with what it aligned to. The states are first projected to
``dim`` (one shared linear map), and the comparison ``[a, ã, a - ã, a * ã, best cosine]`` runs
in that space through a small network per token: comparing in the 384-d encoder space cost
five times as much per training step on the CPU. A reworded token whose aligned counterpart
means the same gives a comparison close to a copy's; a changed number, name or negation
leaves a token whose counterpart differs, and an added or dropped clause leaves tokens with
nothing to align to. Masked mean and max pooling over each side's tokens give the pair
vector; the reference side says what gen lacks, the gen side what gen adds or changes.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


class TokenInteraction(nn.Module):
    """(ref states, ref mask, gen states, gen mask) -> (batch, 4 * dim) pair vector."""

    def __init__(self, embedding_dim: int, dim: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.log_temperature = nn.Parameter(torch.tensor(math.log(10.0)))
        self.projection = nn.Linear(embedding_dim, dim)
        self.ref_compare = comparison(dim, dropout)
        self.gen_compare = comparison(dim, dropout)
        self.output_dim = 4 * dim

    def forward(self, ref: Tensor, ref_mask: Tensor, gen: Tensor, gen_mask: Tensor) -> Tensor:
        similarity = ref @ gen.transpose(1, 2)  # (batch, ref tokens, gen tokens): cosines
        ref_projected, gen_projected = self.projection(ref), self.projection(gen)
        ref_side = self._side(
            ref_projected, ref_mask, gen_projected, gen_mask, similarity, self.ref_compare
        )
        gen_side = self._side(
            gen_projected,
            gen_mask,
            ref_projected,
            ref_mask,
            similarity.transpose(1, 2),
            self.gen_compare,
        )
        return torch.cat([ref_side, gen_side], dim=-1)

    def _side(
        self,
        own: Tensor,
        own_mask: Tensor,
        other: Tensor,
        other_mask: Tensor,
        similarity: Tensor,
        compare: nn.Module,
    ) -> Tensor:
        compared = compare_tokens(
            own, other, other_mask, similarity, self.log_temperature.exp(), compare
        )
        weights = own_mask.unsqueeze(-1).to(compared.dtype)
        mean = (compared * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)
        maximum = compared.masked_fill(~own_mask.unsqueeze(-1), -1e4).max(dim=1).values
        maximum = torch.where(own_mask.any(dim=1, keepdim=True), maximum, torch.zeros_like(maximum))
        return torch.cat([mean, maximum], dim=-1)


def compare_tokens(
    own: Tensor,
    other: Tensor,
    other_mask: Tensor,
    similarity: Tensor,
    temperature: Tensor,
    compare: nn.Module,
) -> Tensor:
    """Each own token compared with its soft alignment on the other side: ``compare`` applied to
    ``[a, ã, a - ã, a * ã, best cosine]`` -> (batch, own tokens, compare's width).

    similarity: (batch, own tokens, other tokens) cosines of the encoder states; own / other:
    the projected states.
    """
    aligned = soft_alignment(similarity, other_mask, temperature) @ other
    best = similarity.masked_fill(~other_mask.unsqueeze(1), -1.0).max(dim=-1, keepdim=True).values
    return compare(torch.cat([own, aligned, own - aligned, own * aligned, best], dim=-1))


def soft_alignment(similarity: Tensor, other_mask: Tensor, temperature: Tensor) -> Tensor:
    """(batch, own tokens, other tokens) attention of each own token over the other side's
    tokens; a side with no tokens at all (an empty text) aligns to nothing: zero weights."""
    blocked = ~other_mask.unsqueeze(1)  # (batch, 1, other tokens)
    logits = (similarity * temperature).masked_fill(blocked, -1e4)
    return logits.softmax(dim=-1) * other_mask.unsqueeze(1)


def comparison(dim: int, dropout: float) -> nn.Module:
    """The per-token network of ``compare_tokens`` for states projected to ``dim``."""
    return nn.Sequential(nn.Linear(4 * dim + 1, dim), nn.GELU(), nn.Dropout(dropout))
