"""The metric map's starting fit: per criterion, a ridge regression of the ratings on the
scaled metric features, its penalty chosen on the training records.

The ratings start from this fit, and with ``rating_mix`` it is the part the learned rating
must earn its place against. One penalty for every criterion (10) left criteria where the
fit ranks held-out outputs below single metrics it reads: a few hundred rated groups and 41
correlated features want more shrinkage on some criteria (WebNLG 2020 relevance) and less on
others (SummEval coherence). With several candidate penalties each criterion takes the one
whose fits rank the held-out folds of a grouped K-fold split of the training records best
(mean Kendall τ-b), so the choice never sees the validation or test groups
(docs/experiments/2026-11-26-ridge-penalty-by-cv).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from sklearn.model_selection import GroupKFold
from torch import Tensor

from evaluator.finetune.agreement import kendall

FOLDS = 5


def ridge_fit(x: Tensor, y: Tensor, alpha: float) -> tuple[Tensor, Tensor]:
    """Weights and intercept minimising |y - x w - b|^2 + alpha |w|^2 (closed form)."""
    mean_x, mean_y = x.mean(dim=0), y.mean()
    centred = x - mean_x
    gram = centred.T @ centred + alpha * torch.eye(x.shape[1], dtype=x.dtype)
    weight = torch.linalg.solve(gram, centred.T @ (y - mean_y))
    return weight, mean_y - mean_x @ weight


def choose_alpha(x: Tensor, y: Tensor, groups: Sequence[str], alphas: Sequence[float]) -> float:
    """The penalty in ``alphas`` whose fits rank held-out groups best: mean Kendall τ-b over
    the folds of a grouped K-fold split (at most FOLDS, one per group with fewer groups). A
    tie keeps the earlier penalty; with one penalty, or fewer than two groups, the first."""
    if len(alphas) == 0:
        raise ValueError("choose_alpha needs at least one penalty")
    distinct = len(set(groups))
    if len(alphas) == 1 or distinct < 2:
        return float(alphas[0])
    folds = GroupKFold(n_splits=min(FOLDS, distinct))
    scores = np.zeros(len(alphas))
    for fit_rows, held_rows in folds.split(np.zeros(len(groups)), groups=list(groups)):
        fit_x, fit_y, held_x = x[fit_rows], y[fit_rows], x[held_rows]
        held_y = y[held_rows].numpy()
        for k, alpha in enumerate(alphas):
            weight, bias = ridge_fit(fit_x, fit_y, alpha)
            scores[k] += kendall((held_x @ weight + bias).numpy(), held_y)
    return float(alphas[int(np.argmax(scores))])
