"""Registry of the 7 evaluation tasks: their human-rating files, criteria and human scales;
and a task made from a user's own ratings file (``read_ratings``).

A criterion is reported on its human scale and trained on [0, 1] (``normalise``). Where
two datasets of one task use the same criterion name on different scales (WebNLG 2017
fluency 1-3, WebNLG 2020 fluency 0-100), the later one is keyed ``name@dataset``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluator.human_data import HumanRecord, load_hashed_records, load_records
from mismatch_core.errors import DataError
from mismatch_core.pairs import first_without_source, has_text
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


def normalised_outputs(raw: np.ndarray, kind: str | None) -> np.ndarray:
    """Raw rating outputs (one row, or a row per pair) on the normalised scale: for a
    classification task each row's class probabilities (a softmax), else `bounded_ratings`."""
    raw = np.asarray(raw)
    if kind != "classification":
        return bounded_ratings(raw)
    shifted = np.exp(raw - raw.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


@dataclass(frozen=True)
class DatasetSpec:
    file: str  # relative to <data>/human/, or absolute (a user's own ratings file)
    criteria: tuple[Criterion, ...]
    min_ratings: int = 0  # keep records whose meta.n_ratings is at least this (WMT21)
    sha256: str = ""  # a user's ratings file: the hash of the bytes read

    @property
    def card_label(self) -> str:
        """How a model card names it: a user's file by its name and hash, not by a path that
        only exists on the machine it was fitted on."""
        return f"{Path(self.file).name} (sha256 {self.sha256[:12]})" if self.sha256 else self.file


@dataclass(frozen=True)
class Task:
    name: str
    datasets: tuple[DatasetSpec, ...]
    kind: str = "regression"  # or "classification" (NLI: one-hot scores over classes)

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


def as_task(task: str | Task) -> Task:
    """A Task as given (a user's ratings task), or the shipped task of that name."""
    return task if isinstance(task, Task) else get_task(task)


TASK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
# names a user's task may not take: the shipped checkpoints are checkpoints/mismatch-<name>
RESERVED_NAMES = frozenset([*TASKS, "base"])
# the least number of items (groups) a user's file, and each of its criteria, must have: evaluate
# holds out a fifth of them per seed and the fit a tenth of the rest for early stopping
MIN_GROUPS = 20


@dataclass(frozen=True)
class RatingsFile:
    """A user's ratings file as read: its task, and what a user should hear before a fit."""

    task: Task
    records: int
    items: int  # distinct groups
    sources: int  # records with a src: no rating reads it unless the config's source_features
    without_source: str | None = None  # the first record without a src (its id), if any

    def source_problem(self, reads_sources: bool) -> str | None:
        """Why a fit whose ratings read each output against its src (``reads_sources``)
        cannot use the file, or None: named before the features are computed."""
        if not reads_sources or self.without_source is None:
            return None
        return (
            f"{self.task.datasets[0].file}: record {self.without_source} has no src; ratings "
            "that read the source (data.source_features) need it on every record"
        )

    def describe(self, reads_sources: bool) -> str:
        """One line before a fit; ``reads_sources``: whether the fit's config reads each
        output against its src (data.source_features)."""
        criteria = ", ".join(f"{c.key} {c.low:g}-{c.high:g}" for c in self.task.criteria)
        line = (
            f"{self.task.name}: {self.task.datasets[0].file}, {self.records} records of "
            f"{self.items} items, criteria {criteria}"
        )
        if self.sources and not reads_sources:
            line += (
                f"; {self.sources} records have a src, which these ratings leave unread "
                "(--config configs/finetune/ratings_source.yaml reads it)"
            )
        return line


def read_ratings(
    path: str | Path,
    name: str | None = None,
    scales: dict[str, tuple[float, float]] | None = None,
    measured: bool = False,
) -> RatingsFile:
    """A regression task of a user's own ratings file (the normalised schema, see
    ``evaluator.human_data``): one criterion per key of its records' scores, in the order they
    first appear, on the scale ``scales`` gives or else the lowest to the highest value the file
    holds. ``name`` (default: the file name before .jsonl or .json, with or without .gz)
    names the task in the checkpoint and in results. ``measured``: agreement with the ratings is to be measured (``mismatch
    evaluate``), so a criterion rated alike throughout is refused even with its scale given.
    DataError names the file, the line or criterion, and what to do."""
    path = Path(path).expanduser().resolve()
    records, digest = load_hashed_records(path)  # DataError for a missing or unreadable file
    if not records:
        raise DataError(f"{path}: no records")
    what = (  # the option of mismatch finetune / evaluate, the key of scripts/finetune.py
        "choose another name (--name, or data.task)"
        if name is not None
        else "give it a name (--name NAME, or data.task)"
    )
    name = name if name is not None else re.split(r"\.jsonl?(?:\.gz)?$", path.name, flags=re.I)[0]
    if not TASK_NAME.fullmatch(name):
        raise DataError(
            f"task name {name!r}: use letters, digits, '_', '.' or '-', starting with a letter "
            f"or digit; {what}"
        )
    if name.casefold() in RESERVED_NAMES:
        raise DataError(f"task name {name!r} is a shipped checkpoint's; {what}")
    ratings: dict[str, list[tuple[float, HumanRecord]]] = {}
    for record in records:
        if not record.scores:
            raise DataError(f"{path}: record {record.id}: key 'scores' holds no rating")
        for key, value in record.scores.items():
            if not key.strip():
                raise DataError(f"{path}: record {record.id}: scores has an empty criterion name")
            ratings.setdefault(key, []).append((value, record))
    scales = dict(scales or {})
    unknown = sorted(set(scales) - set(ratings))
    if unknown:
        raise DataError(
            f"{path}: no record scores {', '.join(map(repr, unknown))} (criteria: "
            f"{', '.join(ratings)})"
        )
    groups = {record.group for record in records}
    if len(groups) < MIN_GROUPS:
        raise DataError(
            f"{path}: {len(records)} records of {len(groups)} items (groups); fitting and "
            f"measuring need at least {MIN_GROUPS}: rate more items, or give each record the "
            "'group' of the item its output was made for"
        )
    lacking = first_without_source([record.src for record in records], len(records))
    return RatingsFile(
        Task(
            name,
            (DatasetSpec(str(path), criteria_of(ratings, scales, path, measured), sha256=digest),),
        ),
        records=len(records),
        items=len(groups),
        sources=sum(has_text(record.src) for record in records),
        without_source=None if lacking is None else records[lacking].id,
    )


def criteria_of(
    ratings: dict[str, list[tuple[float, HumanRecord]]],
    scales: dict[str, tuple[float, float]],
    path: Path,
    measured: bool = False,
) -> tuple[Criterion, ...]:
    """One criterion per rated key (its ratings with their records), on its scale in ``scales``
    or else from its lowest to its highest rating; DataError for one that cannot be learned,
    or, ``measured``, whose agreement with a metric cannot be measured."""
    criteria = []
    for key, rated in ratings.items():
        values = [value for value, _ in rated]
        items = len({record.group for _, record in rated})
        if items < MIN_GROUPS:
            raise DataError(
                f"{path}: criterion {key!r} is rated for {items} items (groups); fitting and "
                f"measuring it need at least {MIN_GROUPS}: rate more, or leave it out"
            )
        if measured and len(set(values)) == 1:  # found when every feature had been computed
            raise DataError(
                f"{path}: criterion {key!r}: all its {len(values)} ratings are {values[0]:g}, so "
                "agreement with it (Kendall τ) is not defined; leave it out"
            )
        if key in scales:
            low, high = scales[key]
            if not (math.isfinite(low) and math.isfinite(high) and low < high):
                raise DataError(f"{path}: the scale of {key!r} is {low:g} to {high:g}: no range")
            outside = next(((v, r) for v, r in rated if not low <= v <= high), None)
            if outside is not None:
                raise DataError(
                    f"{path}: record {outside[1].id}: scores[{key!r}] = {outside[0]:g} is "
                    f"outside the scale given, {low:g} to {high:g}"
                )
        else:
            low, high = min(values), max(values)
            if not low < high:
                raise DataError(
                    f"{path}: criterion {key!r}: all its {len(values)} ratings are {low:g}; "
                    f"give its scale (--scale {key}=LOW:HIGH, or data.scales), or leave it out"
                )
        criteria.append(Criterion(key, key, float(low), float(high)))
    return tuple(criteria)


def human_root(root: str | Path | None = None) -> Path:
    """The folder of the human-rating sets: ``root`` (a --data-root or data.data_root), or the
    shared data's human/ when it is None or empty."""
    return Path(root) if root else data_dir() / "human"


def fit_task(
    task: str | Task | None,
    ratings: str | None = None,
    scales: dict[str, tuple[float, float]] | None = None,
) -> Task:
    """The task a fit names: a Task as given; else, as the LightningCLI's data and model
    sections give it, a user's ratings file (``task`` then names it, default the file's name;
    ``scales`` as --scale) or a shipped task's name. DataError for data.scales without a file,
    no task, or an unknown one."""
    if isinstance(task, Task):
        return task
    if ratings is not None:
        return read_ratings(ratings, name=task, scales=scales).task
    if scales:
        raise DataError("data.scales describes a user's ratings file: give data.ratings FILE too")
    if task is None:
        raise DataError("no task: give data.task (a shipped task) or data.ratings (your file)")
    try:
        return get_task(task)
    except KeyError as error:
        raise DataError(f"data.task: {error.args[0]}") from None


def data_file(spec: DatasetSpec, root: str | Path | None = None) -> Path:
    """Where a dataset's file is: a user's file as it was named, a shipped one under
    ``human_root(root)`` (so a user's file needs no shared data folder)."""
    path = Path(spec.file)
    return path if path.is_absolute() else human_root(root) / path


def missing_data_file(task: Task, root: str | Path | None = None) -> Path | None:
    """The first of ``task``'s data files that does not exist, or None; a run over several
    tasks checks them all before its first fit, not when a task's turn comes."""
    paths = (data_file(spec, root) for spec in task.datasets)
    return next((path for path in paths if not path.is_file()), None)


def load_task_records(task: Task, root: str | Path | None = None) -> list[HumanRecord]:
    """All records of a task with scores re-keyed to the task's criterion keys (human scale)."""
    records = []
    for spec in task.datasets:
        path = data_file(spec, root)
        if spec.sha256:  # a user's file: the one its criteria, scales and card hash were read from
            loaded, digest = load_hashed_records(path)
            if digest != spec.sha256:
                raise DataError(f"{path} changed since it was first read; run the command again")
        else:
            loaded = load_records(path)
        for record in loaded:
            if spec.min_ratings and record.meta.get("n_ratings", 0) < spec.min_ratings:
                continue
            scores = {
                c.key: record.scores[c.source] for c in spec.criteria if c.source in record.scores
            }
            records.append(HumanRecord(**{**record.__dict__, "scores": scores}))
    return records
