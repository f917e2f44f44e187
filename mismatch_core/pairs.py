"""The pairs file: one schema and one reader for every parquet of (reference, generated) pairs.

Every pairs file has ``id``, ``ref`` (a string or a list of strings) and ``gen``; a labelled one
(a synth split, training data) adds the class ``label`` and its taxonomy index ``label_id``;
``mismatch synth`` also writes where each pair came from. Every problem is a DataError that
names the file and, for a bad row, its number and id.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import TypeGuard

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from mismatch_core.atomic import folder_problem
from mismatch_core.errors import DataError, PairError
from mismatch_core.jsonl import read_json
from mismatch_core.taxonomy import CODES, NUM_CLASSES

PAIR_COLUMNS = ("id", "ref", "gen")
LABEL_COLUMNS = ("label", "label_id")
SYNTH_COLUMNS = (*PAIR_COLUMNS, *LABEL_COLUMNS, "source", "group", "rule", "detail")


def is_null(value: object) -> bool:
    """Whether ``value`` is a null: in a parquet string column it arrives as None or NaN, from
    pandas or numpy also as pandas' NA or a NaN of numpy's float types."""
    return (
        value is None
        or value is pd.NA
        or (isinstance(value, float | np.floating) and math.isnan(value))
    )


def check_pairs(refs: Sequence, gens: Sequence) -> None:
    """Raise PairError naming the first pair whose ref or gen has the wrong type."""
    if len(refs) != len(gens):
        raise ValueError(f"{len(refs)} references but {len(gens)} generated texts")
    for index, (ref, gen) in enumerate(zip(refs, gens, strict=True)):
        if not isinstance(gen, str):
            got = "null" if is_null(gen) else type(gen).__name__
            raise PairError(index, f"gen must be a string, got {got}")
        if isinstance(ref, str):
            continue
        if not isinstance(ref, (list, tuple, np.ndarray)) or len(ref) == 0:
            raise PairError(index, "ref must be a string or a non-empty list of strings")
        if not all(isinstance(item, str) for item in ref):
            raise PairError(index, "every reference must be a string")


def detail_problem(detail: object) -> str | None:
    """What keeps a synth pair's ``detail`` from being read as its rule's record (a JSON
    object whose base_text, when given, is a string), or None."""
    if not isinstance(detail, str):
        return f"must be a JSON object, got {'null' if is_null(detail) else type(detail).__name__}"
    try:
        values = read_json(detail)
    except ValueError as error:
        return f"is not valid JSON ({error}): {detail[:80]!r}"
    if not isinstance(values, dict):
        return f"must be a JSON object, got {detail[:80]!r}"
    if not isinstance(values.get("base_text", ""), str):
        return f"base_text must be a string, got {values['base_text']!r}"
    return None


# What the encoder's (uncased) tokenizer drops and a reader does not see: control, format
# (a zero-width space, a byte-order mark, a soft hyphen) and private-use characters, marks
# with no letter to sit on (variation selectors too), and the replacement character that a
# misdecoded byte becomes.
INVISIBLE_CATEGORIES = ("Cc", "Cf", "Co", "Mn")
REPLACEMENT_CHARACTER = "\ufffd"


def has_text(value: object) -> TypeGuard[str]:
    """Whether ``value`` is a string with a visible character (a pair's source is given only
    then): not only white space and the INVISIBLE_CATEGORIES."""
    return isinstance(value, str) and any(
        not (
            char.isspace()
            or char == REPLACEMENT_CHARACTER
            or unicodedata.category(char) in INVISIBLE_CATEGORIES
        )
        for char in value
    )


def references(ref: str | Sequence[str]) -> list[str]:
    """A pair's references as a list: one string is one reference."""
    return [ref] if isinstance(ref, str) else list(ref)


def word_count(text: str) -> int:
    """The words of ``text``: its space-separated parts that hold a letter or digit ("Yes."
    is one word, "👍" and "..." none). A script written without spaces (Chinese, Japanese,
    Thai) counts a sentence as one word."""
    return sum(any(character.isalnum() for character in part) for part in text.split())


def short_reference_pairs(refs: Sequence[str | Sequence[str]], words: int) -> int:
    """How many pairs have a reference (any of theirs) of fewer than ``words`` words."""
    return sum(any(word_count(one) < words for one in references(ref)) for ref in refs)


