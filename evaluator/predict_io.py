"""Predict inputs and outputs: line-aligned text files or JSONL in; JSONL, CSV or TSV out.

`Prediction` is one pair's result. Inputs are read line by line, twice: a first pass checks
every line and counts the pairs (the progress bar's total) before the model loads, the second
feeds the pairs in chunks, so memory does not grow with the input. Every reader error is a
`DataError` naming the file, the line and, for JSONL, the key, so a user can fix the input. The
writer appends as predictions come; `mismatch predict` writes it to a temporary file renamed at
the end.

Error spans in CSV/TSV: two columns after `ref_index`, present only when the run computed spans.
They leave the text out (gen[start:end], or the reference's slice, may hold any separator):
  spans:   START-END:LABEL:PROB items joined by "|", e.g. 27-29:NumErr:0.93|4-11:EntErr:0.61
  missing: REF_INDEX:START-END:LABEL:PROB items joined by "|", e.g. 0:40-53:MissInfo:0.88
Offsets are code points (Python str indices), end exclusive; PROB is the probability rounded
to 6 decimals as Python writes the float (0.93, 5e-06). An empty cell is an empty list.
`parse_spans_column` and `parse_missing_column` read them back.

`SystemSummary` adds up the predictions as they are written: the system-level figures a user
compares systems by (`mismatch predict --summary`).
"""

from __future__ import annotations

import csv
import itertools
import json
import os
import re
import stat
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, BinaryIO, TextIO

from mismatch_core.atomic import same_path
from mismatch_core.errors import DataError
from mismatch_core.jsonl import (
    STDIN_NAME,
    check_jsonl_file,
    decoded_lines,
    is_json_name,
    iter_json_lines,
    iter_jsonl,
    raw_lines,
)
from mismatch_core.pairs import has_references, has_text
from mismatch_core.taxonomy import CODES

FORMATS = ("jsonl", "csv", "tsv")
ROUND_DIGITS = 6  # outputs are model probabilities; more digits are noise


@dataclass(frozen=True)
class Prediction:
    """One pair's result.

    score: P(NoContr), the probability that gen says what the reference says (1 = no error).
    ratings: criterion key -> value on the task's human scale (fine-tuned checkpoints; {} for
    the base); for a classification task (NLI) the value is the class probability.
    mismatch: class code -> probability, all 14 in taxonomy order, summing to 1 (within the
    rounding to ROUND_DIGITS digits each).
    labels: the classes whose probability is at least the threshold, most likely first;
    "NoContr" for a clean pair, an error code for a flagged one, empty when no class is that
    likely (the model is unsure).
    ref_index: which of the pair's references (0-based; 0 for a single reference) names the
    errors of mismatch, labels and spans (``inference.reading_rows``): the one whose reading
    the mismatch head finds likeliest to be NoContr (before the terms of a head's own metric
    columns, so not always the highest score), or, with deciding_reference
    "likeliest_errors_closest", the reference closest on the metrics where the score and the
    P(NoContr) against that reference are both below 0.5. The score (and so mismatch's
    NoContr) and the ratings are always the likeliest reading's; with that rule the error
    classes share the rest as the naming reference's reading has them.
    spans: the characters of gen read as wrong, most probable first, each {"start", "end",
    "text", "label", "prob"} with gen[start:end] == text (code points, end exclusive) and label
    an error class (never NoContr or MissInfo); [] for a pair read as correct.
    missing: the reference words gen leaves out, each {"ref_index", "ref_start", "ref_end",
    "text", "label": "MissInfo", "prob"}, offsets into reference ref_index (the one that names
    the pair's errors). Both None when spans were not computed (turned off, or no span tagger in the
    checkpoint): the outputs then leave their keys and columns out.
    """

    id: str
    score: float
    ratings: dict[str, float]
    mismatch: dict[str, float]
    labels: list[str]
    spans: list[dict] | None = None
    missing: list[dict] | None = None
    ref_index: int = 0  # last, so that code building a Prediction by position keeps working

    def to_dict(self) -> dict:
        result = {
            "id": self.id,
            "score": self.score,
            "ratings": dict(self.ratings),
            "mismatch": dict(self.mismatch),
            "labels": list(self.labels),
            "ref_index": self.ref_index,
        }
        if self.spans is not None:
            result["spans"] = [dict(span) for span in self.spans]
        if self.missing is not None:
            result["missing"] = [dict(item) for item in self.missing]
        return result


