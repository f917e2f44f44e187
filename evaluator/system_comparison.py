"""Two or more systems scored on the same pairs, each compared with the first (the baseline).

What sacrebleu's paired tests and COMET's ``comet-compare`` give for their scores, here for
the mean score (P(NoContr)), each rating of a task checkpoint and the share of pairs labelled
with each error class:
- a 95 % bootstrap percentile interval of each system's mean (``scipy.stats.bootstrap``);
- the difference to the baseline, the mean of the per-pair differences, with its bootstrap
  interval and the p-value of paired approximate randomization (Riezler and Maxwell 2005;
  sacrebleu's --paired-ar): the share of resamples, each flipping the sign of some pairs'
  differences (the two systems' outputs of those pairs swapped), whose mean difference is at
  least as far from zero as the one seen, counting the seen one, (c + 1) / (R + 1)
  (``scipy.stats.permutation_test``); when the 2 ** n sign patterns of n pairs number no more
  than R, every one is counted, the seen one included, and p is their exact share.
Every figure is drawn with a fresh generator from ``seed``, so a figure does not depend on
which others are computed, and equal inputs give equal figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from evaluator.predict_io import Prediction
from mismatch_core.taxonomy import ERROR_CODES

CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 1000
MIN_RESAMPLES = 100  # fewer give no usable interval: its ends are single resamples
# resamples per scipy batch x pairs: scipy holds a few arrays of that size (int64 indices,
# float64 values), so memory stays bounded (one difference at 1,000 resamples, measured: 270 MB
# more at peak for 20,000 pairs, 380 MB for 200,000) and large batches keep it fast
MAX_BATCH_VALUES = 1 << 22


@dataclass(frozen=True)
class Mean:
    """A system's mean over the pairs and its bootstrap interval."""

    mean: float
    low: float
    high: float


@dataclass(frozen=True)
class Difference:
    """system - baseline: the mean per-pair difference, its bootstrap interval, and the
    p-value of the hypothesis that the two systems score alike (paired randomization)."""

    delta: float
    low: float
    high: float
    p_value: float


