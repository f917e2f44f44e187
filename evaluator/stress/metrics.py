"""Metrics under test: our feature metrics, a mismatch checkpoint, or any Python callable.

A metric is a callable ``(refs, gens, srcs) -> scores``: ``refs[i]`` is the list of
references of pair i, ``srcs[i]`` its source text or None, and higher scores mean better.
A command-line spec names metrics by comma: a feature alias (bleu, rougeL, chrf, meteor,
bertscore) or any feature column, ``mismatch`` or ``mismatch=CHECKPOINT`` (P(NoContr)),
or ``module:function`` for an importable callable.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from evaluator.resources import REPO_ROOT

MetricFn = Callable[
    [Sequence[Sequence[str]], Sequence[str], Sequence["str | None"]], Sequence[float]
]

FEATURE_ALIASES = {
    "bleu": "bleu",
    "rougeL": "rougeL_f",
    "chrf": "chrf",
    "meteor": "meteor",
    "bertscore": "bertscore_f",
}
DEFAULT_CHECKPOINT = REPO_ROOT / "checkpoints" / "mismatch-base"
DEFAULT_METRICS = "bleu,rougeL,chrf,meteor,bertscore,mismatch"


def feature_metric(feature: str) -> MetricFn:
    """One column of ``evaluator.features.compute_features`` (several references: max)."""
    from evaluator.features import available_features, compute_features

    if feature not in available_features():
        raise ValueError(
            f"unknown feature {feature!r}; available: {', '.join(available_features())}"
        )

    def score(refs, gens, srcs) -> np.ndarray:
        frame = compute_features([list(r) for r in refs], list(gens), names=[feature])
        return frame[feature].to_numpy()

    return score


def mismatch_metric(checkpoint: str | Path = DEFAULT_CHECKPOINT) -> MetricFn:
    """P(NoContr) of a mismatch checkpoint, each pair read against its closest reference."""
    from evaluator.hub import load
    from evaluator.inference import predict_outputs

    loaded = load(checkpoint)

    def score(refs, gens, srcs) -> np.ndarray:
        return predict_outputs(loaded, [list(r) for r in refs], list(gens)).probabilities[:, 0]

    return score


def imported_metric(spec: str) -> MetricFn:
    """The callable ``function`` of ``module`` for a ``module:function`` spec."""
    module_name, _, attribute = spec.partition(":")
    try:
        value = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"cannot import metric {spec!r}: {error}") from None
    if not callable(value):
        raise ValueError(f"metric {spec!r} is not callable")
    return value


def parse_metrics(spec: str) -> dict[str, MetricFn]:
    """Metric name -> callable for a comma-separated spec; ValueError names a bad entry."""
    from evaluator.features import available_features

    names = [part.strip() for part in spec.split(",") if part.strip()]
    if not names:
        raise ValueError("no metric given")
    metrics: dict[str, MetricFn] = {}
    for name in names:
        if name in metrics:
            raise ValueError(f"metric {name!r} is named twice")
        if name == "mismatch" or name.startswith("mismatch="):
            path = name.partition("=")[2] or DEFAULT_CHECKPOINT
            metrics[name] = mismatch_metric(path)
        elif name in FEATURE_ALIASES or name in available_features():
            metrics[name] = feature_metric(FEATURE_ALIASES.get(name, name))
        elif ":" in name:
            metrics[name] = imported_metric(name)
        else:
            raise ValueError(
                f"unknown metric {name!r}; use {', '.join(FEATURE_ALIASES)}, a feature column, "
                "mismatch[=CHECKPOINT] or module:function"
            )
    return metrics


def run_metric(
    name: str,
    metric: MetricFn,
    refs: Sequence[Sequence[str]],
    gens: Sequence[str],
    srcs: Sequence[str | None],
) -> np.ndarray:
    """Scores as a float array, checked: one finite number per pair."""
    scores = np.asarray(metric(refs, gens, srcs), dtype=np.float64)
    if scores.shape != (len(gens),):
        raise ValueError(f"metric {name!r} returned shape {scores.shape} for {len(gens)} pairs")
    if not np.isfinite(scores).all():
        raise ValueError(f"metric {name!r} returned a non-finite score")
    return scores
