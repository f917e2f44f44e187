"""The feature cache: a parquet of `id`, one column per feature and `pair_key`, filled in
resumable chunks.

Only missing values are computed. A value is missing when its pair id has no row, its
column is absent, or the column was written by another feature version (versions live in
the parquet schema metadata, so a version bump recomputes that column only), or the row was
computed for other texts under the same id (each row keeps its pair's `pair_key`: synth
pairs regenerated into the same folder reuse their ids). After every
chunk the whole file is rewritten atomically, so an interrupted run loses at most one chunk
and the next run picks up where it stopped. Features cached earlier but not asked for now
are kept, with the values they have (an interrupted run's columns too: a later run that asks
for them fills their gaps). The embedding, alignment and token stores
filled beside it name the encoder (and layer, and text form) that filled them; a store of
another, or one that names none, is refused, never extended or read (``claim_stores``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from tqdm import tqdm

from evaluator.features.compute import (
    compute_features,
    feature_versions,
    pair_key,
)
from evaluator.features.cpu_workers import shared_cpu_workers
from evaluator.features.embeddings import EmbeddingStore, claim_stores, store_sources, text_key
from evaluator.features.encoder_pass import encode_distinct, encode_texts, token_states
from evaluator.features.registry import COLUMN_TO_METRIC, is_encoder_metric
from evaluator.features.token_store import TokenStore
from mismatch_core.atomic import atomic_path
from mismatch_core.pairs import read_pairs, references
from mismatch_core.resources import DEFAULT_ENCODER

METADATA_KEY = b"mismatch.feature_versions"
KEY_COLUMN = "pair_key"  # the texts a row was computed for (caches from before 2026-11-30 lack it)


@dataclass(frozen=True)
class EncoderSettings:
    """How a cache's encoder pass runs: the model, its batch size, the BERTScore layer (None:
    the last) and the torch device; one value for every helper that encodes."""

    encoder: str
    batch_size: int
    num_layers: int | None
    device: str


@dataclass
class CacheReport:
    """What one run did: values computed per feature, and pairs in the output."""

    pairs: int = 0
    computed: dict[str, int] = field(default_factory=dict)
    embeddings_added: int = 0
    alignments_added: int = 0
    tokens_added: int = 0
    # cached rows whose id now names other texts (recomputed), or no pair at all (dropped)
    other_texts: int = 0
    dropped: int = 0
    # features kept from earlier runs, not asked for now, that some pairs lack
    partial: list[str] = field(default_factory=list)


def stored_versions(schema: pa.Schema) -> dict[str, str] | None:
    """The feature versions a cache's schema records (``write_cache``), or None for a parquet
    file ``mismatch features`` did not write."""
    metadata = schema.metadata or {}
    return json.loads(metadata[METADATA_KEY]) if METADATA_KEY in metadata else None


def read_cache(
    path: Path, versions: dict[str, str]
) -> tuple[pd.DataFrame, dict[str, str], pd.Series | None]:
    """Cached values indexed by id, their versions, and each row's pair key (None for a cache
    written before the keys), dropping columns of another version.

    Columns not in `versions` (features cached earlier but not asked for now) are kept with
    their stored version, so asking for a new feature never discards the others.
    """
    if not path.exists():
        return pd.DataFrame(index=pd.Index([], dtype=str, name="id")), {}, None
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as error:
        raise ValueError(f"{path} is not a readable feature cache ({error})") from None
    stored = stored_versions(table.schema)
    if stored is None or "id" not in table.column_names:
        # refuse rather than replace a parquet that mismatch features did not write (a pairs
        # file given as --out by mistake would otherwise be overwritten)
        raise ValueError(
            f"{path} exists but is not a feature cache written by mismatch features "
            "(no id column or feature versions); give --out a new path"
        )
    frame = table.to_pandas()
    frame["id"] = frame["id"].astype(str)
    frame = frame.set_index("id")
    keep = [
        column
        for column in frame.columns
        if column in stored and stored[column] == versions.get(column, stored[column])
    ]
    keys = frame[KEY_COLUMN].astype(str) if KEY_COLUMN in frame.columns else None
    return frame[keep].astype(np.float64), {column: stored[column] for column in keep}, keys


def write_cache(path: Path, frame: pd.DataFrame, versions: dict[str, str], keys: pd.Series) -> None:
    """Atomic write: id + feature columns + each row's pair key, with the feature versions in
    the schema metadata."""
    table = pa.Table.from_pandas(
        frame.assign(**{KEY_COLUMN: keys.to_numpy()}).reset_index(), preserve_index=False
    )
    metadata = dict(table.schema.metadata or {})
    metadata[METADATA_KEY] = json.dumps(versions, sort_keys=True).encode()
    table = table.replace_schema_metadata(metadata)
    with atomic_path(path) as temporary:
        pq.write_table(table, temporary)


def foreign_cache_problem(pairs_path: Path, out_path: Path) -> str | None:
    """Why the cache ``out_path`` should not be updated for the pairs of ``pairs_path``, or
    None: it holds rows, none of them of these pairs' ids, so updating it would drop them all
    (a typo such as val's pairs into train's cache loses work that took long). Read from the
    two id columns alone; ``mismatch features`` asks it, fine-tuning's caches (keyed by
    their texts) are updated whatever they held."""
    if not out_path.is_file():
        return None
    try:  # no cache, or no pairs: the update names what they are
        if stored_versions(pq.read_schema(out_path)) is None:
            return None
        if not {"id", "ref", "gen"} <= set(pq.read_schema(pairs_path).names):
            return None
        cached, given = (
            pq.read_table(path, columns=["id"]).column("id").to_pandas().astype(str)
            for path in (out_path, pairs_path)
        )  # ids as the cache and the pairs reader read them
    except (OSError, pa.ArrowException):
        return None
    if cached.empty or cached.isin(set(given)).any():
        return None
    return (
        f"{out_path} holds the features of {len(cached)} pair(s), none of them in "
        f"{pairs_path}: the cache of another pair set? Give another --out, or remove it first"
    )


def update_feature_cache(
    pairs_path: Path,
    out_path: Path,
    names: Sequence[str],
    chunk_size: int = 4096,
    batch_size: int = 64,
    encoder: str = DEFAULT_ENCODER,
    num_layers: int | None = None,
    embeddings_path: Path | None = None,
    on_chunk: Callable[[int, CacheReport], None] | None = None,
    progress: bool = True,
    alignments_path: Path | None = None,
    tokens_path: Path | None = None,
    device: str = "cpu",
) -> CacheReport:
    """Fill `out_path` with every feature in `names` for every pair in `pairs_path`.

    `on_chunk(chunk_index, report)` runs after each chunk is saved (a hook for progress or
    for tests that interrupt a run). With `embeddings_path`, the mean-pooled embedding of
    every distinct ref and gen text is also kept there; with `alignments_path`, the
    alignment vector of every (ref, gen) pair (keyed by `pair_key`), from the same pass; with
    `tokens_path`, the token states of every text (a TokenStore folder), likewise. `device`:
    where the encoder pass runs (a torch device name; the other metrics run on the CPU).
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    names = list(names)
    versions = feature_versions(names, encoder, num_layers)
    pairs = read_pairs(pairs_path)
    ids = pd.Index(pairs["id"], name="id")
    keys = pd.Series(map(row_key, pairs["ref"], pairs["gen"]), index=ids, dtype=object)
    cached, cached_versions, cached_keys = read_cache(out_path, versions)
    frame = cached.reindex(ids)
    report = CacheReport(pairs=len(pairs), computed=dict.fromkeys(names, 0))
    report.dropped = int((~cached.index.isin(ids)).sum())
    if cached_keys is not None:
        stored_keys = cached_keys.reindex(ids)
        other_texts = (stored_keys.notna() & stored_keys.ne(keys)).to_numpy()
        frame.loc[other_texts] = np.nan
        report.other_texts = int(other_texts.sum())
    # the file is rewritten at least once when what it holds is not what this run keeps
    unsaved = cached_keys is None or report.other_texts > 0 or report.dropped > 0
    extra = [column for column in frame.columns if column not in names]
    report.partial = [column for column in extra if frame[column].isna().any()]
    frame = frame.reindex(columns=names + extra)
    versions = {**{column: cached_versions[column] for column in extra}, **versions}
    store = EmbeddingStore.open_or_new(embeddings_path) if embeddings_path is not None else None
    alignments = (
        EmbeddingStore.open_or_new(alignments_path) if alignments_path is not None else None
    )
    tokens = TokenStore(tokens_path) if tokens_path is not None else None
    claim_stores(store_sources(encoder, num_layers, store, alignments, tokens))
    settings = EncoderSettings(encoder, batch_size, num_layers, device)
    bar = tqdm(total=len(pairs), unit="pair", desc="features", disable=not progress)
    with shared_cpu_workers():  # one pool, its workers warm from chunk to chunk
        for chunk_index, start in enumerate(range(0, len(pairs), chunk_size)):
            rows = pairs.iloc[start : start + chunk_size]
            found: dict[str, np.ndarray] = {}
            found_tokens: dict[str, np.ndarray] = {}
            stored = len(store) if store is not None else 0
            changed = fill_chunk(
                frame,
                rows,
                names,
                settings,
                store,
                report,
                found if alignments is not None else None,
                found_tokens if tokens is not None else None,
            )
            if store is not None and embeddings_path is not None:
                add_missing_embeddings(store, rows, settings, report)
                if len(store) > stored:
                    store.save(embeddings_path)
            if alignments is not None and alignments_path is not None:
                before = len(alignments)
                alignments.add_keyed(found)
                add_missing_alignments(alignments, rows, settings)
                report.alignments_added += len(alignments) - before
                if len(alignments) > before:
                    alignments.save(alignments_path)
            if tokens is not None:
                add_missing_tokens(found_tokens, tokens, rows, settings)
                report.tokens_added += tokens.add(found_tokens)
            if changed or unsaved or not out_path.is_file():
                write_cache(out_path, frame, versions, keys)
                unsaved = False
            bar.update(len(rows))
            if on_chunk is not None:
                on_chunk(chunk_index, report)
    bar.close()
    if len(pairs) == 0:
        write_cache(out_path, frame, versions, keys)
    return report


