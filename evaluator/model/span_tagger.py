"""Per-token error scores: which wordpieces of gen are wrong, which of ref gen leaves out.

A label such as NumErr says that something is wrong, not where. The tagger reads the same
frozen token states as the token-level branch (``token_interaction``): every token of one
side is softly aligned to the other side's tokens and compared with what it aligned to, so a
reworded token whose counterpart means the same compares like a copy, while a changed
number, name or negation, or an added clause, compares unlike anything. A bidirectional GRU
over each side's comparisons adds the context a single token lacks (the "not" that turns a
verb, the two halves of a swapped pair), and a linear layer gives one logit per token: on
gen, "this token is part of an error"; on ref, "gen leaves this token out" (MissInfo). It is
trained on synthetic pairs whose rules record the characters they changed
(``evaluator.training.spans``); ``evaluator.spans`` turns the scores into character spans.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from evaluator.model.token_interaction import compare_tokens, comparison


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
        self.gen_context = nn.GRU(dim, dim // 2, batch_first=True, bidirectional=True)
        self.ref_context = nn.GRU(dim, dim // 2, batch_first=True, bidirectional=True)
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
        gen_compared = compare_tokens(
            gen_projected, ref_projected, ref_mask, similarity, temperature, self.gen_compare
        )
        ref_compared = compare_tokens(
            ref_projected,
            gen_projected,
            gen_mask,
            similarity.transpose(1, 2),
            temperature,
            self.ref_compare,
        )
        gen_logits = self.gen_output(_in_context(self.gen_context, gen_compared, gen_mask))
        ref_logits = self.ref_output(_in_context(self.ref_context, ref_compared, ref_mask))
        return (
            gen_logits.squeeze(-1).masked_fill(~gen_mask, -1e4),
            ref_logits.squeeze(-1).masked_fill(~ref_mask, -1e4),
        )


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
    context, _ = pad_packed_sequence(packed, batch_first=True, total_length=values.shape[1])
    out = out.to(values.device)
    out[rows] = context
    return out
