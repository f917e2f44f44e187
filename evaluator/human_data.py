"""Human-rating records in the normalised JSONL schema, with validation and group splits.

Schema (one JSON object per line, optionally gzip-compressed):
``{id, task, dataset, ref (str | [str]), gen, src (str | null), system, group, scores {criterion: float}}``.
Only ref, gen and scores are required, so that a user's own ratings need no bookkeeping: a
missing id is its line ("line 7"), a missing group the source (or, without one, the first
reference), so the outputs of one item stay on one side of a split; a score that is null is
not rated, as one left out. The loader names the file, line and key of any record that does
not fit, so a user's own data fails with a message they can act on.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from mismatch_core.errors import DataError
from mismatch_core.groups import group_position
from mismatch_core.jsonl import hashed_jsonl, is_json_name, iter_jsonl
from mismatch_core.pairs import has_references, has_text

REQUIRED_KEYS = ("ref", "gen", "scores")


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


def parse_record(value: dict, path: Path, line: int) -> HumanRecord:
    """One validated record of ``path``'s ``line``: messages name both, and a record without an
    id is named by its line."""
    where = f"{path}:{line}"
    for key in REQUIRED_KEYS:
        if key not in value:
            hint = " (an object of criterion -> rating)" if key == "scores" else ""
            raise DataError(f"{where}: missing key {key!r}{hint}")
    refs = value["ref"] if isinstance(value["ref"], list) else [value["ref"]]
    if not refs or not all(isinstance(r, str) for r in refs):
        raise DataError(f"{where}: key 'ref' must be a string or a non-empty list of strings")
    if not has_references(refs):  # as mismatch predict refuses it: nothing to compare
        raise DataError(f"{where}: key 'ref' holds an empty reference")
    gen = "" if value["gen"] is None else value["gen"]  # null = the system produced nothing
    if not isinstance(gen, str):
        raise DataError(f"{where}: key 'gen' must be a string or null")
    src = value.get("src")
    if src is not None and not isinstance(src, str):
        raise DataError(f"{where}: key 'src' must be a string or null")
    scores = value["scores"]
    if not isinstance(scores, dict):
        raise DataError(f"{where}: key 'scores' must be an object of criterion -> number")
    scores = {name: score for name, score in scores.items() if score is not None}  # not rated
    for name, score in scores.items():
        if (
            not isinstance(score, int | float)
            or isinstance(score, bool)
            or abs(score) > sys.float_info.max  # an integer no float holds
            or not math.isfinite(score)
        ):
            raise DataError(
                f"{where}: scores[{name!r}] must be a finite number, got {json.dumps(score)} "
                "(leave it out, or null, where it was not rated)"
            )
    record_id, group = value.get("id"), value.get("group")
    for key, item in (("id", record_id), ("group", group)):
        if item is not None and not is_json_name(item):
            raise DataError(f"{where}: key {key!r} must be a string, an integer or null")
    return HumanRecord(
        id=str(record_id if record_id is not None else f"line {line}"),
        refs=tuple(refs),
        gen=gen,
        src=src,
        group=str(group if group is not None else src if has_text(src) else refs[0]),
        scores={k: float(v) for k, v in scores.items()},
        dataset=str(value.get("dataset") or ""),
        system=value.get("system"),
        meta=value.get("meta") or {},
    )


def load_records(path: Path) -> list[HumanRecord]:
    """All records of one normalised JSONL(.gz) file."""
    return parse_records(iter_jsonl(path), path)


def load_hashed_records(path: Path) -> tuple[list[HumanRecord], str]:
    """All records of one JSONL(.gz) file and the sha256 of the bytes they were parsed from."""
    digest, lines = hashed_jsonl(path)
    return parse_records(lines, path), digest


def parse_records(lines: Iterable[tuple[int, dict]], path: Path) -> list[HumanRecord]:
    """The records of a file's (line number, object) pairs. Ids must be unique: a split maps
    each record back to its place by its id."""
    records = []
    seen: dict[str, int] = {}
    for line, value in lines:
        record = parse_record(value, path, line)
        if record.id in seen:
            raise DataError(
                f"{path}:{line}: key 'id': {record.id!r} is also the id of line {seen[record.id]}"
            )
        seen[record.id] = line
        records.append(record)
    return records


def split_by_group(
    records: Iterable[HumanRecord],
    seed: int,
    test_fraction: float = 0.2,
    at_least_one: bool = False,
) -> tuple[list[HumanRecord], list[HumanRecord]]:
    """(train, test) with every group on one side only, chosen by a seeded hash of the group:
    test holds the groups whose hash falls below ``test_fraction``; with ``at_least_one``, when
    none does but there are two or more groups, the one with the lowest hash (a fraction of a
    few groups, as a user's small file gives, can round to none)."""
    records = list(records)
    groups = {record.group: group_position(seed, record.group) for record in records}
    held = {group for group, value in groups.items() if value < test_fraction}
    if at_least_one and not held and len(groups) > 1:
        held = {min(groups, key=groups.__getitem__)}
    train = [record for record in records if record.group not in held]
    test = [record for record in records if record.group in held]
    return train, test
