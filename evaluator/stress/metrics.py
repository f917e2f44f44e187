"""Metrics under test: our feature metrics, a mismatch checkpoint, or any Python callable.

A metric is a callable ``(refs, gens, srcs) -> scores``: ``refs[i]`` is the list of
references of pair i, ``srcs[i]`` its source text or None, and higher scores mean better.
A command-line spec names metrics by comma: a feature alias (bleu, rougeL, chrf, meteor,
bertscore) or any feature column, ``mismatch`` or ``mismatch=CHECKPOINT`` (P(NoContr)),
``mismatch=CHECKPOINT#CRITERION`` or ``#ratings`` (what a fine-tuned checkpoint rates), or
``module:function`` for an importable callable.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from mismatch_core.checkpoint_files import resolve_checkpoint
from mismatch_core.errors import CheckpointError
from mismatch_core.resources import DEFAULT_CHECKPOINT

MetricFn = Callable[[Sequence[Sequence[str]], Sequence[str], Sequence["str | None"]], ArrayLike]

FEATURE_ALIASES = {
    "bleu": "bleu",
    "rougeL": "rougeL_f",
    "chrf": "chrf",
    "meteor": "meteor",
    "bertscore": "bertscore_f",
}
DEFAULT_METRICS = "bleu,rougeL,chrf,meteor,bertscore,mismatch"
RATINGS = "ratings"  # mismatch=CHECKPOINT#ratings: the mean of a fine-tuned checkpoint's criteria


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


def mismatch_metric(
    checkpoint: str | Path = DEFAULT_CHECKPOINT, rating: str | None = None
) -> MetricFn:
    """A mismatch checkpoint's score for each pair, its likeliest reading's (as predict's).

    rating None: P(NoContr). A fine-tuned checkpoint can instead be scored by what it was
    trained to predict: one criterion (``relevance``; a class probability for a classification
    task) or ``ratings``, the mean of its criteria, each scaled to [0, 1] by its human scale.
    The values are those ``Evaluator.predict`` gives a user.
    """
    from evaluator.evaluator import Evaluator

    name, revision = resolve_checkpoint(str(checkpoint))
    evaluator = Evaluator.from_pretrained(name, revision=revision)
    if rating is not None:
        keys = evaluator.rating_keys
        if not keys:
            raise ValueError(
                f"checkpoint {checkpoint} is not fine-tuned on a task: it has no {rating!r}"
            )
        if rating == RATINGS and evaluator.kind == "classification":
            raise ValueError(f"checkpoint {checkpoint} classifies; name one class of {keys}")
        if rating not in (*keys, RATINGS):
            raise ValueError(
                f"checkpoint {checkpoint} rates {keys} (or {RATINGS!r}), not {rating!r}"
            )

    def score(refs, gens, srcs) -> np.ndarray:
        predictions = evaluator.predict(  # scores and ratings only: no spans to tag
            [list(r) for r in refs], list(gens), list(srcs), progress=False, spans=False
        )
        if rating is None:
            return np.array([p.score for p in predictions])
        if rating == RATINGS:
            return np.array(
                [
                    np.mean([c.normalise(p.ratings[c.key]) for c in evaluator.criteria])
                    for p in predictions
                ]
            )
        return np.array([p.ratings[rating] for p in predictions])

    return score


def imported_metric(spec: str) -> MetricFn:
    """The callable ``function`` of ``module`` for a ``module:function`` spec."""
    module_name, _, attribute = spec.partition(":")
    try:
        value = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        own = isinstance(error, ModuleNotFoundError) and error.name == module_name.split(".")[0]
        hint = "; a module of your own must be importable: run with PYTHONPATH=<its folder>"
        raise ValueError(f"cannot import metric {spec!r}: {error}{hint if own else ''}") from None
    if not callable(value):
        raise ValueError(f"metric {spec!r} is not callable")

    def score(refs, gens, srcs):
        # the user's code: a failure names the metric instead of ending in its traceback
        try:
            return value(refs, gens, srcs)
        except Exception as error:
            raise ValueError(
                f"metric {spec!r} failed on (refs, gens, srcs): {type(error).__name__}: {error}"
            ) from error

    return score


def is_mismatch(name: str) -> bool:
    return name == "mismatch" or name.startswith("mismatch=")


def mismatch_spec(name: str) -> tuple[str, str | None]:
    """(checkpoint, rating or None) of a ``mismatch[=CHECKPOINT][#CRITERION]`` metric name;
    ValueError for a ``#`` with no criterion after it (it scored P(NoContr) under that name)."""
    path, hashed, rating = name.partition("=")[2].partition("#")
    if hashed and not rating.strip():
        raise ValueError(f"metric {name!r}: name a criterion or 'ratings' after '#'")
    return path or DEFAULT_CHECKPOINT, rating or None


def signatures(names: Sequence[str]) -> dict[str, dict]:
    """The reproducibility signature of every mismatch metric among ``names``."""
    from evaluator.hub import load
    from evaluator.signature import signature

    found = {}
    for name in names:
        if is_mismatch(name):
            found[name] = signature(load(*resolve_checkpoint(mismatch_spec(name)[0]))).to_dict()
    return found


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
        if is_mismatch(name):
            path, rating = mismatch_spec(name)
            try:
                metrics[name] = mismatch_metric(path, rating)
            except CheckpointError as error:  # which of the metrics names it
                raise CheckpointError(f"metric {name!r}: {error}") from None
        elif name in FEATURE_ALIASES or name in available_features():
            metrics[name] = feature_metric(FEATURE_ALIASES.get(name, name))
        elif ":" in name:
            metrics[name] = imported_metric(name)
        else:
            raise ValueError(
                f"unknown metric {name!r}; use {', '.join(FEATURE_ALIASES)}, a feature column, "
                "mismatch[=CHECKPOINT[@REVISION][#CRITERION|#ratings]] or module:function"
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
    raw = metric(refs, gens, srcs)
    try:
        scores = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"metric {name!r} did not return one number per pair: {error}") from None
    if scores.shape != (len(gens),):
        raise ValueError(f"metric {name!r} returned shape {scores.shape} for {len(gens)} pairs")
    if not np.isfinite(scores).all():
        raise ValueError(f"metric {name!r} returned a non-finite score")
    return scores
