"""Robust min-max scaling of features, fitted once on the training split.

Each feature maps its low quantile to 0 and its high quantile to 1. Values outside are kept
up to ``margin`` spans beyond the bounds and clipped there, so a few extreme pairs (a TER of
400) do not squash everyone else, yet real system outputs, which sit far below the
near-copies of the synthetic data (an embedding cosine of 0.5 where synthetic pairs start at
0.8), still keep their order instead of all landing on 0. Features that grow with the texts'
length (``LENGTH_COLUMNS``) stop at their upper bound instead (the model's source columns,
``SourceScaling``, keep the margin: no shipped checkpoint reads these against a source). The
fitted bounds travel inside model checkpoints as plain JSON (`to_dict`) and are never refitted
at predict time.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    import torch

SCALER_FORMAT = 3
# the keys `to_dict` writes (earlier formats hold fewer); a stored scaler holds no other
STATE_KEYS = ("format", "names", "low", "high", "quantiles", "margin", "clipped")
DEFAULT_MARGIN = 3.0
# features whose value grows with the texts' length without bound (extractive fragment
# density: N for an exact copy of N tokens). Past the upper training bound such a value says
# only that the texts are long, and a model reads it as nothing it was trained on: kept to the
# margin, an exact copy of 190 words read as RepErr (docs/experiments/2026-11-30-long-copies).
# Below the lower bound they keep the margin like any feature.
LENGTH_COLUMNS = ("density",)

Values = TypeVar("Values", np.ndarray, "torch.Tensor")


def scale_to_bounds(values: Values, low: Values, high: Values, margin: float) -> Values:
    """``low`` -> 0 and ``high`` -> 1 per column, clipped at [-margin, 1 + margin]; a constant
    column (low == high) maps to 0 at or below its bound, 1 above. Written with operators
    alone so that NumPy arrays (``FeatureScaler``) and the torch buffers a checkpoint saves
    (the model's source columns) are scaled by the same lines. For finite values: a constant
    column turns an infinite or NaN value into NaN (the scaler refuses them; the model reads
    its source columns through ``nan_to_num``)."""
    span = high - low
    constant = span <= 0
    ratio = (values - low) / (span + constant * 1.0)
    return (ratio * ~constant + (values > low) * constant).clip(-margin, 1.0 + margin)


class FeatureScaler:
    """Per-feature [low, high] bounds; `transform` maps them to [0, 1] in `names` order and clips
    at [-margin, 1 + margin], the ``clipped`` features at [-margin, 1]."""

    def __init__(
        self,
        names: list[str],
        low: list[float],
        high: list[float],
        quantiles: tuple[float, float] = (0.01, 0.99),
        margin: float = DEFAULT_MARGIN,
        clipped: Sequence[str] = (),
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
        if not (np.isfinite(margin) and margin >= 0):
            raise ValueError(f"scaler margin must be a finite number >= 0, got {margin!r}")
        self.margin = float(margin)
        unknown = sorted(set(clipped) - set(self.names))
        if unknown:
            raise ValueError(f"clipped feature(s) {', '.join(unknown)} not among the names")
        self.clipped = tuple(name for name in self.names if name in clipped)

    @classmethod
    def fit(
        cls,
        frame: pd.DataFrame,
        quantiles: tuple[float, float] = (0.01, 0.99),
        margin: float = DEFAULT_MARGIN,
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
        names = [str(name) for name in frame.columns]
        clipped = [name for name in names if name in LENGTH_COLUMNS]
        return cls(names, low.tolist(), high.tolist(), quantiles, margin, clipped)

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """float32 (n, len(names)), bounds at 0 and 1, clipped at [-margin, 1 + margin] (the
        ``clipped`` features at [-margin, 1]); a constant feature maps to 0 at or below its
        bound, 1 above."""
        values = checked_values(frame, self.names)
        scaled = scale_to_bounds(values, self.low, self.high, self.margin)
        columns = [self.names.index(name) for name in self.clipped]
        scaled[:, columns] = np.minimum(scaled[:, columns], 1.0)
        return scaled.astype(np.float32)

    def to_dict(self) -> dict:
        """JSON-serialisable state (plain lists and floats)."""
        return {
            "format": SCALER_FORMAT,
            "names": list(self.names),
            "low": [float(value) for value in self.low],
            "high": [float(value) for value in self.high],
            "quantiles": list(self.quantiles),
            "margin": self.margin,
            "clipped": list(self.clipped),
        }

    @classmethod
    def from_dict(cls, state: Mapping) -> FeatureScaler:
        """Rebuild a scaler saved by `to_dict`; ValueError names a missing or wrong field.

        Format 1 (before the margin) clipped at the bounds: it reads as margin 0. Format 2
        (before ``clipped``) kept every feature to the margin: it reads as none clipped."""
        if not isinstance(state, Mapping):
            raise ValueError(f"the scaler must be an object, got {type(state).__name__}")
        required: tuple[str, ...] = ("format", "names", "low", "high", "quantiles")
        version = state.get("format")
        if version in (2, SCALER_FORMAT):
            required += ("margin",)
        if version == SCALER_FORMAT:
            required += ("clipped",)
        missing = [key for key in required if key not in state]
        if missing:
            raise ValueError(f"scaler state lacks {', '.join(missing)}")
        if version not in (1, 2, SCALER_FORMAT):
            raise ValueError(f"scaler format {version!r} is not 1, 2 or {SCALER_FORMAT}")
        names = _names(state, "names")
        low_q, high_q = _numbers(state, "quantiles", 2)
        margin = state["margin"] if version != 1 else 0.0
        if not _is_number(margin):
            raise ValueError(f"scaler key 'margin' must be a number, got {reprlib.repr(margin)}")
        return cls(
            names,
            _numbers(state, "low", len(names)),
            _numbers(state, "high", len(names)),
            (low_q, high_q),
            margin,
            _names(state, "clipped") if "clipped" in state else (),
        )


def _names(state: Mapping, key: str) -> list[str]:
    """``state[key]`` as a list of feature names; ValueError naming the key otherwise (a
    string read as a list of its letters)."""
    value = state[key]
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise ValueError(
            f"scaler key {key!r} must be a list of feature names, got {reprlib.repr(value)}"
        )
    return value


def _numbers(state: Mapping, key: str, length: int) -> list[float]:
    """``state[key]`` as ``length`` numbers; ValueError naming the key otherwise (a short
    list of quantiles raised an IndexError, a bool read as 0 or 1)."""
    value = state[key]
    if not (isinstance(value, list) and len(value) == length and all(map(_is_number, value))):
        raise ValueError(
            f"scaler key {key!r} must be a list of {length} numbers, got {reprlib.repr(value)}"
        )
    return [float(item) for item in value]


def _is_number(value: object) -> bool:
    """A finite int or float, not a bool (JSON true reads as 1): Python's json reads NaN and
    Infinity, and an integer of 400 digits overflows a float."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def checked_values(frame: pd.DataFrame, names: list[str]) -> np.ndarray:
    """The named columns as float64; errors name missing columns or non-finite values."""
    missing = [name for name in names if name not in frame.columns]
    if missing:
        raise KeyError(f"feature column(s) missing: {', '.join(missing)}")
    values = frame[names].to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        index = int(np.argwhere(bad)[0][1])
        raise ValueError(
            f"feature {names[index]!r} has {int(bad[:, index].sum())} NaN or infinite value(s)"
        )
    return values
