"""The learned reading of both ways: a logistic regression (NoContr or not) on the forward
class log-probabilities and the reverse reading's NoContr log-odds, shared by stack_probe.py
and bench_learned.py; its control, the same regression on the forward reading alone; and
that control fitted elsewhere with its intercept set by a count (``fit_calibrated``)."""

import numpy as np
from sklearn.linear_model import LogisticRegression

FLOOR = 1e-6  # probabilities below it count as it: log 0 has no place in a regression


def one_way_inputs(forward: np.ndarray) -> np.ndarray:
    """The forward class log-probabilities (n, 14), floored at FLOOR."""
    return np.log(np.clip(forward, FLOOR, 1))


def inputs(forward: np.ndarray, reverse: np.ndarray) -> np.ndarray:
    """The forward class log-probabilities (n, 14), the reverse NoContr log-odds and their
    products with the forward probabilities (what the reverse reading is worth can depend on
    the class the forward one names)."""
    reverse_odds = np.log(np.clip(reverse, FLOOR, 1)) - np.log(np.clip(1 - reverse, FLOOR, 1))
    return np.c_[one_way_inputs(forward), reverse_odds, forward * reverse_odds[:, None]]


def fit(forward: np.ndarray, reverse: np.ndarray, nocontr: np.ndarray) -> LogisticRegression:
    """The regression fitted on the training pairs' readings (C = 1, set before any fit)."""
    return LogisticRegression(C=1.0, max_iter=2000).fit(inputs(forward, reverse), nocontr)


def fit_one_way(forward: np.ndarray, nocontr: np.ndarray) -> LogisticRegression:
    """The control: the same regression on the forward class log-probabilities alone."""
    return LogisticRegression(C=1.0, max_iter=2000).fit(one_way_inputs(forward), nocontr)


def fit_calibrated(forward: np.ndarray, nocontr: np.ndarray, reads: int) -> LogisticRegression:
    """``fit_one_way`` with its intercept shifted so that exactly ``reads`` of the NoContr
    pairs it was fitted on score >= 0.5 (the count another reading gives them)."""
    model = fit_one_way(forward, nocontr)
    logits = model.decision_function(one_way_inputs(forward))
    model.intercept_ = model.intercept_ - np.sort(logits[nocontr])[::-1][reads - 1]
    return model