@dataclass
class Pairs:
    """Pairs to score, in input order; ids default to the input line number."""

    ids: list[str]
    refs: list[str | list[str]]
    gens: list[str]
    srcs: list[str | None] | None


PairRow = tuple[str, "str | list[str]", str, "str | None"]  # (id, ref, gen, src)


class AlignedInput:
    """Line-aligned text files: line i of every file is pair i, id "i"; several reference
    files give several references per pair. Read line by line, so memory does not grow; a
    pipe (`--refs <(cmd)`, /dev/stdin), which gives its lines once, is kept in a temporary
    file for the second pass. ``pipe_copies``: the copies kept so far, shared by inputs that
    name one pipe (`mismatch compare`'s systems, one --refs)."""

    def __init__(
        self,
        ref_paths: Sequence[Path],
        gen_path: Path,
        src_path: Path | None,
        pipe_copies: dict[Path, IO[bytes]] | None = None,
    ) -> None:
        self.ref_paths = list(ref_paths)
        self.gen_path = gen_path
        self.src_path = src_path
        self._copies = {} if pipe_copies is None else pipe_copies
        for path in [gen_path, *self.ref_paths, *([src_path] if src_path else [])]:
            if path not in self._copies and is_pipe(path):
                self._copies[path] = spooled(path)

    def count(self, require_sources: bool = False) -> int:
        """The number of pairs, after one pass that checks UTF-8, equal line counts, a
        reference on every line of every reference file and, with ``require_sources`` (a
        checkpoint whose ratings read each output against its source), a source on every line;
        DataError names the file (and line)."""
        if require_sources and self.src_path is None:
            raise DataError(
                f"{self.gen_path}: this checkpoint reads each output against its source; "
                "give --srcs FILE"
            )
        gens = count_lines(self._lines(self.gen_path), self.gen_path)
        for path in self.ref_paths:
            self._check_length(path, count_lines(self._lines(path), path, "reference"), gens)
        if self.src_path is not None:
            required = "source" if require_sources else None
            lines = self._lines(self.src_path)
            self._check_length(self.src_path, count_lines(lines, self.src_path, required), gens)
        return gens

    def _lines(self, path: Path) -> Iterator[str]:
        """The file's lines, read afresh (a pipe's from its copy), errors naming ``path``."""
        copy = self._copies.get(path)
        return iter_text_lines(path, Path(copy.name) if copy is not None else None)

    def _check_length(self, path: Path, count: int, gens: int) -> None:
        if count != gens:
            raise DataError(
                f"{path} has {count} line(s) but {self.gen_path} has {gens}; "
                "the files must be line-aligned"
            )

    def rows(self) -> Iterator[PairRow]:
        paths = [self.gen_path, *self.ref_paths, *([self.src_path] if self.src_path else [])]
        files = [self._lines(path) for path in paths]
        size = len(self.ref_paths)
        try:
            for number, (gen, *rest) in enumerate(zip(*files, strict=True), 1):
                refs, src = rest[:size], rest[size] if self.src_path else None
                yield str(number), refs[0] if size == 1 else refs, gen, src
        except ValueError:  # zip(strict=True): count() found equal lengths, so a file changed
            raise DataError(f"{self.gen_path}: the input files changed while being read") from None


