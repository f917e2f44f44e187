"""How a span tagger is trained (``evaluator.training.spans``), apart from the training code so
that `mismatch spans` builds its parser and help from it without loading torch."""

from __future__ import annotations

from dataclasses import dataclass

from mismatch_core.config import check_at_least_one, check_learning_rate, check_seed


@dataclass
class SpanTraining:
    """How the tagger is trained (stored with the checkpoint); ValueError names a setting that
    training cannot use (no epoch at all would leave an untrained tagger; a seed outside
    0..2**32-1 fails numpy and pandas)."""

    dim: int = 64
    epochs: int = 8
    batch_size: int = 64
    learning_rate: float = 2e-3
    patience: int = 2
    seed: int = 13

    def __post_init__(self) -> None:
        check_at_least_one(
            {name: getattr(self, name) for name in ("dim", "epochs", "batch_size", "patience")}
        )
        if self.dim % 2:
            raise ValueError(f"dim must be even (two GRU directions), got {self.dim}")
        check_learning_rate(self.learning_rate)
        check_seed(self.seed)