def row_key(ref: str | Sequence[str], gen: str) -> str:
    """The pair key of a cache row; several references count as their JSON list, one as
    itself (its features are the same)."""
    if not isinstance(ref, str):
        ref = ref[0] if len(ref) == 1 else json.dumps(list(ref))
    return pair_key(ref, gen)


def fill_chunk(
    frame: pd.DataFrame,
    rows: pd.DataFrame,
    names: list[str],
    settings: EncoderSettings,
    store: EmbeddingStore | None,
    report: CacheReport,
    alignments_out: dict[str, np.ndarray] | None = None,
    tokens_out: dict[str, np.ndarray] | None = None,
) -> bool:
    """Compute the missing values of one chunk, grouping columns missing for the same rows."""
    missing = frame.loc[rows["id"], names].isna().to_numpy()
    groups: dict[bytes, list[int]] = {}
    for column in range(len(names)):
        if missing[:, column].any():
            groups.setdefault(missing[:, column].tobytes(), []).append(column)
    embeddings: dict[str, np.ndarray] = {}
    for columns in groups.values():
        selected = rows[missing[:, columns[0]]]
        group_names = [names[column] for column in columns]
        # The encoder pass also yields embeddings and alignments; a group of CPU features alone
        # skips it, and add_missing_embeddings / add_missing_alignments fill whatever is absent.
        encoder_pass = any(is_encoder_metric(COLUMN_TO_METRIC[name]) for name in group_names)
        values = compute_features(
            [ref if isinstance(ref, str) else list(ref) for ref in selected["ref"]],
            list(selected["gen"]),
            group_names,
            encoder=settings.encoder,
            batch_size=settings.batch_size,
            embeddings_out=embeddings if store is not None and encoder_pass else None,
            num_layers=settings.num_layers,
            alignments_out=alignments_out if encoder_pass else None,
            tokens_out=tokens_out if encoder_pass else None,
            device=settings.device,
        )
        frame.loc[selected["id"], group_names] = values.to_numpy()
        for name in group_names:
            report.computed[name] += len(selected)
    if store is not None and embeddings:
        before = len(store)
        store.add_keyed(embeddings)
        report.embeddings_added += len(store) - before
    return bool(groups)