class JsonlInput:
    """JSONL of {"ref", "gen", "src"?, "id"?} objects; ``open_lines`` gives the raw lines afresh
    for each pass (counting, then scoring); ``name`` is the file named in errors."""

    def __init__(
        self, open_lines: Callable[[], Iterable[bytes]], name: str, piped: bool = False
    ) -> None:
        self.open_lines = open_lines
        self.name = name
        self.piped = piped  # read once (a pipe, stdin): gzip is undone with zcat, not a name

    @classmethod
    def from_file(cls, path: Path) -> JsonlInput:
        """A .jsonl or .jsonl.gz file, or a pipe (`--input <(cmd)`, /dev/stdin) kept in a
        temporary file so it can be read twice."""
        if is_pipe(path):
            return cls._from_copy(spooled(path), str(path))
        if not same_path(path, Path(os.devnull)):  # /dev/null: no pairs
            check_jsonl_file(path)
        return cls(lambda: raw_lines(path), str(path))

    @classmethod
    def from_stream(cls, stream: BinaryIO, name: str = STDIN_NAME) -> JsonlInput:
        """A stream read once (stdin), kept in a temporary file so it can be read twice; a
        terminal read unbuffered, so that one Ctrl-D ends it."""
        if stream.isatty():
            stream = open(stream.fileno(), "rb", buffering=0, closefd=False)
        return cls._from_copy(spool(stream), name)

    @classmethod
    def _from_copy(cls, copy: IO[bytes], name: str) -> JsonlInput:
        """Input read once, from its `spool` copy: each pass opens the copy afresh (gunzipped
        when ``name`` ends .gz)."""
        return cls(lambda: raw_lines(Path(name), Path(copy.name).open("rb")), name, True)

    def count(self, require_sources: bool = False) -> int:
        """The number of pairs, after one pass that checks every line, that no two pairs share
        an id (the outputs are joined back by id) and, with ``require_sources`` (a checkpoint
        whose ratings read each output against its source), that each has a source (key
        "src"); DataError names the line."""
        # kept per pair (memory grows with the ids alone): the first line, and whether it named
        # its id or took its line number
        first_use: dict[str, tuple[int, bool]] = {}
        for number, named, (item_id, _, _, src) in self._numbered_rows():
            where = f"{self.name}:{number}"
            if require_sources and not has_text(src):
                raise DataError(
                    f"{where}: key 'src' is missing, null or blank (this checkpoint reads "
                    "each output against its source)"
                )
            first, first_named = first_use.setdefault(item_id, (number, named))
            if first != number:
                hint = (
                    "" if named and first_named else " (a line without 'id' takes its line number)"
                )
                raise DataError(
                    f"{where}: key 'id' {item_id!r} was already used at {self.name}:{first}"
                    f"{hint}; ids must be unique"
                )
        return len(first_use)

    def rows(self) -> Iterator[PairRow]:
        for _, _, row in self._numbered_rows():
            yield row

    def named_ids(self) -> list[bool]:
        """Per pair, whether its line names its id (else its id is its line number)."""
        return [named for _, named, _ in self._numbered_rows()]

    def _numbered_rows(self) -> Iterator[tuple[int, bool, PairRow]]:
        """(line number, whether the line names its id, pair) of every line."""
        for number, value in iter_json_lines(self.open_lines(), self.name, self.piped):
            where = f"{self.name}:{number}"
            yield number, "id" in value, parse_pair(value, where, default_id=str(number))


def iter_text_lines(path: Path, copy: Path | None = None) -> Iterator[str]:
    """The lines of a UTF-8 text file (gunzipped when named .gz) without line endings and a
    leading byte order mark, one at a time (a final newline adds no line; LF or CRLF, and
    DataError for a CR inside a line); ``copy``: where the lines of a pipe named ``path`` were
    kept (`spooled`), read in its place."""
    try:
        handle = (copy or path).open("rb")
    except OSError as error:
        raise DataError(f"{path}: cannot read ({error.strerror})") from None
    compressed = "name it .gz" if copy is None else "pipe it through zcat"
    for number, line in decoded_lines(raw_lines(path, handle), str(path), compressed):
        line = line.removesuffix("\n").removesuffix("\r")
        if "\r" in line:  # one text a line: a carriage return inside one ends a line elsewhere
            raise DataError(
                f"{path}:{number}: a carriage return inside the line, which would be read as "
                "part of the text; if the file's lines end with CR alone (old Mac), convert them "
                "to LF (tr '\\r' '\\n'), else remove it"
            )
        yield line


def count_lines(lines: Iterable[str], path: Path, nonblank: str | None = None) -> int:
    """The number of ``lines`` (of the text file ``path``), after reading them all; with
    ``nonblank`` (what each line holds, "reference" or "source"), DataError names the first
    line with no more than white space."""
    count = 0
    for count, line in enumerate(lines, 1):
        if nonblank is not None and not has_text(line):
            raise DataError(f"{path}:{count}: empty {nonblank}")
    return count


