"""Predict inputs and outputs: line-aligned text files or JSONL in; JSONL, CSV or TSV out.

Every reader error is an `InputError` naming the file, the line and, for JSONL, the key, so a
user can fix the input. Writers format everything first and replace the output file in one
rename, so a failed run never leaves a partial file.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evaluator.human_data import DataError, iter_json_lines, jsonl_lines
from synth.taxonomy import CODES

if TYPE_CHECKING:  # the readers must not import torch: bad input fails before it loads
    from evaluator.evaluator import Prediction

FORMATS = ("jsonl", "csv", "tsv")
STDIN_NAME = "<stdin>"


class InputError(ValueError):
    """Input that cannot be read as pairs; the message names the file and line."""


@dataclass
class Pairs:
    """Pairs to score, in input order; ids default to the input line number."""

    ids: list[str]
    refs: list[str | list[str]]
    gens: list[str]
    srcs: list[str | None] | None


def read_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 text file without line endings (a final newline adds no line)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"{path}: cannot read ({error.strerror})") from None
    raw_lines = data.split(b"\n")
    if raw_lines[-1] == b"":
        raw_lines.pop()
    lines = []
    for number, raw in enumerate(raw_lines, 1):
        try:
            lines.append(raw.decode("utf-8").removesuffix("\r"))
        except UnicodeDecodeError as error:
            raise InputError(f"{path}:{number}: invalid UTF-8 ({error.reason})") from None
    return lines


def read_aligned(ref_paths: Sequence[Path], gen_path: Path, src_path: Path | None) -> Pairs:
    """Line i of every file is pair i; several reference files give several references each."""
    gens = read_lines(gen_path)
    columns = [read_lines(path) for path in ref_paths]
    srcs = read_lines(src_path) if src_path is not None else None
    named = [(path, len(lines)) for path, lines in zip(ref_paths, columns, strict=True)]
    if src_path is not None:
        named.append((src_path, len(srcs)))
    for path, count in named:
        if count != len(gens):
            raise InputError(
                f"{path} has {count} line(s) but {gen_path} has {len(gens)}; "
                "the files must be line-aligned"
            )
    refs = [lines[0] if len(lines) == 1 else list(lines) for lines in zip(*columns, strict=True)]
    return Pairs([str(i) for i in range(1, len(gens) + 1)], refs, gens, srcs)


def read_jsonl_file(path: Path) -> Pairs:
    """Pairs from a .jsonl (or .jsonl.gz) file of {"ref", "gen", "src"?, "id"?} objects."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    return read_jsonl(jsonl_lines(path), str(path))


def read_jsonl(lines: Iterable[bytes], name: str) -> Pairs:
    """Pairs from JSONL bytes (blank lines skipped); `name` is the file named in errors."""
    pairs = Pairs([], [], [], [])
    try:
        for number, value in iter_json_lines(lines, name):
            where = f"{name}:{number}"
            item_id, ref, gen, src = parse_pair(value, where, default_id=str(number))
            pairs.ids.append(item_id)
            pairs.refs.append(ref)
            pairs.gens.append(gen)
            pairs.srcs.append(src)
    except DataError as error:
        raise InputError(str(error)) from None
    if all(src is None for src in pairs.srcs):
        pairs.srcs = None
    return pairs


def parse_pair(
    value: dict, where: str, default_id: str
) -> tuple[str, str | list[str], str, str | None]:
    """(id, ref, gen, src) of one JSONL object; InputError names `where` and the key."""
    for key in ("ref", "gen"):
        if key not in value:
            raise InputError(f"{where}: missing key {key!r}")
    ref = value["ref"]
    if isinstance(ref, list) and len(ref) == 1:
        ref = ref[0]
    if not (
        isinstance(ref, str)
        or (ref and isinstance(ref, list) and all(isinstance(r, str) for r in ref))
    ):
        raise InputError(f"{where}: key 'ref' must be a string or a non-empty list of strings")
    gen = "" if value["gen"] is None else value["gen"]  # null: the system produced nothing
    if not isinstance(gen, str):
        raise InputError(f"{where}: key 'gen' must be a string or null")
    src = value.get("src")
    if src is not None and not isinstance(src, str):
        raise InputError(f"{where}: key 'src' must be a string or null")
    item_id = value.get("id", default_id)
    if not isinstance(item_id, str | int) or isinstance(item_id, bool):
        raise InputError(f"{where}: key 'id' must be a string or an integer")
    return str(item_id), ref, gen, src


def columns(rating_keys: Sequence[str]) -> list[str]:
    """CSV/TSV header: id, score, rating.<key>..., p.<Class>..., labels."""
    return [
        "id",
        "score",
        *(f"rating.{k}" for k in rating_keys),
        *(f"p.{c}" for c in CODES),
        "labels",
    ]


def flat_row(prediction: Prediction, rating_keys: Sequence[str]) -> list:
    """One CSV/TSV row; labels joined by "|"."""
    return [
        prediction.id,
        prediction.score,
        *(prediction.ratings[key] for key in rating_keys),
        *(prediction.mismatch[code] for code in CODES),
        "|".join(prediction.labels),
    ]


def format_predictions(
    predictions: Sequence[Prediction], output_format: str, rating_keys: Sequence[str]
) -> str:
    """The whole output as text in one of FORMATS."""
    if output_format == "jsonl":
        return "".join(json.dumps(p.to_dict(), ensure_ascii=False) + "\n" for p in predictions)
    if output_format not in FORMATS:
        raise ValueError(
            f"unknown output format {output_format!r}; use one of {', '.join(FORMATS)}"
        )
    buffer = io.StringIO()
    writer = csv.writer(
        buffer, delimiter="," if output_format == "csv" else "\t", lineterminator="\n"
    )
    writer.writerow(columns(rating_keys))
    writer.writerows(flat_row(p, rating_keys) for p in predictions)
    return buffer.getvalue()
