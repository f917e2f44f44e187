"""Rank agreement between scores and human ratings, as every results table reports it."""

from __future__ import annotations

import numpy as np
from scipy.stats import kendalltau, spearmanr


def kendall(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall tau-b, 0 where it is undefined (a constant side)."""
    value = kendalltau(x, y).statistic
    return 0.0 if np.isnan(value) else float(value)


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    value = spearmanr(x, y).statistic
    return 0.0 if np.isnan(value) else float(value)
