"""On-disk store of vectors keyed by the SHA-1 of a text (or of a pair, see `pair_key`).

A frozen encoder gives each text the same vector every time, so the model trains on cached
vectors instead of re-encoding: mean-pooled sentence embeddings per text, and alignment
vectors per (ref, gen) pair. The parquet has columns `key` (sha1 hex) and `embedding`
(fixed-size list of float32), and names in its metadata what encoded the vectors (``source``:
the encoder, the form of the text it read, and the layer where it matters), so that a cache
filled by one encoder, or from another form of the text, is never read as this one's.
"""

from __future__ import annotations

import hashlib
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mismatch_core.atomic import atomic_path
from mismatch_core.errors import DataError
from mismatch_core.vocabulary_gaps import ENCODER_TEXT_FORM

V = TypeVar("V")
SOURCE_KEY = b"mismatch.store_source"  # parquet metadata: what encoded a store's vectors
FileState = tuple[int, int, int]  # `file_state`: one version of a store's file


def claimed_source(current: str | None, source: str, where: str | Path) -> str:
    """``source`` for a store filled by ``current`` (None: none recorded, which only an empty
    store may be; its callers refuse the others); ValueError when another encoder (or layer,
    or text form) filled it."""
    if current is not None and current != source:
        (current_name, current_form, current_kind), (name, form, kind) = map(
            _reading, (current, source)
        )
        if current_name == name and current_kind != kind:
            raise ValueError(
                f"{where} holds {current_kind} of {current_name}, not the {kind} wanted "
                "here; use the store made for them"
            )
        if current_name == name and current_form != form:
            raise ValueError(
                f"{where} was filled by {current}, from another form of the text than "
                f"{source} reads; fill a new store (or cache folder)"
            )
        raise ValueError(
            f"{where} was filled by {current}, not {source}; use another store (or cache "
            "folder) for this encoder"
        )
    return source


def unrecorded_source(where: str | Path) -> ValueError:
    """The error for a store that holds vectors but does not name what encoded them: written
    before stores recorded it (2026-11-30), so perhaps by another encoder, and before the text
    form was recorded (2026-12-02), so from a text the tokenizer now reads otherwise."""
    return ValueError(
        f"{where} holds vectors with no record of the encoder and text form that filled it "
        "(written before mismatch-eval recorded them); they may not be this encoder's reading "
        "of the text: fill a new store (or cache folder)"
    )


def _reading(source: str) -> tuple[str, str, str]:
    """The encoder's name, the text form it read (``encoder_reading``) and what the store
    holds, from a store's recorded source: vectors read at a layer (alignment vectors, token
    states) record the layer, mean embeddings do not."""
    encoder, marker, _ = source.rpartition("|layers=")
    encoder, kind = (encoder, "vectors read at a layer") if marker else (source, "mean embeddings")
    name, _, form = encoder.partition("|text=")
    return name, form, kind


class SourcedStore(Protocol):
    """A store that records what filled it: the embedding store and the token store."""

    def claim(self, source: str) -> None: ...


def encoder_reading(encoder: str) -> str:
    """What a value an encoder gives depends on: the encoder and the form of the text its
    tokenizer reads (``mismatch_core.vocabulary_gaps``)."""
    return f"{encoder}|text={ENCODER_TEXT_FORM}"


def encoder_source(encoder: str, num_layers: int | None) -> str:
    """What a value read at an encoder's layer depends on: ``encoder_reading`` and the layer
    (None: the last), as feature versions and the caches' stores record it."""
    return f"{encoder_reading(encoder)}|layers={num_layers if num_layers is not None else 'last'}"


def store_sources(
    encoder: str,
    num_layers: int | None,
    embeddings: SourcedStore | None = None,
    alignments: SourcedStore | None = None,
    tokens: SourcedStore | None = None,
) -> list[tuple[SourcedStore, str]]:
    """Each store given with the source it must hold: mean embeddings come from the encoder's
    last layer, alignment vectors and token states from the BERTScore layer ``num_layers``."""
    layered = encoder_source(encoder, num_layers)
    claims = ((embeddings, encoder_reading(encoder)), (alignments, layered), (tokens, layered))
    return [(store, source) for store, source in claims if store is not None]


