"""The metric branch: a Set Transformer over the scaled metric scores of one pair.

Each set element is (scaled value, learned embedding of which metric it is), so the branch
knows that 0.4 BLEU and 0.4 BERTScore mean different things while staying indifferent to the
order the metrics arrive in. A key-padding mask lets any subset of metrics be used. The
paper's value-only variant (elements carry the value alone) is kept for ablation.
"""

from __future__ import annotations

import torch
from einops import rearrange
from torch import Tensor, nn

from evaluator.model.set_transformer import ISAB, PMA, SAB


class MetricSetEncoder(nn.Module):
    """Encode a (batch, num_metrics) matrix of scaled scores into a (batch, output_dim) vector."""

    def __init__(
        self,
        num_metrics: int,
        dim: int = 64,
        num_heads: int = 4,
        num_blocks: int = 2,
        num_inducing: int = 0,
        num_seeds: int = 1,
        metric_ids: bool = True,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        if num_metrics < 1:
            raise ValueError("the metric branch needs at least one metric")
        self.num_metrics = num_metrics
        self.metric_embedding = nn.Embedding(num_metrics, dim) if metric_ids else None
        self.value_projection = nn.Linear(1, dim)
        self.blocks = nn.ModuleList(
            ISAB(dim, num_heads, num_inducing, dropout)
            if num_inducing
            else SAB(dim, num_heads, dropout)
            for _ in range(num_blocks)
        )
        self.pool = PMA(dim, num_heads, num_seeds, dropout)
        self.output_dim = dim * num_seeds

    def forward(
        self, values: Tensor, mask: Tensor | None = None, metric_ids: Tensor | None = None
    ) -> Tensor:
        """values (b, n) scaled scores; mask (b, n) True = present; metric_ids (b, n) or (n,).

        metric_ids default to 0..n-1, i.e. the column order of the model's feature names.
        """
        if values.dim() != 2:
            raise ValueError(
                f"metric values must be (batch, metrics), got shape {tuple(values.shape)}"
            )
        if mask is not None and not bool(mask.any(dim=1).all()):
            raise ValueError("every pair needs at least one present metric (mask row is all False)")
        x = self.value_projection(rearrange(values, "b n -> b n 1"))
        if self.metric_embedding is not None:
            if metric_ids is None:
                if values.shape[1] != self.num_metrics:
                    raise ValueError(
                        f"got {values.shape[1]} metric columns, the model knows {self.num_metrics}; "
                        "pass metric_ids to use a subset"
                    )
                metric_ids = torch.arange(self.num_metrics, device=values.device)
            x = x + self.metric_embedding(metric_ids.expand_as(values))
        for block in self.blocks:
            x = block(x, mask)
        return rearrange(self.pool(x, mask), "b k d -> b (k d)")
