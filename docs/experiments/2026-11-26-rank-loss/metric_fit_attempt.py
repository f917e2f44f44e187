"""Where a task's metric map starts: per criterion, a linear fit of the scaled metric scores.

Fine-tuning starts the metric map at this fit (and, with ``rating_mix``, keeps it frozen as
the part the learned rating is mixed with). A ridge fit with one fixed penalty suits some
criteria and not others: on a few hundred rated groups (USR) it overfits the 41 correlated
metrics, and on a criterion one metric captures (SummEval fluency: repeated words) the
least-squares mix ranks worse than that metric alone, so the rating started below its best
input metric (docs/results.md). ``select_metric_fit`` chooses, per criterion, among ridge
fits of several penalties and each single metric, the candidate with the best mean Kendall τ
on held-out groups of the training records (group k-fold): the choice sees only the records
it will be fitted on, and a single metric wins only where it ranks unseen groups better.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import GroupKFold

from evaluator.finetune.agreement import kendall

RIDGE_ALPHAS = (1.0, 10.0, 100.0, 1000.0)  # L2 penalties tried on the scaled metric scores
FOLDS = 5


@dataclass(frozen=True)
class MetricFit:
    """A linear map of the metric scores to one criterion; ``name`` says which candidate."""

    weight: np.ndarray
    bias: float
    name: str

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return x @ self.weight + self.bias


def ridge_fit(x: np.ndarray, y: np.ndarray, alpha: float) -> tuple[np.ndarray, float]:
    """Weights and intercept minimising |y - x w - b|^2 + alpha |w|^2 (closed form)."""
    mean_x, mean_y = x.mean(axis=0), y.mean()
    centred = x - mean_x
    gram = centred.T @ centred + alpha * np.eye(x.shape[1])
    weight = np.linalg.solve(gram, centred.T @ (y - mean_y))
    return weight, float(mean_y - mean_x @ weight)


def single_metric_fit(x: np.ndarray, y: np.ndarray, column: int) -> tuple[np.ndarray, float]:
    """Least squares of y on the one metric at ``column`` (the other weights 0): the metric
    itself, oriented and put on the criterion's scale."""
    values = x[:, column]
    spread = values - values.mean()
    slope = float(spread @ (y - y.mean()) / max(float(spread @ spread), 1e-12))
    weight = np.zeros(x.shape[1])
    weight[column] = slope
    return weight, float(y.mean() - slope * values.mean())


def candidate_fits(
    x: np.ndarray, y: np.ndarray, names: list[str], alphas: tuple[float, ...]
) -> list[MetricFit]:
    """Every candidate fitted on (x, y): a ridge fit per penalty, then each single metric."""
    fits = [MetricFit(*ridge_fit(x, y, alpha), f"ridge alpha={alpha:g}") for alpha in alphas]
    for column, name in enumerate(names):
        fits.append(MetricFit(*single_metric_fit(x, y, column), f"metric {name}"))
    return fits


def select_metric_fit(
    x: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
    names: list[str],
    alphas: tuple[float, ...] = RIDGE_ALPHAS,
    folds: int = FOLDS,
) -> MetricFit:
    """The candidate (``candidate_fits``) with the best mean τ over ``folds`` group folds,
    refitted on all of (x, y); ties keep the earlier candidate (ridge before single metrics,
    smaller penalty first). With fewer groups than folds, the first ridge penalty's fit."""
    if len(np.unique(groups)) < folds:
        return candidate_fits(x, y, names, alphas[:1])[0]
    totals = np.zeros(len(alphas) + len(names))
    for fit_rows, held_rows in GroupKFold(n_splits=folds).split(x, y, groups):
        fits = candidate_fits(x[fit_rows], y[fit_rows], names, alphas)
        totals += [kendall(fit(x[held_rows]), y[held_rows]) for fit in fits]
    chosen = int(np.argmax(totals))  # the first of equal totals
    return candidate_fits(x, y, names, alphas)[chosen]
