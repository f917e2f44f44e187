"""Pass/fail rule per metric and test (He et al. 2023): more noise must mean a lower score."""

from __future__ import annotations

from collections.abc import Sequence

MAJORITY = 0.5


def passes(
    scores: Sequence[float], below_gold: Sequence[float], majority: float = MAJORITY
) -> bool:
    """True when the mean score falls strictly from level to level and the noised texts rank
    below their gold.

    ``scores[0]`` is the gold's mean score and ``scores[k]`` the mean at noise level k;
    ``below_gold[k - 1]`` is the share of noised texts at level k that score strictly below
    their own gold (the rank protocol): it must exceed ``majority`` at every level, so a
    mean pulled down by a few outliers does not pass.
    """
    if len(scores) < 2 or len(below_gold) != len(scores) - 1:
        raise ValueError("need a gold score and one below-gold share per noise level")
    falling = all(later < earlier for earlier, later in zip(scores, scores[1:], strict=False))
    return falling and all(share > majority for share in below_gold)