def claim_stores(claims: Sequence[tuple[SourcedStore, str]]) -> None:
    """Claim each store for its source (an encoder, with its layer for vectors read at one):
    ValueError names a store another encoder, layer or text form filled, or one that does not
    say what filled it, whose vectors would otherwise be read as this one's. Claims are made in
    memory, before any file is written."""
    for store, source in claims:
        store.claim(source)


def text_key(text: str) -> str:
    """SHA-1 hex digest of the UTF-8 text: the store's key."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def stored_for(stored: Mapping[str, V], texts: Sequence[str], what: str) -> list[V]:
    """The values ``stored`` under each text's key, in order (this store and the token store);
    KeyError names the first text not stored and ``what`` was looked for."""
    rows = []
    for text in texts:
        value = stored.get(text_key(text))
        if value is None:
            raise KeyError(f"no {what} stored for text {text[:80]!r}")
        rows.append(value)
    return rows


class EmbeddingStore:
    """text_key -> float32 vector, all of one dimension."""

    def __init__(self, vectors: Mapping[str, np.ndarray] | None = None) -> None:
        self.vectors: dict[str, np.ndarray] = {}
        self.dim: int | None = None
        self.source: str | None = None  # what encoded the vectors (None: not recorded)
        self.path: Path | None = None  # the file it was opened from (None: a new store)
        # the file this store last read or wrote, and its state then (None: no file there),
        # so that `save` can tell when another run saved to it meanwhile
        self._seen: tuple[Path, FileState | None] | None = None
        if vectors:
            self.add_keyed(vectors)

    @classmethod
    def open(cls, path: str | Path) -> EmbeddingStore:
        """Read a store written by `save`; FileNotFoundError names a missing file, DataError one
        that holds no store."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"embedding store {path} does not exist")
        state = file_state(path)  # before the read: a save meanwhile is merged, not lost
        try:
            table = pq.read_table(path)
        except (OSError, pa.ArrowException) as error:
            raise DataError(f"{path} is not a readable embedding store ({error})") from None
        if table.column_names[:2] != ["key", "embedding"]:
            raise DataError(f"{path}: expected columns key, embedding; got {table.column_names}")
        keys = table.column("key").to_pylist()
        column = table.column("embedding").combine_chunks()
        if not pa.types.is_fixed_size_list(column.type):
            raise DataError(f"{path}: embedding must be a fixed-size list, got {column.type}")
        dim = column.type.list_size
        flat = column.flatten().to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
        store = cls()
        store.add_keyed(dict(zip(keys, flat.reshape(len(keys), dim), strict=True)))
        store.dim = dim
        source = (table.schema.metadata or {}).get(SOURCE_KEY)
        store.source = source.decode() if source else None
        store.path = path
        store._seen = (path, state)
        return store

    @classmethod
    def open_or_new(cls, path: str | Path) -> EmbeddingStore:
        """The store at ``path``, or a new empty one when there is none yet (one that another
        run saves there before this one does is merged by `save`)."""
        if Path(path).is_file():
            return cls.open(path)
        store = cls()
        store._seen = (Path(path), None)
        return store

    def claim(self, source: str) -> None:
        """Take the vectors as ``source``'s (an encoder, and its layer for vectors read there);
        ValueError names the store when another filled it or when it holds vectors but does
        not say what filled them."""
        where = self.path or "an embedding store"
        if self.source is None and self.vectors:
            raise unrecorded_source(where)
        self.source = claimed_source(self.source, source, where)

    def __len__(self) -> int:
        return len(self.vectors)

    def __contains__(self, text: str) -> bool:
        return text_key(text) in self.vectors

    def lookup(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (len(texts), dim); KeyError names the first text that is not stored."""
        rows = stored_for(self.vectors, texts, "embedding")
        if not rows:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        return np.stack(rows)

    def lookup_keyed(self, keys: Sequence[str]) -> np.ndarray:
        """float32 (len(keys), dim) for keys as stored; KeyError names the first missing key."""
        missing = next((key for key in keys if key not in self.vectors), None)
        if missing is not None:
            raise KeyError(f"no vector stored for key {missing!r}")
        if not keys:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        return np.stack([self.vectors[key] for key in keys])

    def add(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store one vector per text (row i for texts[i])."""
        vectors = np.asarray(vectors)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ValueError(f"expected {len(texts)} vectors as a 2-d array, got {vectors.shape}")
        self.add_keyed(
            {text_key(text): vector for text, vector in zip(texts, vectors, strict=True)}
        )

    def add_keyed(self, vectors: Mapping[str, np.ndarray]) -> None:
        """Store vectors already keyed by `text_key` (as `compute_features` returns them)."""
        for key, vector in vectors.items():
            vector = np.asarray(vector, dtype=np.float32)
            if vector.ndim != 1 or (self.dim is not None and vector.shape[0] != self.dim):
                raise ValueError(
                    f"embedding for key {key} has shape {vector.shape}; the store holds "
                    f"{self.dim}-d vectors"
                )
            if not np.isfinite(vector).all():
                raise ValueError(f"embedding for key {key} is not finite")
            self.dim = vector.shape[0]
            self.vectors[key] = vector

    def save(self, path: str | Path) -> None:
        """Write the parquet atomically (temporary file in the same folder, then rename). When
        another run has saved to the file since this store last read or wrote it (two
        `mismatch features` runs filling one store), its vectors are added first, so neither
        run's are lost; only a run's last save, landing between the other's read and rename,
        can still be, and rerunning that split's command fills it in."""
        path = Path(path)
        self._merge_saved_meanwhile(path)
        dim = self.dim or 0
        keys = list(self.vectors)
        matrix = (
            np.stack([self.vectors[key] for key in keys])
            if keys
            else np.zeros((0, dim), dtype=np.float32)
        )
        embedding = pa.FixedSizeListArray.from_arrays(
            pa.array(matrix.reshape(-1), type=pa.float32()), dim
        )
        table = pa.table({"key": pa.array(keys, type=pa.string()), "embedding": embedding})
        if self.source is not None:
            table = table.replace_schema_metadata({SOURCE_KEY: self.source.encode()})
        with atomic_path(path) as temporary:
            pq.write_table(table, temporary)
            written = file_state(temporary)  # a rename keeps it; a save after it will differ
        self._seen = (path, written)

    def _merge_saved_meanwhile(self, path: Path) -> None:
        """Add the vectors of ``path`` this store lacks, when the file changed since this store
        last read or wrote it; DataError when another encoder filled it meanwhile, or a store
        that does not say what filled it was put there."""
        if self._seen is None or self._seen[0] != path:
            return
        state = file_state(path)
        if state is None or state == self._seen[1]:
            return
        saved = EmbeddingStore.open(path)
        if saved.source is None and saved.vectors:
            raise DataError(str(unrecorded_source(path)))
        if self.source is None:
            self.source = saved.source
        else:
            try:
                claimed_source(saved.source, self.source, path)
            except ValueError as error:
                raise DataError(str(error)) from None
        # copies: a view would keep the whole file read here alive beside this store
        self.add_keyed(
            {key: v.copy() for key, v in saved.vectors.items() if key not in self.vectors}
        )


def file_state(path: Path) -> FileState | None:
    """What tells one version of a file from the next (inode, size, modification time), or
    None when no plain file is there (a device such as /dev/null is written, never read); a
    rename puts a new inode in place."""
    try:
        status = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not stat.S_ISREG(status.st_mode):
        return None
    return (status.st_ino, status.st_size, status.st_mtime_ns)
