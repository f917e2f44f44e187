"""Per-text token states of the frozen encoder, for the model's token-level comparison branch.

A frozen encoder gives a text the same token states every time, so training reads them from
disk instead of re-encoding: for every text, the unit-length states of its wordpieces (CLS and
SEP dropped) at the BERTScore layer, in float16, at most ``MAX_TOKENS`` of them. The store is
a folder of append-only shards, ``NNNNN.npy`` (all states of the shard, stacked) with
``NNNNN.keys.parquet`` (text key, offset, length; its metadata names what encoded the states,
as an embedding store's does); a shard counts once its keys file exists,
and both are written through a temporary file and a rename, so an interrupted run loses at
most the shard it was writing. A new shard's name is taken by making its states file first
(empty until written, removed if the write fails), so that two runs writing to one store at
once never share a name. ``TokenTable`` packs the states of a list of texts into one
array and gathers padded batches from it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import torch

from evaluator.features.embeddings import (
    SOURCE_KEY,
    claimed_source,
    stored_for,
    text_key,
    unrecorded_source,
)
from mismatch_core.atomic import atomic_path

MAX_TOKENS = 128  # longer texts keep their first wordpieces (corpus texts are <= 400 chars)
# a shard's two files; a name starting with "." is a write in progress (atomic_path)
SHARD_FILE = re.compile(r"\d{5}\.(npy|keys\.parquet)")


class TokenTable:
    """The token states of texts ``0..n-1`` in one float16 array, gathered as padded batches."""

    def __init__(self, states: Sequence[np.ndarray], dim: int) -> None:
        lengths = np.array([len(item) for item in states], dtype=np.int64)
        self.lengths = torch.from_numpy(lengths)
        self.offsets = torch.from_numpy(np.concatenate([[0], np.cumsum(lengths)[:-1]]))
        # one zero row at the end: padding positions gather it (one copy of the states)
        rows = [item.astype(np.float16, copy=False) for item in states]
        self.flat = torch.from_numpy(np.concatenate([*rows, np.zeros((1, dim), np.float16)]))

    def __len__(self) -> int:
        return len(self.lengths)

    @classmethod
    def joined(cls, tables: Sequence[TokenTable]) -> TokenTable:
        """One table holding the texts of ``tables`` in order: row r of table k becomes row
        r + (rows of the tables before k)."""
        joined = cls([], int(tables[0].flat.shape[1]))
        sizes = [len(table.flat) - 1 for table in tables]  # without each padding row
        shifts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).tolist()
        joined.lengths = torch.cat([table.lengths for table in tables])
        joined.offsets = torch.cat(
            [table.offsets + shift for table, shift in zip(tables, shifts, strict=True)]
        )
        joined.flat = torch.cat([*(table.flat[:-1] for table in tables), tables[0].flat[-1:]])
        return joined

    def batch(self, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """States (len(rows), longest, dim) float32, zero-padded, and the mask (True = token)."""
        lengths = self.lengths[rows]
        width = max(int(lengths.max()) if len(rows) else 0, 1)
        position = torch.arange(width)
        mask = position.unsqueeze(0) < lengths.unsqueeze(1)
        index = torch.where(mask, self.offsets[rows].unsqueeze(1) + position, len(self.flat) - 1)
        return self.flat[index].float(), mask


def pair_tokens(ref_table: TokenTable, ref_rows, gen_table: TokenTable, gen_rows) -> dict:
    """The model's ``tokens`` input for pairs: ref_rows of ``ref_table`` against gen_rows of
    ``gen_table`` (the two tables may be one)."""
    ref, ref_mask = ref_table.batch(torch.as_tensor(ref_rows))
    gen, gen_mask = gen_table.batch(torch.as_tensor(gen_rows))
    return {"ref": ref, "ref_mask": ref_mask, "gen": gen, "gen_mask": gen_mask}


class TokenStore:
    """text_key -> (length, dim) float16 token states, kept in shards under one folder."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.states: dict[str, np.ndarray] = {}
        self.dim: int | None = None
        self.shards = 0
        self.source: str | None = None  # what encoded the states (None: not recorded)
        self.unrecorded: list[Path] = []  # keys files of shards that name no source
        if self.path.exists() and not self.path.is_dir():
            raise ValueError(f"token store {self.path} exists and is not a folder")
        if self.path.is_dir():
            others = sorted(
                entry.name
                for entry in self.path.iterdir()
                if not SHARD_FILE.fullmatch(entry.name) and not entry.name.startswith(".")
            )
            if others:  # a new shard would be written beside someone's files
                raise ValueError(
                    f"token store {self.path} holds {', '.join(others[:3])}"
                    f"{' ...' if len(others) > 3 else ''}, not only token-store shards; give "
                    "a new or empty folder"
                )
            self._read()

    def _read(self) -> None:
        for keys_file in sorted(self.path.glob("*.keys.parquet")):
            stem = keys_file.name.removesuffix(".keys.parquet")
            states_file = self.path / f"{stem}.npy"
            try:
                table = pq.read_table(keys_file)
                keys = table.to_pandas()
                array = np.load(states_file, mmap_mode="r")
            except (OSError, ValueError, EOFError, pa.ArrowException) as error:  # EOFError: empty
                raise ValueError(f"token store shard {keys_file} is unreadable ({error})") from None
            source = (table.schema.metadata or {}).get(SOURCE_KEY)
            if source is None:
                self.unrecorded.append(keys_file)
            elif self.source not in (None, source.decode()):
                raise ValueError(
                    f"{keys_file} holds states of {source.decode()}, another shard of {self.source}"
                )
            else:
                self.source = source.decode()
            if array.ndim != 2 or (self.dim is not None and array.shape[1] != self.dim):
                raise ValueError(
                    f"{states_file}: states of shape {array.shape} do not fit the store"
                )
            ends = keys["offset"].to_numpy() + keys["length"].to_numpy()
            if len(keys) and ends.max() > len(array):
                raise ValueError(f"{keys_file} points past the end of {states_file}")
            self.dim = array.shape[1]
            for key, offset, length in zip(
                keys["key"], keys["offset"], keys["length"], strict=True
            ):
                self.states[key] = array[offset : offset + length]
            self.shards += 1

    def __len__(self) -> int:
        return len(self.states)

    def __contains__(self, text: str) -> bool:
        return text_key(text) in self.states

    def claim(self, source: str) -> None:
        """Take the states as ``source``'s (an encoder and its layer); ValueError names the
        folder when another filled it, or when any of its shards does not say what filled it."""
        if self.unrecorded:
            shards = (
                f"{len(self.unrecorded)} of its {self.shards} shards, {self.unrecorded[0].name}"
            )
            raise unrecorded_source(f"token store {self.path} ({shards} first)")
        self.source = claimed_source(self.source, source, self.path)

    def add(self, states: Mapping[str, np.ndarray]) -> int:
        """Write the states (keyed by ``text_key``) the store lacks as one new shard; how many."""
        new = {key: value for key, value in states.items() if key not in self.states}
        if not new:
            return 0
        dims = {int(value.shape[1]) for value in new.values()}
        if self.dim is not None:
            dims.add(self.dim)
        if len(dims) != 1:
            raise ValueError(f"token states of widths {sorted(dims)} cannot share one store")
        lengths = [len(value) for value in new.values()]
        keys = pd.DataFrame(
            {
                "key": list(new),
                "offset": np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64),
                "length": np.array(lengths, dtype=np.int64),
            }
        )
        table = pa.Table.from_pandas(keys, preserve_index=False)
        if self.source is not None:
            table = table.replace_schema_metadata({SOURCE_KEY: self.source.encode()})
        stem = self._new_stem()
        states_file = self.path / f"{stem}.npy"
        try:  # the states, then the keys that make the shard count
            with atomic_path(states_file) as temporary:
                np.save(temporary, np.concatenate(list(new.values())).astype(np.float16))
            with atomic_path(self.path / f"{stem}.keys.parquet") as temporary:
                pq.write_table(table, temporary)
        except BaseException:  # the name is this run's alone: its states go with it
            states_file.unlink(missing_ok=True)
            raise
        self.shards += 1
        self.dim = dims.pop()
        self.states.update(new)
        return len(new)

    def _new_stem(self) -> str:
        """The name of a new shard, taken by making its states file (empty until written), so
        that a run writing to the store at the same time cannot take it too: two runs both
        named their shard 00000, and one's keys could end up beside the other's states. A
        name a run killed mid-write left states under (no keys) is passed over."""
        self.path.mkdir(parents=True, exist_ok=True)
        number = self.shards
        while True:
            stem = f"{number:05d}"
            try:
                flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY
                os.close(os.open(self.path / f"{stem}.npy", flags, 0o666))
            except FileExistsError:
                number += 1
                continue
            return stem

    def table(self, texts: Sequence[str]) -> TokenTable:
        """The states of ``texts`` in order; KeyError names the first text not stored."""
        return TokenTable(stored_for(self.states, texts, "token states"), self.dim or 0)
