"""Cached model inputs for a task's human-rated pairs, shared by every seed, ablation and baseline.

The metric features (the checkpoint's names) of every (reference, generated) pair, as predict
reads a pair against each of its references alone, and the frozen encoder's mean embeddings
of every reference and generated text (and, for a base model that reads them, the alignment
vector of every pair and the token states of every text; for ratings that read the source,
the source metric features of every record, its source in place of a reference) are
computed once per task with the resumable feature cache (``evaluator.features.cache``, keyed
by the pair's texts and the feature version) under ``data/human_features/``. ``TaskInputs``
holds them in record order, with the targets normalised to [0, 1] (NaN where a record lacks a
criterion).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from evaluator.features import EmbeddingStore, pair_key
from evaluator.features.cache import update_feature_cache
from evaluator.features.token_store import TokenStore, TokenTable
from evaluator.human_data import HumanRecord
from evaluator.inference import over_references
from evaluator.model.mismatch_model import FIT_REFERENCE_AGGREGATE
from evaluator.tasks import Task
from mismatch_core.atomic import atomic_path
from mismatch_core.pairs import first_without_source

DEFAULT_CACHE_DIR = Path("data/human_features")


@dataclass
class TaskInputs:
    """Everything training and evaluation read, row i = record i."""

    ids: list[str]
    groups: list[str]
    # raw (unscaled) metric features per (record, reference) pair in ``ref_rows`` order
    features: pd.DataFrame
    texts: np.ndarray  # (distinct texts, embedding dim) float32 embeddings
    ref_rows: list[np.ndarray]  # per record: rows of ``texts`` holding its references
    gen_rows: np.ndarray  # per record: row of ``texts`` holding its generated text
    targets: np.ndarray  # (records, criteria) on the normalised scale, NaN = not rated
    # per (record, reference) pair in ``ref_rows`` order: its alignment vector, or None
    alignments: np.ndarray | None = None
    tokens: TokenTable | None = None  # token states of ``texts``' rows, for a token-level base
    # per record, the raw source metric features (``MismatchConfig.source_features``), or None
    source: pd.DataFrame | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def pair_owner(self) -> np.ndarray:
        """For each (record, reference) pair in ``ref_rows`` order, its record position."""
        return np.concatenate([np.full(len(rows), i) for i, rows in enumerate(self.ref_rows)])

    def pair_starts(self) -> np.ndarray:
        """Per record, the index of its first (record, reference) pair."""
        return np.cumsum([0] + [len(rows) for rows in self.ref_rows])[:-1]

    def pair_rows(self, rows: np.ndarray) -> np.ndarray:
        """The (record, reference) pairs of the records at ``rows``, in that order."""
        starts = self.pair_starts()
        return np.concatenate(
            [np.arange(starts[i], starts[i] + len(self.ref_rows[i])) for i in rows]
        ).astype(np.int64)

    def record_features(self, scaled: np.ndarray) -> pd.DataFrame:
        """One row per record: each feature over the record's references as a fitted model's
        ratings read it (``inference.over_references``: a similarity's max, a distance's min,
        the other columns at the closest reference, chosen on ``scaled``, these features as the
        model reads them: ``PreparedTask.features``), used for the metric baselines; then, with
        source features, each one against the source as ``source_<name>``. Until 2026-12-02
        each feature's max, so a distance baseline read a record's farthest reference."""
        owner = self.pair_owner()
        names = list(self.features.columns)
        combined = over_references(
            self.features.to_numpy(dtype=np.float64),
            owner,
            names,
            FIT_REFERENCE_AGGREGATE,
            scaled=scaled.astype(np.float64),
        )
        first = np.unique(owner, return_index=True)[1]  # a record's rows are alike now
        features = pd.DataFrame(combined[first], columns=names)
        if self.source is None:
            return features
        return pd.concat([features, self.source.add_prefix("source_")], axis=1)

    def subset(self, rows: np.ndarray) -> TaskInputs:
        """The records at ``rows`` (positions), sharing the text table."""
        pairs = self.pair_rows(rows)
        return TaskInputs(
            ids=[self.ids[i] for i in rows],
            groups=[self.groups[i] for i in rows],
            features=self.features.iloc[pairs].reset_index(drop=True),
            texts=self.texts,
            ref_rows=[self.ref_rows[i] for i in rows],
            gen_rows=self.gen_rows[rows],
            targets=self.targets[rows],
            alignments=None if self.alignments is None else self.alignments[pairs],
            tokens=self.tokens,
            source=None if self.source is None else self.source.iloc[rows].reset_index(drop=True),
        )


def normalised_targets(task: Task, records: list[HumanRecord]) -> np.ndarray:
    """(records, criteria) scores mapped to [0, 1] by the task's scales (clipped); NaN if absent."""
    targets = np.full((len(records), len(task.criteria)), np.nan, dtype=np.float32)
    for row, record in enumerate(records):
        for column, criterion in enumerate(task.criteria):
            if criterion.key in record.scores:
                value = criterion.normalise(record.scores[criterion.key])
                targets[row, column] = min(max(value, 0.0), 1.0)
    return targets