def add_missing_embeddings(
    store: EmbeddingStore,
    rows: pd.DataFrame,
    settings: EncoderSettings,
    report: CacheReport,
) -> None:
    """Encode the chunk's texts that the store lacks (features were cached, embeddings not)."""
    absent = [text for text in chunk_texts(rows) if text not in store]
    if absent:
        store.add(
            absent, encode_texts(absent, settings.encoder, settings.batch_size, settings.device)
        )
        report.embeddings_added += len(absent)


def chunk_texts(rows: pd.DataFrame) -> list[str]:
    """The distinct gen and reference texts of a chunk of pairs, in first-seen order."""
    texts = list(rows["gen"])
    for ref in rows["ref"]:
        texts.extend(references(ref))
    return list(dict.fromkeys(texts))


def add_missing_tokens(
    found: dict[str, np.ndarray],
    store: TokenStore,
    rows: pd.DataFrame,
    settings: EncoderSettings,
) -> None:
    """Encode the chunk's texts that neither the store nor ``found`` holds into ``found``."""
    absent = [t for t in chunk_texts(rows) if t not in store and text_key(t) not in found]
    if absent:
        encoded = encode_distinct(
            absent, settings.encoder, settings.batch_size, settings.num_layers,
            device=settings.device,
        )  # fmt: skip
        found.update({text_key(t): token_states(state) for t, state in encoded.items()})


def add_missing_alignments(
    store: EmbeddingStore,
    rows: pd.DataFrame,
    settings: EncoderSettings,
) -> None:
    """Compute the alignment vectors of the chunk's pairs that the store lacks."""
    refs, gens = [], []
    for ref, gen in zip(rows["ref"], rows["gen"], strict=True):
        for one in references(ref):
            if pair_key(one, gen) not in store.vectors:
                refs.append(one)
                gens.append(gen)
    if refs:
        found: dict[str, np.ndarray] = {}
        compute_features(
            refs, gens, [], encoder=settings.encoder, batch_size=settings.batch_size,
            num_layers=settings.num_layers, alignments_out=found, device=settings.device,
        )  # fmt: skip
        store.add_keyed(found)
