"""How much a perturbation changed a text: the noise ratio of He et al. (2023)."""

from __future__ import annotations

from rapidfuzz.distance import Levenshtein


def noise_ratio(original: str, noised: str, switching: bool = False) -> float:
    """Character Levenshtein(noised, original) / len(original), halved for switching tests.

    A switch of two units edits both places, so halving puts it on the scale of a single
    edit of the same size.
    """
    if not original:
        raise ValueError("noise ratio of an empty original text is undefined")
    ratio = Levenshtein.distance(noised, original) / len(original)
    return ratio / 2 if switching else ratio
