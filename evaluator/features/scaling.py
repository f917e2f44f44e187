"""Robust min-max scaling of features to [0, 1], fitted once on the training split.

Each feature maps its low quantile to 0 and its high quantile to 1 and is clipped outside,
so a few extreme pairs (a TER of 400) do not squash everyone else. The fitted bounds travel
inside model checkpoints as plain JSON (`to_dict`) and are never refitted at predict time.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

SCALER_FORMAT = 1


class FeatureScaler:
    """Per-feature [low, high] bounds; `transform` gives float32 in [0, 1] in `names` order."""

    def __init__(
        self,
        names: list[str],
        low: list[float],
        high: list[float],
        quantiles: tuple[float, float] = (0.01, 0.99),
    ) -> None:
        if not (len(names) == len(low) == len(high)):
            raise ValueError("names, low and high must have the same length")
        if len(set(names)) != len(names):
            raise ValueError("feature names must be distinct")
        self.names = list(names)
        self.low = np.asarray(low, dtype=np.float64)
        self.high = np.asarray(high, dtype=np.float64)
        if not (np.isfinite(self.low).all() and np.isfinite(self.high).all()):
            raise ValueError("scaler bounds must be finite")
        if (self.high < self.low).any():
            raise ValueError("scaler bounds must satisfy low <= high")
        self.quantiles = (float(quantiles[0]), float(quantiles[1]))

    @classmethod
    def fit(
        cls, frame: pd.DataFrame, quantiles: tuple[float, float] = (0.01, 0.99)
    ) -> FeatureScaler:
        """Fit bounds on every column of `frame` (training split features)."""
        low_q, high_q = quantiles
        if not 0.0 <= low_q < high_q <= 1.0:
            raise ValueError(f"quantiles must satisfy 0 <= low < high <= 1, got {quantiles}")
        if len(frame) == 0:
            raise ValueError("cannot fit a scaler on an empty frame")
        values = checked_values(frame, list(frame.columns))
        low = np.quantile(values, low_q, axis=0)
        high = np.quantile(values, high_q, axis=0)
        return cls([str(name) for name in frame.columns], low.tolist(), high.tolist(), quantiles)

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """float32 (n, len(names)) in [0, 1]; a constant feature maps to 0 at or below its bound, 1 above."""
        values = checked_values(frame, self.names)
        span = self.high - self.low
        safe_span = np.where(span > 0, span, 1.0)
        scaled = np.where(span > 0, (values - self.low) / safe_span, (values > self.low) * 1.0)
        return np.clip(scaled, 0.0, 1.0).astype(np.float32)

    def to_dict(self) -> dict:
        """JSON-serialisable state (plain lists and floats)."""
        return {
            "format": SCALER_FORMAT,
            "names": list(self.names),
            "low": [float(value) for value in self.low],
            "high": [float(value) for value in self.high],
            "quantiles": list(self.quantiles),
        }

    @classmethod
    def from_dict(cls, state: Mapping) -> FeatureScaler:
        """Rebuild a scaler saved by `to_dict`; ValueError names a missing or wrong field."""
        missing = [
            key for key in ("format", "names", "low", "high", "quantiles") if key not in state
        ]
        if missing:
            raise ValueError(f"scaler state lacks {', '.join(missing)}")
        if state["format"] != SCALER_FORMAT:
            raise ValueError(f"scaler format {state['format']!r} is not {SCALER_FORMAT}")
        return cls(list(state["names"]), state["low"], state["high"], tuple(state["quantiles"]))


def checked_values(frame: pd.DataFrame, names: list[str]) -> np.ndarray:
    """The named columns as float64; errors name missing columns or non-finite values."""
    missing = [name for name in names if name not in frame.columns]
    if missing:
        raise KeyError(f"feature column(s) missing: {', '.join(missing)}")
    values = frame[names].to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        column = names[int(np.argwhere(bad)[0][1])]
        raise ValueError(f"feature {column!r} has {int(bad.sum())} NaN or infinite value(s)")
    return values
