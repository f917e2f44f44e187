"""Stress items: a gold hypothesis, the references a metric compares it with, and a source.

From a normalised JSONL file the user names the gold (``gen``) and references (``ref``).
From a task's human set, an item needs two or more references: the first is the gold and
the others are the references (SummEval: the CNN/DM highlight vs the 10 crowd-written
summaries; WMT21 cs/de/ru-en: reference A vs reference B; single-reference sets such as
WMT15-17 are not usable, since the gold would be compared with itself). System outputs are
never used: their quality is unknown, so a gold must be a human reference.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from evaluator.tasks import TASKS, get_task, load_task_records
from mismatch_core.errors import DataError
from mismatch_core.jsonl import iter_jsonl
from mismatch_core.pairs import has_references, has_text


@dataclass(frozen=True)
class StressItem:
    gold: str
    refs: tuple[str, ...]
    src: str | None = None


def _normal(text: str) -> str:
    return " ".join(text.split())


def items_from_jsonl(path: Path) -> list[StressItem]:
    """Items of a JSONL(.gz) file: ``ref`` (str or list), ``gen`` (the gold), optional ``src``."""
    items = []
    for line, value in iter_jsonl(path):
        where = f"{path}:{line}"
        for key in ("ref", "gen"):
            if key not in value:
                raise DataError(f"{where}: missing key {key!r}")
        refs = value["ref"] if isinstance(value["ref"], list) else [value["ref"]]
        if not refs or not has_references(refs):
            raise DataError(f"{where}: key 'ref' must be a non-empty string or list of them")
        if not has_text(value["gen"]):
            raise DataError(f"{where}: key 'gen' (the gold hypothesis) must be a non-empty string")
        src = value.get("src")
        if src is not None and not isinstance(src, str):
            raise DataError(f"{where}: key 'src' must be a string or null")
        items.append(StressItem(_normal(value["gen"]), tuple(_normal(r) for r in refs), src))
    return items


def items_from_task(name: str) -> list[StressItem]:
    """One item per source group with 2+ references: gold = first, refs = the others."""
    items, groups = [], set()
    for record in load_task_records(get_task(name)):
        refs = [_normal(r) for r in record.refs if r.strip()]
        if len(refs) < 2 or record.group in groups:
            continue
        gold, others = refs[0], tuple(r for r in refs[1:] if r != refs[0])
        if others:
            groups.add(record.group)
            items.append(StressItem(gold, others, record.src))
    if not items:
        raise DataError(f"task {name!r} has no item with two or more references")
    return items


def select(items: list[StressItem], limit: int | None) -> list[StressItem]:
    """The first ``limit`` distinct items in the order of a hash of the gold (not file order)."""
    distinct = {(item.gold, item.refs): item for item in items}
    ordered = sorted(distinct.values(), key=lambda i: hashlib.sha256(i.gold.encode()).hexdigest())
    return ordered if limit is None else ordered[:limit]


def load_items(data: str, limit: int | None = None) -> list[StressItem]:
    """Items from a JSONL file path or a task name; DataError says which it could not use."""
    if Path(data).is_file():
        items = items_from_jsonl(Path(data))
    elif data in TASKS:
        items = items_from_task(data)
    else:
        raise DataError(f"{data!r} is neither a file nor a task name (tasks: {', '.join(TASKS)})")
    if not items:
        raise DataError(f"{data}: no items")
    return select(items, limit)
