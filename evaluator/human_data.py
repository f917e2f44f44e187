"""Human-rating records in the normalised JSONL schema, with validation and group splits.

Schema (one JSON object per line, optionally gzip-compressed):
``{id, task, dataset, ref (str | [str]), gen, src (str | null), system, group, scores {criterion: float}}``.
The loader names the file, line and key of any record that does not fit, so a user's own
data fails with a message they can act on.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

REQUIRED_KEYS = ("id", "ref", "gen", "group", "scores")


class DataError(ValueError):
    """A record or file that does not fit the schema; the message names file, line and key."""


@dataclass(frozen=True)
class HumanRecord:
    id: str
    refs: tuple[str, ...]
    gen: str
    src: str | None
    group: str
    scores: dict[str, float]
    dataset: str = ""
    system: str | None = None
    meta: dict = field(default_factory=dict, compare=False, hash=False)


def jsonl_lines(path: Path) -> Iterator[bytes]:
    """The raw lines of a .jsonl or .jsonl.gz file (decoded one by one by the caller); a
    file that is not valid gzip is a DataError naming it, not a traceback."""
    with gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb") as handle:
        try:
            yield from handle
        except (gzip.BadGzipFile, EOFError, zlib.error) as error:
            raise DataError(f"{path}: not a readable gzip file ({error})") from None


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) for every non-blank line; invalid UTF-8 or JSON names the line."""
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    yield from iter_json_lines(jsonl_lines(path), str(path))


def iter_json_lines(lines: Iterable[bytes], name: str) -> Iterator[tuple[int, dict]]:
    """(line number, object) for every non-blank line of JSONL bytes (a file, stdin);
    DataError names ``name``, the line and what is wrong with it."""
    for line_number, raw in enumerate(lines, 1):
        where = f"{name}:{line_number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise DataError(f"{where}: invalid UTF-8 ({error.reason})") from None
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise DataError(f"{where}: invalid JSON ({error.msg})") from None
        if not isinstance(value, dict):
            raise DataError(f"{where}: expected a JSON object, got {type(value).__name__}")
        yield line_number, value


def parse_record(value: dict, where: str) -> HumanRecord:
    """One validated record; ``where`` is 'file:line' for messages."""
    for key in REQUIRED_KEYS:
        if key not in value:
            raise DataError(f"{where}: missing key {key!r}")
    refs = value["ref"] if isinstance(value["ref"], list) else [value["ref"]]
    if not refs or not all(isinstance(r, str) for r in refs):
        raise DataError(f"{where}: key 'ref' must be a string or a non-empty list of strings")
    gen = "" if value["gen"] is None else value["gen"]  # null = the system produced nothing
    if not isinstance(gen, str):
        raise DataError(f"{where}: key 'gen' must be a string or null")
    src = value.get("src")
    if src is not None and not isinstance(src, str):
        raise DataError(f"{where}: key 'src' must be a string or null")
    scores = value["scores"]
    if not isinstance(scores, dict):
        raise DataError(f"{where}: key 'scores' must be an object of criterion -> number")
    for name, score in scores.items():
        if (
            not isinstance(score, int | float)
            or isinstance(score, bool)
            or not math.isfinite(score)
        ):
            raise DataError(f"{where}: scores[{name!r}] must be a finite number, got {score!r}")
    return HumanRecord(
        id=str(value["id"]),
        refs=tuple(refs),
        gen=gen,
        src=src,
        group=str(value["group"]),
        scores={k: float(v) for k, v in scores.items()},
        dataset=str(value.get("dataset", "")),
        system=value.get("system"),
        meta=value.get("meta") or {},
    )


def load_records(path: Path) -> list[HumanRecord]:
    """All records of one normalised JSONL(.gz) file."""
    return [parse_record(value, f"{path}:{line}") for line, value in iter_jsonl(path)]


def split_by_group(
    records: Iterable[HumanRecord], seed: int, test_fraction: float = 0.2
) -> tuple[list[HumanRecord], list[HumanRecord]]:
    """(train, test) with every group on one side only, chosen by a seeded hash of the group."""
    train, test = [], []
    for record in records:
        digest = hashlib.sha256(f"{seed}:{record.group}".encode()).digest()
        side = test if int.from_bytes(digest[:8], "big") / 2**64 < test_fraction else train
        side.append(record)
    return train, test
