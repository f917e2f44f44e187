"""The settings of continued training (``evaluator.training.continued``), apart from the
training code so that `mismatch adapt` builds its parser and help from them without loading
torch."""

from __future__ import annotations

import math
from dataclasses import dataclass

from mismatch_core.config import (
    check_at_least_one,
    check_learning_rate,
    check_not_negative,
    check_seed,
)

GRADED_AGAINST = ("parent", "base")


def check_graded_against(name: str, value: str) -> None:
    """ValueError naming ``name`` unless ``value`` is one of the ways to rank graded chains."""
    if value not in GRADED_AGAINST:
        raise ValueError(f"{name} must be one of {', '.join(GRADED_AGAINST)}, got {value!r}")


@dataclass
class ContinueSettings:
    """How training continues (stored with the checkpoint); ValueError names a setting that
    training cannot use."""

    epochs: int = 8
    learning_rate: float = 3e-4
    nocontr_weights: tuple[float, ...] = (1.0, 2.0, 3.0)
    batch_size: int = 256
    weight_decay: float = 0.01
    seed: int = 13
    add_token_branch: bool = False
    add_features: tuple[str, ...] = ()
    head_only: bool = False  # add_features read by the head alone; nothing else trains
    graded_weight: float = 0.0  # the graded chains' hinge (0: not used)
    graded_margin: float = 1.0  # a copy's NoContr logit margin this far below its parent's
    graded_against: str = "parent"  # or "base": the margin once per error below the chain's base

    def __post_init__(self) -> None:
        check_at_least_one({"epochs": self.epochs, "batch_size": self.batch_size})
        check_learning_rate(self.learning_rate)
        check_not_negative(
            {"graded_weight": self.graded_weight, "graded_margin": self.graded_margin}
        )
        weights = self.nocontr_weights
        if not weights or not all(math.isfinite(w) and w > 0 for w in weights):
            raise ValueError(f"nocontr_weights must be positive numbers, got {weights}")
        check_seed(self.seed)
        check_graded_against("graded_against", self.graded_against)
