"""Feature registry: every metric has a stable name, a version and a batched implementation.

A metric computes one or more feature columns at once (ROUGE gives P/R/F for three variants
from one tokenisation). Feature columns are what callers name; the registry maps each column
back to the metric that produces it, and the metric's version keys the feature cache, so a
version bump recomputes exactly the columns it owns.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

# The default feature set, in the stable column order used by scalers and checkpoints.
DEFAULT_FEATURES: tuple[str, ...] = (
    "rouge1_p", "rouge1_r", "rouge1_f",
    "rouge2_p", "rouge2_r", "rouge2_f",
    "rougeL_p", "rougeL_r", "rougeL_f",
    "bleu", "chrf", "chrf_pp", "meteor",
    "length_ratio", "edit_distance",
    "novel_1gram", "novel_2gram", "novel_3gram", "coverage", "density", "compression",
    "numbers_agree", "negation_agree", "entities_agree",
    "bertscore_p", "bertscore_r", "bertscore_f", "embed_cos",
    "wordnet_synonym", "wordnet_antonym", "wordnet_hypernym", "wordnet_hyponym",
    "wordnet_sibling", "wordnet_changed",
    "changed_time", "changed_place", "changed_person", "changed_attribute",
    "repeat_word", "repeat_phrase", "repeat_trigram",
)  # fmt: skip


# How each column reads over several references, for ratings that read them all
# (``evaluator.inference.over_references``). A closeness column says how near gen is to a
# reference: +1 a similarity or overlap (an exact copy reads highest), read at its max; -1 a
# distance or novelty (a copy reads 0), read at its min. 0: a column that says what kind of
# difference there is (agreement of numbers, negation and names; the kind of changed words;
# repetition; order and question words) or a ratio, read at the one reference that reads
# closest on the closeness columns. Read at its best, such a column took an unrelated
# reference's value: one that shares no place name with gen has no place changed, so a wrong
# city beside it went unseen.
CLOSER: dict[str, int] = {
    **dict.fromkeys(("bertscore_p", "bertscore_r", "bertscore_f", "embed_cos"), 1),
    **dict.fromkeys((f"rouge{kind}_{part}" for kind in ("1", "2", "L") for part in "prf"), 1),
    **dict.fromkeys(("bleu", "chrf", "chrf_pp", "meteor", "coverage", "density"), 1),
    **dict.fromkeys(("ter", "edit_distance", "novel_1gram", "novel_2gram", "novel_3gram"), -1),
    **dict.fromkeys(("numbers_agree", "negation_agree", "entities_agree"), 0),
    **dict.fromkeys(("wordnet_synonym", "wordnet_antonym", "wordnet_hypernym"), 0),
    **dict.fromkeys(("wordnet_hyponym", "wordnet_sibling", "wordnet_changed", "verb_antonym"), 0),
    **dict.fromkeys(("changed_time", "changed_place", "changed_person", "changed_attribute"), 0),
    **dict.fromkeys(("repeat_word", "repeat_phrase", "repeat_trigram"), 0),
    **dict.fromkeys(("question_changed", "order_flipped", "unfinished_end"), 0),
    **dict.fromkeys(("length_ratio", "compression", "disfluency"), 0),
}


class Metric(ABC):
    """A CPU metric over (reference, generated) string pairs; one array column per feature."""

    name: ClassVar[str]
    version: ClassVar[int]
    columns: ClassVar[tuple[str, ...]]

    @abstractmethod
    def compute(self, refs: Sequence[str], gens: Sequence[str]) -> np.ndarray:
        """float64 array (len(refs), len(columns)) of finite values."""


class PairMetric(Metric):
    """A one-column CPU metric scored one pair at a time."""

    @abstractmethod
    def score(self, ref: str, gen: str) -> float:
        """The finite value of the pair."""

    def compute(self, refs: Sequence[str], gens: Sequence[str]) -> np.ndarray:
        scores = [self.score(ref, gen) for ref, gen in zip(refs, gens, strict=True)]
        return np.asarray(scores, dtype=np.float64).reshape(-1, 1)


class EncoderMetric(ABC):
    """A metric over the shared encoder pass: it reads each text's encoded states."""

    name: ClassVar[str]
    version: ClassVar[int]
    columns: ClassVar[tuple[str, ...]]
    # the pass also runs the disfluency detector for it (EncodedText.disfluency)
    needs_disfluency: ClassVar[bool] = False

    @abstractmethod
    def compute(self, refs: Sequence, gens: Sequence) -> np.ndarray:
        """float64 array (len(refs), len(columns)) from `EncodedText` pairs."""


METRICS: dict[str, type[Metric] | type[EncoderMetric]] = {}
COLUMN_TO_METRIC: dict[str, str] = {}


def register(metric: type[Metric] | type[EncoderMetric]):
    """Class decorator: add a metric and its columns to the registry (names must be new)."""
    if metric.name in METRICS:
        raise ValueError(f"metric {metric.name!r} is registered twice")
    for column in metric.columns:
        if column in COLUMN_TO_METRIC:
            raise ValueError(f"feature {column!r} is produced by two metrics")
        COLUMN_TO_METRIC[column] = metric.name
    METRICS[metric.name] = metric
    return metric


def available_features() -> tuple[str, ...]:
    """Every registered feature column, in registration order."""
    return tuple(COLUMN_TO_METRIC)


def metrics_for(names: Sequence[str]) -> list[str]:
    """Metric names needed for the feature columns `names`, in first-use order.

    Raises ValueError naming any unknown or repeated feature.
    """
    unknown = [name for name in names if name not in COLUMN_TO_METRIC]
    if unknown:
        raise ValueError(
            f"unknown feature(s) {', '.join(map(repr, unknown))}; "
            f"available: {', '.join(available_features())}"
        )
    repeated = sorted({name for name in names if list(names).count(name) > 1})
    if repeated:
        raise ValueError(f"feature(s) named twice: {', '.join(repeated)}")
    return list(dict.fromkeys(COLUMN_TO_METRIC[name] for name in names))


def check_source_columns(names: Sequence[str]) -> None:
    """ValueError for an unknown or repeated feature, or one of the encoder's, among columns
    read against a source: a source (a whole document) is read by the lexical metrics only,
    which need no truncation to the encoder's length."""
    encoder = [name for name in metrics_for(names) if is_encoder_metric(name)]
    if encoder:
        raise ValueError(
            f"{', '.join(encoder)} read the encoder; a source is read by the lexical metrics only"
        )


def is_encoder_metric(metric_name: str) -> bool:
    return issubclass(METRICS[metric_name], EncoderMetric)


def encoder_metric(metric_name: str) -> EncoderMetric:
    """A new instance of the encoder metric ``metric_name``; ValueError for a CPU metric."""
    metric = METRICS[metric_name]
    if not issubclass(metric, EncoderMetric):
        raise ValueError(f"{metric_name!r} is not an encoder metric")
    return metric()
