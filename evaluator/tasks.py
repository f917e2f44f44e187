"""Registry of the 7 evaluation tasks: their human-rating files, criteria and human scales;
and a task made from a user's own ratings file (``ratings_task``).

A criterion is reported on its human scale and trained on [0, 1] (``normalise``). Where
two datasets of one task use the same criterion name on different scales (WebNLG 2017
fluency 1-3, WebNLG 2020 fluency 0-100), the later one is keyed ``name@dataset``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluator.human_data import HumanRecord, load_records
from mismatch_core.errors import DataError
from mismatch_core.resources import data_dir


@dataclass(frozen=True)
class Criterion:
    key: str  # the name in outputs and checkpoints
    source: str  # the key in the record's scores
    low: float
    high: float

    def normalise(self, value: float) -> float:
        return (value - self.low) / (self.high - self.low)

    def denormalise(self, value: float) -> float:
        return self.low + value * (self.high - self.low)


SATURATION = 0.05  # the top and bottom share of the normalised scale where ratings saturate


def bounded_ratings(raw: np.ndarray) -> np.ndarray:
    """Raw rating outputs (normalised scale) mapped into [0, 1]: unchanged within
    [SATURATION, 1 - SATURATION], approaching 0 or 1 smoothly beyond. Strictly increasing,
    so no two outputs tie that the model tells apart: clipping at 0 and 1 rated an exact
    copy and a near-copy with a wrong name alike whenever both came out above the scale."""
    raw = np.asarray(raw, dtype=np.float64)
    beyond = np.maximum(raw - (1 - SATURATION), 0) / SATURATION  # >= 0
    below = np.maximum(SATURATION - raw, 0) / SATURATION
    # x / (1 + x): slope 1 where the saturation starts, slow enough that outputs well above
    # the scale still differ in the digits predict reports
    return (
        np.clip(raw, SATURATION, 1 - SATURATION)
        + SATURATION * beyond / (1 + beyond)
        - SATURATION * below / (1 + below)
    )


@dataclass(frozen=True)
class DatasetSpec:
    file: str  # relative to <data>/human/, or absolute (a user's own ratings file)
    criteria: tuple[Criterion, ...]
    min_ratings: int = 0  # keep records whose meta.n_ratings is at least this (WMT21)
    sha256: str = ""  # a user's ratings file: the hash of the bytes read

    @property
    def described(self) -> str:
        """How a model card names it: a user's file by its name and hash, not by a path that
        only exists on the machine it was fitted on."""
        return f"{Path(self.file).name} (sha256 {self.sha256[:12]})" if self.sha256 else self.file


@dataclass(frozen=True)
class Task:
    name: str
    datasets: tuple[DatasetSpec, ...]
    kind: str = "regression"  # or "classification" (NLI: one-hot scores over classes)
    # the stem of its feature cache files (empty: the name); a user's ratings task adds the
    # file's hash, so that an edited file is never read from a cache keyed by its old ids
    feature_cache: str = ""

    @property
    def cache_stem(self) -> str:
        return self.feature_cache or self.name

    @property
    def criteria(self) -> tuple[Criterion, ...]:
        seen: dict[str, Criterion] = {}
        for spec in self.datasets:
            for criterion in spec.criteria:
                seen.setdefault(criterion.key, criterion)
        return tuple(seen.values())


def _same(
    names: tuple[str, ...], low: float, high: float, suffix: str = ""
) -> tuple[Criterion, ...]:
    return tuple(Criterion(f"{n}{suffix}", n, low, high) for n in names)


# DA z-scores are unbounded; [-3, 3] covers all but a handful of WMT segments (clipped).
_DA_Z = (Criterion("da_z", "da_z", -3.0, 3.0),)
_USR = (
    Criterion("understandable", "understandable", 0, 1),
    Criterion("natural", "natural", 1, 3),
    Criterion("maintains_context", "maintains_context", 1, 3),
    Criterion("engaging", "engaging", 1, 3),
    Criterion("uses_knowledge", "uses_knowledge", 0, 1),
    Criterion("overall", "overall", 1, 5),
)

TASKS: dict[str, Task] = {
    task.name: task
    for task in (
        Task(
            "summarization",
            (
                DatasetSpec(
                    "summarization/summeval.jsonl.gz",
                    _same(("coherence", "consistency", "fluency", "relevance"), 1, 5),
                ),
            ),
        ),
        Task(
            "translation",
            (
                DatasetSpec("translation/wmt15_da.jsonl.gz", _DA_Z),
                DatasetSpec("translation/wmt16_da.jsonl.gz", _DA_Z),
                DatasetSpec("translation/wmt17_da.jsonl.gz", _DA_Z),
                DatasetSpec("translation/wmt21_da.jsonl.gz", _DA_Z, min_ratings=2),
            ),
        ),
        Task(
            "data2text",
            (
                DatasetSpec(
                    "data2text/webnlg2017.jsonl.gz",
                    _same(("fluency", "grammar", "semantics"), 1, 3),
                ),
                DatasetSpec(
                    "data2text/webnlg2020.jsonl.gz",
                    _same(
                        ("correctness", "data_coverage", "fluency", "relevance", "text_structure"),
                        0,
                        100,
                        "@webnlg2020",
                    ),
                ),
            ),
        ),
        Task(
            "captioning",
            (
                DatasetSpec(
                    "captioning/flickr8k_expert.jsonl.gz",
                    (Criterion("relevance", "relevance", 1, 4),),
                ),
                DatasetSpec(
                    "captioning/flickr8k_cf.jsonl.gz",
                    (Criterion("yes_fraction", "yes_fraction", 0, 1),),
                ),
            ),
        ),
        Task(
            "question_generation",
            tuple(
                DatasetSpec(
                    f"question_generation/nema2018_{name}.jsonl.gz",
                    (Criterion("answerability", "answerability", 1, 5),),
                )
                for name in ("squad", "vqa", "wikimovies")
            ),
        ),
        Task(
            "dialogue",
            (
                DatasetSpec("dialogue/usr_topicalchat.jsonl.gz", _USR),
                DatasetSpec("dialogue/usr_personachat.jsonl.gz", _USR),
            ),
        ),
        Task(
            "nli",
            (
                DatasetSpec(
                    "nli/mnli_dev_matched.jsonl.gz",
                    _same(("entailment", "neutral", "contradiction"), 0, 1),
                ),
            ),
            kind="classification",
        ),
    )
}


def get_task(name: str) -> Task:
    try:
        return TASKS[name]
    except KeyError:
        raise KeyError(f"unknown task {name!r}; known: {', '.join(TASKS)}") from None


TASK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def ratings_task(
    path: str | Path, name: str | None = None, scales: dict[str, tuple[float, float]] | None = None
) -> Task:
    """A regression task of a user's own ratings file (the normalised schema, see
    ``evaluator.human_data``): one criterion per key of its records' scores, in the order they
    first appear, on the scale ``scales`` gives or else the lowest to the highest value the file
    holds. ``name`` (default: the file name before .jsonl) names the task in the checkpoint and
    in results. DataError names the file and the problem."""
    path = Path(path).expanduser().resolve()
    records = load_records(path)
    if not records:
        raise DataError(f"{path}: no records")
    name = name if name is not None else path.name.split(".jsonl")[0]
    if not TASK_NAME.fullmatch(name):
        raise DataError(
            f"task name {name!r}: use letters, digits, '_', '.' or '-', starting with a letter "
            "or digit"
        )
    if name in TASKS:
        raise DataError(f"task name {name!r} is a shipped task's; name yours otherwise")
    values: dict[str, list[float]] = {}
    for record in records:
        for key, value in record.scores.items():
            values.setdefault(key, []).append(value)
    if not values:
        raise DataError(f"{path}: no record has a score")
    scales = dict(scales or {})
    unknown = sorted(set(scales) - set(values))
    if unknown:
        raise DataError(
            f"{path}: no record scores {', '.join(map(repr, unknown))} (criteria: "
            f"{', '.join(values)})"
        )
    criteria = []
    for key, seen in values.items():
        low, high = scales.get(key, (min(seen), max(seen)))
        if not low < high:
            given = "the scale given" if key in scales else "every record"
            raise DataError(
                f"{path}: criterion {key!r}: {given} leaves no range to learn ({low} to {high})"
            )
        criteria.append(Criterion(key, key, float(low), float(high)))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return Task(
        name,
        (DatasetSpec(str(path), tuple(criteria), sha256=digest),),
        feature_cache=f"{name}-{digest[:12]}",
    )


def human_root(root: str | Path | None = None) -> Path:
    """The folder of the human-rating sets: ``root`` (a --data-root or data.data_root), or the
    shared data's human/ when it is None or empty."""
    return Path(root) if root else data_dir() / "human"


def missing_data_file(task: Task, root: str | Path | None = None) -> Path | None:
    """The first of ``task``'s data files that does not exist under ``human_root(root)``, or
    None; a run over several tasks checks them all before its first fit, not when a task's turn
    comes."""
    folder = human_root(root)
    return next((folder / s.file for s in task.datasets if not (folder / s.file).is_file()), None)


def load_task_records(task: Task, root: str | Path | None = None) -> list[HumanRecord]:
    """All records of a task with scores re-keyed to the task's criterion keys (human scale),
    from ``human_root(root)``."""
    root = human_root(root)
    records = []
    for spec in task.datasets:
        for record in load_records(root / spec.file):
            if spec.min_ratings and record.meta.get("n_ratings", 0) < spec.min_ratings:
                continue
            scores = {
                c.key: record.scores[c.source] for c in spec.criteria if c.source in record.scores
            }
            records.append(HumanRecord(**{**record.__dict__, "scores": scores}))
    return records