def has_references(ref: str | Sequence[str]) -> bool:
    """Whether every reference of a pair's ``ref`` (one string or several) has text. Features
    are defined for an empty one, but a prediction against nothing is a mistake in the input;
    an empty gen is not (the system produced nothing)."""
    return all(has_text(item) for item in references(ref))


def first_empty_reference(refs: Sequence[str | Sequence[str]]) -> int | None:
    """The index of the first pair with an empty reference (nothing visible), or None."""
    return next((index for index, ref in enumerate(refs) if not has_references(ref)), None)


def first_without_source(srcs: Sequence[object] | None, n: int) -> int | None:
    """The index of the first of ``n`` pairs without a source (``srcs`` None or shorter counts
    as none), or None when every pair has one."""
    for index in range(n):
        if srcs is None or index >= len(srcs) or not has_text(srcs[index]):
            return index
    return None


def pair_folder_problem(path: Path, names: tuple[str, ...]) -> str | None:
    """Why folder ``path`` cannot be replaced whole by a pair set of the files ``names``
    (``folder_problem``), or None. A parquet file there without ref and gen columns is kept:
    a feature cache's folder holds the same train.parquet and val.parquet."""
    problem = folder_problem(path, names)
    if problem or not Path(path).is_dir():
        return problem
    for file in (Path(path) / name for name in names if name.endswith(".parquet")):
        try:
            columns = pq.read_schema(file).names
        except (OSError, pa.ArrowException):  # absent, or no parquet: nothing to keep
            continue
        if not {"ref", "gen"} <= set(columns):
            return (
                f"{file} holds no pairs (no ref and gen columns: a feature cache?); refusing to "
                "replace it (give the pair set's folder, or a new one)"
            )
    return None


def read_pairs(path: str | Path, labelled: bool = False) -> pd.DataFrame:
    """The pairs of a parquet file, checked: the schema's columns present, ids unique, ref and
    gen of the right types and, when ``labelled``, every label the taxonomy class of its
    label_id. Unlabelled: the id (as a string), ref and gen columns; labelled: every column."""
    path = Path(path)
    if path.is_dir():
        raise DataError(f"pairs file {path} is a directory; give a .parquet file of pairs")
    if not path.is_file():
        raise DataError(f"pairs file {path} does not exist")
    try:
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowException) as error:
        raise DataError(f"{path} is not a readable parquet file of pairs ({error})") from None
    required = (*PAIR_COLUMNS, *LABEL_COLUMNS) if labelled else PAIR_COLUMNS
    missing = [column for column in required if column not in schema.names]
    if missing:
        raise DataError(f"{path} lacks column(s) {', '.join(missing)}")
    pairs = pd.read_parquet(path, columns=None if labelled else list(PAIR_COLUMNS))
    if pairs["id"].isna().any():
        row = int(pairs["id"].isna().to_numpy().argmax()) + 1
        raise DataError(f"{path}: row {row} has no id")
    pairs["id"] = pairs["id"].astype(str)
    duplicated = pairs["id"][pairs["id"].duplicated()]
    if len(duplicated):
        raise DataError(f"{path}: pair id {duplicated.iloc[0]!r} occurs more than once")
    try:
        check_pairs(list(pairs["ref"]), list(pairs["gen"]))
    except PairError as error:
        row = error.index
        raise DataError(
            f"{path}: row {row + 1} (id {pairs['id'].iloc[row]!r}): {error.problem}"
        ) from None
    if labelled:
        _check_labels(pairs, path)
    return pairs


def _check_labels(pairs: pd.DataFrame, path: Path) -> None:
    if not pd.api.types.is_integer_dtype(pairs["label_id"]):
        raise DataError(
            f"{path}: column label_id holds {pairs['label_id'].dtype} values; expected integer "
            f"class indices 0..{NUM_CLASSES - 1}"
        )
    out_of_range = ~pairs["label_id"].between(0, NUM_CLASSES - 1)
    if out_of_range.any():
        raise DataError(
            f"{path}: label_id outside 0..{NUM_CLASSES - 1} for {int(out_of_range.sum())} rows"
        )
    wrong = pairs["label"] != pairs["label_id"].map(lambda i: CODES[i])
    if wrong.any():
        row = pairs[wrong].iloc[0]
        raise DataError(
            f"{path}: label {row['label']!r} does not match label_id {row['label_id']} "
            f"(id {row['id']!r})"
        )