def _batch(pairs: int) -> int:
    return max(1, MAX_BATCH_VALUES // pairs)


def mean_interval(values: np.ndarray, resamples: int, seed: int) -> Mean:
    """The mean of ``values`` (at least 2) with its bootstrap percentile interval; a constant
    has the interval of its value."""
    values = np.asarray(values, dtype=np.float64)
    mean = float(values.mean())
    if np.ptp(values) == 0:
        return Mean(mean, mean, mean)
    result = stats.bootstrap(
        (values,),
        np.mean,
        n_resamples=resamples,
        batch=_batch(len(values)),
        confidence_level=CONFIDENCE,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    interval = result.confidence_interval
    return Mean(mean, float(interval.low), float(interval.high))


def _distance_from_zero(differences: np.ndarray, axis: int) -> np.ndarray:
    """|mean difference|: a resample is as extreme as the one seen when at least this far."""
    return np.abs(differences.mean(axis=axis))


def randomization_is_exact(pairs: int, resamples: int) -> bool:
    """Whether the randomization p-value of ``pairs`` differences enumerates every sign
    pattern (scipy does when there are no more, 2 ** pairs, than ``resamples``) or samples."""
    return pairs < resamples.bit_length()  # 2 ** pairs <= resamples


def paired_difference(
    baseline: np.ndarray, system: np.ndarray, resamples: int, seed: int
) -> Difference:
    """system - baseline over the same pairs (at least 2): mean difference, bootstrap interval
    and two-sided randomization p-value (1.0 where every pair scores alike)."""
    differences = np.asarray(system, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
    spread = mean_interval(differences, resamples, seed)
    if np.all(differences == 0):
        return Difference(0.0, 0.0, 0.0, 1.0)
    test = stats.permutation_test(
        (differences,),
        _distance_from_zero,
        permutation_type="samples",
        vectorized=True,
        n_resamples=resamples,
        batch=_batch(len(differences)),
        alternative="greater",
        rng=np.random.default_rng(seed),
    )
    return Difference(spread.mean, spread.low, spread.high, float(test.pvalue))


def compare_quantity(
    names: Sequence[str], values: Sequence[np.ndarray], resamples: int, seed: int
) -> dict[str, dict]:
    """name -> {mean, low, high} for every system, plus {delta, delta_low, delta_high, p_value}
    against the first one for the others."""
    result = {}
    for index, (name, column) in enumerate(zip(names, values, strict=True)):
        row = asdict(mean_interval(column, resamples, seed))
        if index > 0:
            difference = paired_difference(values[0], column, resamples, seed)
            row |= {
                "delta": difference.delta,
                "delta_low": difference.low,
                "delta_high": difference.high,
                "p_value": difference.p_value,
            }
        result[name] = row
    return result


def compare_systems(
    names: Sequence[str],
    predictions: Sequence[Sequence[Prediction]],
    rating_keys: Sequence[str],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 13,
) -> dict:
    """Every comparison of the systems' predictions (one list per system, pair i of each on
    the same reference): ``score``, ``ratings`` (criterion ->) and ``labels`` (error class ->,
    the share of pairs that list it; only classes some system lists), each name -> figures."""
    if len(names) < 2 or len(names) != len(predictions):
        raise ValueError("name two or more systems, one list of predictions each")
    if len(set(names)) != len(names):
        raise ValueError(f"each system needs its own name, got {list(names)}")
    pairs = {len(rows) for rows in predictions}
    if len(pairs) != 1:
        raise ValueError(f"the systems have different numbers of pairs: {sorted(pairs)}")
    if pairs.pop() < 2:
        raise ValueError("a comparison needs at least 2 pairs")
    if resamples < MIN_RESAMPLES:
        raise ValueError(f"resamples must be at least {MIN_RESAMPLES}, got {resamples}")

    def compare(column, what: str) -> dict[str, dict]:
        values = [np.array([column(p) for p in rows], dtype=np.float64) for rows in predictions]
        for name, rows, row in zip(names, predictions, values, strict=True):
            bad = np.flatnonzero(~np.isfinite(row))  # a NaN gave the most significant p of all
            if bad.size:
                pair = rows[int(bad[0])].id
                raise ValueError(f"system {name!r}, pair {pair!r}: {what} is {row[bad[0]]}")
        return compare_quantity(names, values, resamples, seed)

    for name, rows in zip(names, predictions, strict=True):
        lacking = next(((p, k) for p in rows for k in rating_keys if k not in p.ratings), None)
        if lacking is not None:
            raise ValueError(
                f"system {name!r}, pair {lacking[0].id!r}: no rating {lacking[1]!r} (the "
                "systems must be scored by one checkpoint)"
            )

    labelled = {code for rows in predictions for p in rows for code in p.labels}
    return {
        "score": compare(lambda p: p.score, "the score"),
        "ratings": {
            key: compare(lambda p, key=key: p.ratings[key], f"rating {key!r}")
            for key in rating_keys
        },
        "labels": {
            code: compare(lambda p, code=code: float(code in p.labels), code)
            for code in ERROR_CODES
            if code in labelled
        },
    }


def _interval(low: float, high: float, digits: int, sign: str = "") -> str:
    return f"[{low:{sign}.{digits}f}, {high:{sign}.{digits}f}]"


def _mean_table(title: str, figures: dict[str, dict], names: Sequence[str]) -> list[str]:
    """A row per system: mean and interval; after the baseline, the difference, its interval
    and p."""
    rows = [["system", "mean", "95% CI", "vs base", "95% CI", "p"]]
    for name in names:
        row = figures[name]
        cells = [name, f"{row['mean']:.3f}", _interval(row["low"], row["high"], 3)]
        if "delta" in row:
            cells += [
                f"{row['delta']:+.3f}",
                _interval(row["delta_low"], row["delta_high"], 3, "+"),
                f"{row['p_value']:.4f}",
            ]
        rows.append(cells)
    return [title, *_aligned(rows)]


def _labels_table(labels: dict[str, dict], names: Sequence[str]) -> list[str]:
    """A row per error class: each system's share of pairs labelled with it (percent), then
    each other system's difference to the baseline in points and its p."""
    rows = [["class", *names, *(f"{name} vs {names[0]}" for name in names[1:])]]
    for code, figures in labels.items():
        shares = [f"{figures[name]['mean'] * 100:.1f}" for name in names]
        deltas = [
            f"{figures[name]['delta'] * 100:+.1f} (p {figures[name]['p_value']:.4f})"
            for name in names[1:]
        ]
        rows.append([code, *shares, *deltas])
    return ["% of pairs labelled with each error class", *_aligned(rows)]


def _aligned(rows: list[list[str]]) -> list[str]:
    """Columns padded to their widest cell; the first left-aligned, the others right."""
    widths = [max(len(row[i]) for row in rows if i < len(row)) for i in range(len(rows[0]))]
    return [
        "  ".join(
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)
        ).rstrip()
        for row in rows
    ]


def comparison_report(comparison: dict, names: Sequence[str]) -> str:
    """The comparison as text: a table for the score and for each rating (a row per system,
    the first the baseline), and one of the label shares (a row per class some system lists)."""
    blocks = [
        _mean_table("score = mean P(NoContr) (1 = no error found)", comparison["score"], names)
    ]
    blocks += [
        _mean_table(f"rating {key}", figures, names)
        for key, figures in comparison["ratings"].items()
    ]
    if comparison["labels"]:
        blocks.append(_labels_table(comparison["labels"], names))
    return "\n\n".join("\n".join(block) for block in blocks)