def is_pipe(path: Path) -> bool:
    """Whether ``path`` gives its bytes once: a pipe (`<(cmd)`, /dev/stdin on a pipe), a
    socket or a terminal (/dev/stdin typed into), not a file that can be read again. Other
    devices are read as files (/dev/null: empty; a copy of /dev/urandom would not end)."""
    try:
        mode = path.stat().st_mode
    except OSError:  # missing: the readers name it
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and is_tty(path))


def is_tty(path: Path) -> bool:
    """Whether the device ``path`` is a terminal (opened without waiting, nor taking it as
    the process's terminal)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return False
    try:
        return os.isatty(descriptor)
    finally:
        os.close(descriptor)


def spooled(path: Path) -> IO[bytes]:
    """`spool` of the pipe ``path``; DataError names a pipe that cannot be read."""
    try:
        with path.open("rb", buffering=0) as stream:  # unbuffered: one Ctrl-D ends a terminal
            return spool(stream)
    except OSError as error:
        raise DataError(f"{path}: cannot read ({error.strerror})") from None


SPOOL_CHUNK = 1 << 20  # bytes read and written at a time


def spool(stream: BinaryIO) -> IO[bytes]:
    """The bytes of ``stream``, read once, kept in a temporary file (removed when closed, or
    at exit) that readers open afresh by its name, for as many passes as they need."""
    copy = tempfile.NamedTemporaryFile(prefix="mismatch-input-")
    try:
        while chunk := stream.read(SPOOL_CHUNK):
            try:
                copy.write(chunk)
                copy.flush()
            except OSError as error:  # a read error is the caller's to name
                raise DataError(
                    f"cannot keep a copy of the input in {Path(copy.name).parent} "
                    f"({error.strerror}); set TMPDIR to a folder with room"
                ) from None
    except BaseException:
        copy.close()
        raise
    return copy


def chunked(rows: Iterable[PairRow], size: int) -> Iterator[Pairs]:
    """Consecutive rows gathered into Pairs of at most ``size``."""
    rows = iter(rows)
    while block := list(itertools.islice(rows, size)):
        ids, refs, gens, srcs = (list(column) for column in zip(*block, strict=True))
        yield Pairs(ids, refs, gens, srcs)


def read_jsonl_file(path: Path) -> tuple[Pairs, list[dict]]:
    """All pairs of a small .jsonl (or .jsonl.gz) file at once (the demo's examples), read
    once, with each pair's JSON object for keys beyond the pair's (the demo's notes)."""
    objects = list(iter_jsonl(path))
    rows = [parse_pair(value, f"{path}:{line}", default_id=str(line)) for line, value in objects]
    pairs = next(chunked(rows, len(rows)), Pairs([], [], [], []))
    return pairs, [value for _, value in objects]


def parse_pair(
    value: dict, where: str, default_id: str
) -> tuple[str, str | list[str], str, str | None]:
    """(id, ref, gen, src) of one JSONL object; DataError names `where` and the key."""
    for key in ("ref", "gen"):
        if key not in value:
            raise DataError(f"{where}: missing key {key!r}")
    ref = value["ref"]
    if isinstance(ref, list) and len(ref) == 1 and isinstance(ref[0], str):
        ref = ref[0]  # [[a, b]] is no list of strings
    if not (
        isinstance(ref, str)
        or (ref and isinstance(ref, list) and all(isinstance(r, str) for r in ref))
    ):
        raise DataError(f"{where}: key 'ref' must be a string or a non-empty list of strings")
    if not has_references(ref):
        raise DataError(f"{where}: key 'ref' holds an empty reference")
    gen = "" if value["gen"] is None else value["gen"]  # null: the system produced nothing
    if not isinstance(gen, str):
        raise DataError(f"{where}: key 'gen' must be a string or null")
    src = value.get("src")
    if src is not None and not isinstance(src, str):
        raise DataError(f"{where}: key 'src' must be a string or null")
    item_id = value.get("id", default_id)
    if not is_json_name(item_id):
        raise DataError(f"{where}: key 'id' must be a string or an integer")
    if item_id == "":  # an id names its record in the output; an empty one names none
        raise DataError(f"{where}: key 'id' is empty; give a non-empty string or leave it out")
    return str(item_id), ref, gen, src


def columns(rating_keys: Sequence[str], spans: bool = False) -> list[str]:
    """CSV/TSV header: id, score, rating.<key>..., p.<Class>..., labels, ref_index[, spans,
    missing]."""
    return [
        "id",
        "score",
        *(f"rating.{k}" for k in rating_keys),
        *(f"p.{c}" for c in CODES),
        "labels",
        "ref_index",
        *(["spans", "missing"] if spans else []),
    ]


def flat_row(prediction: Prediction, rating_keys: Sequence[str], spans: bool = False) -> list:
    """One CSV/TSV row; labels joined by "|", spans and missing in their compact form."""
    row = [
        prediction.id,
        prediction.score,
        *(prediction.ratings[key] for key in rating_keys),
        *(prediction.mismatch[code] for code in CODES),
        "|".join(prediction.labels),
        prediction.ref_index,
    ]
    if not spans:
        return row
    if prediction.spans is None or prediction.missing is None:
        raise ValueError(f"prediction {prediction.id!r} has no spans for the span columns")
    return [*row, spans_column(prediction.spans), missing_column(prediction.missing)]


def spans_column(spans: Sequence[dict]) -> str:
    """The compact CSV/TSV form of a prediction's spans (module docstring)."""
    return "|".join(
        f"{s['start']}-{s['end']}:{s['label']}:{_compact_prob(s['prob'])}" for s in spans
    )


def missing_column(missing: Sequence[dict]) -> str:
    """The compact CSV/TSV form of a prediction's missing reference words (module docstring)."""
    return "|".join(
        f"{m['ref_index']}:{m['ref_start']}-{m['ref_end']}:{m['label']}:{_compact_prob(m['prob'])}"
        for m in missing
    )


def _compact_prob(prob: float) -> str:
    return repr(round(float(prob), 6))


_SPAN_ITEM = re.compile(r"([0-9]+)-([0-9]+):([A-Za-z]+):([^\s:|]+)")
_MISSING_ITEM = re.compile(r"([0-9]+):([0-9]+)-([0-9]+):([A-Za-z]+):([^\s:|]+)")


def parse_spans_column(value: str | float | None) -> list[dict]:
    """The spans of a CSV/TSV `spans` cell, without their text; DataError names a bad item.
    An empty cell has none, also as pandas reads one (NaN, or NA)."""
    spans = []
    for number, item in _column_items(value):
        where = f"spans item {number} {item!r}"
        match = _SPAN_ITEM.fullmatch(item)
        if match is None:
            raise DataError(f"{where}: expected START-END:LABEL:PROB")
        start, end, label, prob = match.groups()
        if label not in CODES or label in ("NoContr", "MissInfo"):
            raise DataError(f"{where}: label {label!r} is not an error class of a span")
        start, end = _offsets(start, end, where)
        spans.append({"start": start, "end": end, "label": label, "prob": _prob(prob, where)})
    return spans


def parse_missing_column(value: str | float | None) -> list[dict]:
    """The missing reference words of a CSV/TSV `missing` cell, without their text; DataError
    names a bad item. An empty cell has none, also as pandas reads one (NaN, or NA)."""
    missing = []
    for number, item in _column_items(value):
        where = f"missing item {number} {item!r}"
        match = _MISSING_ITEM.fullmatch(item)
        if match is None:
            raise DataError(f"{where}: expected REF_INDEX:START-END:LABEL:PROB")
        ref_index, start, end, label, prob = match.groups()
        if label != "MissInfo":
            raise DataError(f"{where}: label {label!r} is not MissInfo")
        start, end = _offsets(start, end, where)
        missing.append(
            {
                "ref_index": int(ref_index),
                "ref_start": start,
                "ref_end": end,
                "label": label,
                "prob": _prob(prob, where),
            }
        )
    return missing


def _column_items(value: str | float | None) -> list[tuple[int, str]]:
    """The "|"-separated items of a cell, numbered from 1; an empty cell has none. Every
    correct pair's cells are empty, which ``pandas.read_csv`` reads as NaN (NA with
    dtype="string"): those crashed the parsers with an AttributeError."""
    import pandas as pd

    if isinstance(value, str):
        return list(enumerate(value.split("|"), 1)) if value else []
    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
        return []
    raise DataError(f"expected a cell's text, got {value!r}")


def _offsets(start: str, end: str, where: str) -> tuple[int, int]:
    if int(start) > int(end):
        raise DataError(f"{where}: start {start} is after end {end}")
    return int(start), int(end)


def _prob(text: str, where: str) -> float:
    message = f"{where}: probability {text!r} is not a number in [0, 1]"
    try:
        prob = float(text)
    except ValueError:
        raise DataError(message) from None
    if not 0.0 <= prob <= 1.0:  # also rejects nan
        raise DataError(message)
    return prob


class PredictionWriter:
    """Writes predictions to a text stream in one of FORMATS as they come: a CSV/TSV header
    first (also for no predictions), then one line per prediction. ``spans``: the run computed
    error spans, so CSV/TSV get the spans and missing columns (JSONL writes what each
    prediction holds)."""

    def __init__(
        self,
        stream: TextIO,
        output_format: str,
        rating_keys: Sequence[str],
        spans: bool = False,
    ) -> None:
        if output_format not in FORMATS:
            raise ValueError(
                f"unknown output format {output_format!r}; use one of {', '.join(FORMATS)}"
            )
        self.stream = stream
        self.rating_keys = list(rating_keys)
        self.spans = spans
        self.table = self.quoted = None
        if output_format != "jsonl":
            delimiter = "," if output_format == "csv" else "\t"
            self.table = csv.writer(stream, delimiter=delimiter, lineterminator="\n")
            # csv quotes a cell with a line feed, not one with a lone carriage return (an id
            # can hold one), which readers then take for a line end: such rows quote every text
            self.quoted = csv.writer(
                stream, delimiter=delimiter, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC
            )
            self.table.writerow(columns(self.rating_keys, spans))

    def write(self, predictions: Sequence[Prediction]) -> None:
        if self.table is None or self.quoted is None:
            self.stream.write(
                "".join(json.dumps(p.to_dict(), ensure_ascii=False) + "\n" for p in predictions)
            )
            return
        for prediction in predictions:
            row = flat_row(prediction, self.rating_keys, self.spans)
            has_return = any(isinstance(cell, str) and "\r" in cell for cell in row)
            (self.quoted if has_return else self.table).writerow(row)


@dataclass
class SystemSummary:
    """System-level figures of a run, added up as predictions come (memory does not grow with
    the input): the mean score, the mean of each rating and how many pairs each class names.
    One system's outputs per run, as BLEU or COMET score a system."""

    rating_keys: Sequence[str]
    pairs: int = field(default=0, init=False)
    score_sum: float = field(default=0.0, init=False)
    rating_sums: dict[str, float] = field(init=False)
    label_counts: Counter[str] = field(default_factory=Counter, init=False)
    flagged: int = field(default=0, init=False)  # pairs that list an error class
    unsure: int = field(default=0, init=False)  # pairs that list no class (none is that likely)

    def __post_init__(self) -> None:
        self.rating_sums = dict.fromkeys(self.rating_keys, 0.0)

    def add(self, predictions: Sequence[Prediction]) -> None:
        for prediction in predictions:
            self.pairs += 1
            self.score_sum += prediction.score
            for key in self.rating_keys:
                self.rating_sums[key] += prediction.ratings[key]
            self.label_counts.update(prediction.labels)
            self.flagged += any(label != "NoContr" for label in prediction.labels)
            self.unsure += not prediction.labels

    @property
    def mean_score(self) -> float | None:
        """Mean P(NoContr): the system's score (None for no pairs)."""
        return self._mean(self.score_sum)

    def _mean(self, total: float) -> float | None:
        """Rounded as the records are: their means hold no more digits."""
        return round(total / self.pairs, ROUND_DIGITS) if self.pairs else None

    def to_dict(self, signature: str) -> dict:
        """pairs; mean_score = mean P(NoContr); mean_ratings (task checkpoints; {} for the
        base); label_counts = pairs that list each class, all 14 in taxonomy order; flagged;
        unsure; the run's signature. Means are rounded to ROUND_DIGITS, null for no pairs."""
        return {
            "pairs": self.pairs,
            "mean_score": self.mean_score,
            "mean_ratings": {key: self._mean(total) for key, total in self.rating_sums.items()},
            "label_counts": {code: self.label_counts[code] for code in CODES},
            "flagged": self.flagged,
            "unsure": self.unsure,
            "signature": signature,
        }