def pair_ids(records: list[HumanRecord]) -> list[str]:
    """The feature cache's key of every (record, reference) pair, in ``ref_rows`` order: the
    pair's texts (``pair_key``), not the record's id, so that an edited or extended ratings
    file computes only the pairs it changed or added, and a pair rated twice is computed once."""
    return [pair_key(ref, r.gen) for r in records for ref in r.refs]


def write_pairs(records: list[HumanRecord], path: Path) -> list[str]:
    """The id/ref/gen parquet the feature cache reads, one row per distinct (reference,
    generated) pair (atomic; rewritten only when it changes); returns ``pair_ids``."""
    keys = pair_ids(records)
    frame = pd.DataFrame(
        {
            "id": keys,
            "ref": [[ref] for r in records for ref in r.refs],
            "gen": [r.gen for r in records for _ in r.refs],
        }
    )
    write_frame(frame.drop_duplicates("id", ignore_index=True), path)
    return keys


def source_ids(records: list[HumanRecord]) -> list[str]:
    """The source feature cache's key of every record: its source and generated texts;
    ValueError names the first record without a source (key src)."""
    missing = first_without_source([r.src for r in records], len(records))
    if missing is not None:
        raise ValueError(
            f"record {records[missing].id!r} has no src; ratings that read the source need it "
            "on every record"
        )
    return [pair_key(r.src or "", r.gen) for r in records]  # none is missing: checked above


def write_source_pairs(records: list[HumanRecord], path: Path) -> list[str]:
    """The id/ref/gen parquet of every distinct (source, generated) pair, the source in the
    place of the reference (atomic; rewritten only when it changes); returns ``source_ids``."""
    keys = source_ids(records)
    frame = pd.DataFrame(
        {"id": keys, "ref": [[r.src] for r in records], "gen": [r.gen for r in records]}
    )
    write_frame(frame.drop_duplicates("id", ignore_index=True), path)
    return keys


def write_frame(frame: pd.DataFrame, path: Path) -> None:
    """Write ``frame`` as parquet (atomic; rewritten only when it changes)."""
    if path.is_file() and pd.read_parquet(path).equals(frame):
        return
    with atomic_path(path) as temporary:
        frame.to_parquet(temporary, index=False)


def build_inputs(
    task: Task,
    records: list[HumanRecord],
    feature_names: list[str],
    *,
    encoder: str,
    num_layers: int | None = None,
    cache_dir: Path = DEFAULT_CACHE_DIR,
    progress: bool = False,
    alignments: bool = False,
    tokens: bool = False,
    name: str | None = None,
    source_features: list[str] | None = None,
    device: str = "cpu",
) -> TaskInputs:
    """Fill the task's feature and embedding cache as needed, then read it in record order.

    alignments: also cache and read the per-pair alignment vectors (for a base model that uses
    them); tokens: also cache and read every text's token states (likewise); name: the cache
    files' stem (default the task's name; contrast copies have their own);
    source_features: also cache and read these features of every record against its source
    (ValueError for a record without one); device: where the encoder pass of what the cache
    lacks runs."""
    if not records:
        raise ValueError(f"task {task.name!r} has no records")
    stem = name or task.name
    pairs_path = cache_dir / f"{stem}.pairs.parquet"
    features_path = cache_dir / f"{stem}.parquet"
    embeddings_path = cache_dir / f"{stem}.embeddings.parquet"
    alignments_path = cache_dir / f"{stem}.alignments.parquet" if alignments else None
    tokens_path = cache_dir / f"{stem}.tokens" if tokens else None
    keys = write_pairs(records, pairs_path)
    update_feature_cache(
        pairs_path,
        features_path,
        feature_names,
        encoder=encoder,
        num_layers=num_layers,
        embeddings_path=embeddings_path,
        progress=progress,
        alignments_path=alignments_path,
        tokens_path=tokens_path,
        device=device,
    )
    source = None
    if source_features:
        source_path = cache_dir / f"{stem}.source.parquet"
        source_keys = write_source_pairs(records, cache_dir / f"{stem}.source.pairs.parquet")
        update_feature_cache(
            cache_dir / f"{stem}.source.pairs.parquet",
            source_path,
            source_features,
            encoder=encoder,
            num_layers=num_layers,
            progress=progress,
            device=device,
        )
        read = pd.read_parquet(source_path, columns=["id", *source_features]).set_index("id")
        source = read.loc[source_keys].reset_index(drop=True).astype(np.float64)
    cached = pd.read_parquet(features_path, columns=["id", *feature_names]).set_index("id")
    features = cached.loc[keys].reset_index(drop=True).astype(np.float64)
    store = EmbeddingStore.open(embeddings_path)
    distinct = list(dict.fromkeys(t for r in records for t in (*r.refs, r.gen)))
    lookup = pd.Index(distinct)
    return TaskInputs(
        ids=[r.id for r in records],
        groups=[r.group for r in records],
        features=features,
        texts=store.lookup(distinct),
        ref_rows=[lookup.get_indexer(list(r.refs)) for r in records],
        gen_rows=lookup.get_indexer([r.gen for r in records]),
        targets=normalised_targets(task, records),
        alignments=None
        if alignments_path is None
        else EmbeddingStore.open(alignments_path).lookup_keyed(keys),
        tokens=None if tokens_path is None else TokenStore(tokens_path).table(distinct),
        source=source,
    )
