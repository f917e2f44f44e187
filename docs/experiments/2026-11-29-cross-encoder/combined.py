"""The reading this record reads on real text: the calibrated one-way regression of
../2026-11-29-both-directions (the base's 14 forward class log-probabilities, floored at 1e-6,
fitted on the real val split, C = 1, its intercept shifted so that it reads as many of the
split's real bases as NoContr as the shipped base does) with the cross-encoder's log-odds of
"the same meaning" as a 15th input. Without a cross-encoder it is that record's control."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

FLOOR = 1e-6


def log_odds(p: np.ndarray) -> np.ndarray:
    return np.log(np.clip(p, FLOOR, 1)) - np.log(np.clip(1 - p, FLOOR, 1))


def inputs(base: np.ndarray, xenc: np.ndarray | None) -> np.ndarray:
    logs = np.log(np.clip(base, FLOOR, 1))
    return logs if xenc is None else np.c_[logs, log_odds(xenc)]


class Combined:
    def __init__(self, regression: LogisticRegression, with_xenc: bool) -> None:
        self.regression, self.with_xenc = regression, with_xenc

    @classmethod
    def fit(cls, base: np.ndarray, xenc: np.ndarray | None, nocontr: np.ndarray, reads: int):
        """Fitted on the base's readings ``base`` (n, 14) and the cross-encoder's P(same
        meaning) ``xenc`` (n,) of pairs labelled ``nocontr``; ``reads`` of those pairs' NoContr
        ones then score >= 0.5."""
        features = inputs(base, xenc)
        regression = LogisticRegression(C=1.0, max_iter=2000).fit(features, nocontr)
        logits = regression.decision_function(features)
        regression.intercept_ = regression.intercept_ - np.sort(logits[nocontr])[::-1][reads - 1]
        return cls(regression, xenc is not None)

    def p(self, base: np.ndarray, xenc: np.ndarray | None) -> np.ndarray:
        """P(NoContr) of each pair."""
        if (xenc is not None) != self.with_xenc:
            raise ValueError("read with the inputs it was fitted on")
        return self.regression.predict_proba(inputs(base, xenc))[:, 1]

    @classmethod
    def fit_on_val(cls, pairs: Path, both_ways, xenc_readings: Path | None):
        """The reading of the rules: fitted on the real val split of PAIRS_DIR ``pairs``, with
        the base's readings ``both_ways`` (stack_probe.py's npz) and, unless None, the
        cross-encoder's (xenc_train.py's readings.npz); reads as many of the split's real bases
        as NoContr as the base does at 0.5."""
        nocontr = (pd.read_parquet(pairs / "real" / "val.parquet").label == "NoContr").to_numpy()
        base = both_ways["val_fwd"]
        xenc = None if xenc_readings is None else np.load(xenc_readings)["val"][:, 0]
        return cls.fit(base, xenc, nocontr, int((base[nocontr, 0] >= 0.5).sum()))

    def with_shares(self, base: np.ndarray, xenc: np.ndarray | None) -> np.ndarray:
        """(n, 14) class probabilities: P(NoContr) the combined reading, each error class its
        share of the base's errors."""
        p = self.p(base, xenc)
        errors = base[:, 1:] / np.clip(base[:, 1:].sum(axis=1, keepdims=True), 1e-12, None)
        return np.c_[p, errors * (1 - p)[:, None]]

    def describe(self) -> str:
        weights = self.regression.coef_[0]
        tail = f", cross-encoder {weights[14]:.3f}" if self.with_xenc else ""
        return f"log P(NoContr) {weights[0]:.3f}, error classes {weights[1:14].min():.3f}..{weights[1:14].max():.3f}{tail}, intercept {self.regression.intercept_[0]:.3f}"
