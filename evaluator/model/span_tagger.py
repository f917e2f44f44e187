"""Per-token error scores: which wordpieces of gen are wrong, which of ref gen leaves out.

A label such as NumErr says that something is wrong, not where. The tagger reads the same
frozen token states as the token-level branch (``token_interaction``): every token of one
side is softly aligned to the other side's tokens and compared with what it aligned to, so a
reworded token whose counterpart means the same compares like a copy, while a changed
number, name or negation, or an added clause, compares unlike anything. Beside the comparison
each token carries where it sits and where its counterpart sits (a swapped clause or a
skipped word shows as a jump) and how many tokens share that counterpart (a repeated word).
A bidirectional GRU over each side adds the context a single token lacks (the "not" that
turns a verb, the two halves of a swapped pair), and a linear layer gives one logit per token: on
gen, "this token is part of an error"; on ref, "gen leaves this token out" (MissInfo). It is
trained on synthetic pairs whose rules record the characters they changed
(``evaluator.training.spans``); ``evaluator.spans`` turns the scores into character spans.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from evaluator.model.token_interaction import compare_tokens, comparison, soft_alignment


class SpanTagger(nn.Module):
    """(ref states, ref mask, gen states, gen mask) -> (gen logits, ref logits), one per token."""

    def __init__(self, embedding_dim: int, dim: int, dropout: float = 0.0) -> None:
        super().__init__()
        if dim % 2:
            raise ValueError(f"span_dim must be even (two GRU directions), got {dim}")
        self.log_temperature = nn.Parameter(torch.tensor(math.log(10.0)))
        self.projection = nn.Linear(embedding_dim, dim)
        self.gen_compare = comparison(dim, dropout)
        self.ref_compare = comparison(dim, dropout)
        width = dim + len(PLACE_FEATURES)
        self.gen_context = nn.GRU(width, dim // 2, batch_first=True, bidirectional=True)
        self.ref_context = nn.GRU(width, dim // 2, batch_first=True, bidirectional=True)
        self.gen_output = nn.Linear(dim, 1)
        self.ref_output = nn.Linear(dim, 1)

    def forward(
        self, ref: Tensor, ref_mask: Tensor, gen: Tensor, gen_mask: Tensor
    ) -> tuple[Tensor, Tensor]:
        """Logits (batch, gen tokens) and (batch, ref tokens); padding positions give -1e4.

        States are the unit-length encoder token states (batch, tokens, embedding_dim), masks
        True for a token; padding sits at the end of each row.
        """
        similarity = gen @ ref.transpose(1, 2)  # (batch, gen tokens, ref tokens): cosines
        ref_projected, gen_projected = self.projection(ref), self.projection(gen)
        temperature = self.log_temperature.exp()
        sides = []
        for own, own_mask, other, other_mask, cosines, compare, context, output in (
            (gen_projected, gen_mask, ref_projected, ref_mask, similarity,
             self.gen_compare, self.gen_context, self.gen_output),
            (ref_projected, ref_mask, gen_projected, gen_mask, similarity.transpose(1, 2),
             self.ref_compare, self.ref_context, self.ref_output),
        ):  # fmt: skip
            compared = compare_tokens(own, other, other_mask, cosines, temperature, compare)
            weights = soft_alignment(cosines, other_mask, temperature)
            places = place_features(weights, own_mask, other_mask)
            logits = output(_in_context(context, torch.cat([compared, places], -1), own_mask))
            sides.append(logits.squeeze(-1).masked_fill(~own_mask, -1e4))
        return sides[0], sides[1]


# what each token's alignment says about its place, beside what it says about its meaning
PLACE_FEATURES = ("own position", "aligned position", "jump from previous", "sharing")


def place_features(weights: Tensor, own_mask: Tensor, other_mask: Tensor) -> Tensor:
    """(batch, own tokens, 4): the token's relative position in its text, the expected relative
    position of what it aligns to, how far that moved from the previous token's (a skipped
    word, a swapped clause), and how many own tokens share its counterparts (a repeated word
    aligns to what another copy aligns to)."""
    weights = weights * own_mask.unsqueeze(-1)  # padding aligns to nothing
    own_position = _relative_positions(own_mask)
    aligned = (weights * _relative_positions(other_mask).unsqueeze(1)).sum(-1)
    jump = aligned - torch.cat([aligned[:, :1], aligned[:, :-1]], dim=1)
    usage = weights.sum(dim=1, keepdim=True)  # (batch, 1, other tokens): own tokens using each
    sharing = (weights * usage).sum(-1)
    features = torch.stack([own_position, aligned, jump, sharing], dim=-1)
    return features * own_mask.unsqueeze(-1)


def _relative_positions(mask: Tensor) -> Tensor:
    """0 for a text's first token up to 1 for its last (0 for padding)."""
    lengths = mask.sum(dim=1, keepdim=True).clamp(min=2) - 1
    positions = torch.arange(mask.shape[1], device=mask.device).unsqueeze(0) / lengths
    return positions * mask


def _in_context(gru: nn.GRU, values: Tensor, mask: Tensor) -> Tensor:
    """The GRU over each row's own tokens only (packed), so a text reads the same alone or
    padded in a batch; rows without tokens give zeros."""
    lengths = mask.sum(dim=1)
    out = torch.zeros(*values.shape[:2], gru.hidden_size * 2, dtype=values.dtype)
    rows = torch.nonzero(lengths > 0).squeeze(1)
    if len(rows) == 0:
        return out.to(values.device)
    packed = pack_padded_sequence(
        values[rows], lengths[rows].cpu(), batch_first=True, enforce_sorted=False
    )
    context, _ = pad_packed_sequence(gru(packed)[0], batch_first=True, total_length=values.shape[1])
    out = out.to(values.device)
    out[rows] = context
    return out
