"""JSON Lines reading (.jsonl or .jsonl.gz, a file or a stream) and the raw lines of any input
file (gunzipped when named .gz); every error is a DataError naming the file and line. Also the
strict JSON text of the reports the commands write."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from mismatch_core.errors import DataError

GZIP_MAGIC = b"\x1f\x8b"
BYTE_ORDER_MARK = "\ufeff"  # how some editors (Windows Notepad) start a UTF-8 file
# byte order marks (little- and big-endian) of the wider encodings; UTF-32's first, since
# its little-endian mark starts with UTF-16's
WIDE_MARKS = {
    "UTF-32": (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"),
    "UTF-16": (b"\xff\xfe", b"\xfe\xff"),
}
STDIN_NAME = "<stdin>"  # the name errors give standard input


def report_json(value: object, indent: int = 2) -> str:
    """``value`` as JSON text with a final newline, a NaN or infinite float (a figure that is
    not defined, such as a share of no pairs) written as null: Python's json writes a bare
    NaN, which strict parsers (JavaScript's, jq) refuse."""
    return json.dumps(_defined(value), indent=indent, allow_nan=False) + "\n"


def _defined(value: object) -> object:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _defined(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_defined(item) for item in value]
    return value


def is_gzip(path: Path) -> bool:
    """Whether a file name says gzip (.gz, any case), for input and output alike."""
    return path.suffix.lower() == ".gz"


def check_jsonl_file(path: Path) -> None:
    """DataError unless ``path`` is a file: a folder, a pipe (``<(cmd)``, /dev/stdin on a
    pipe), a device or a missing path, named."""
    if path.is_dir():
        raise DataError(f"{path} is a directory; give a .jsonl or .jsonl.gz file")
    if path.is_fifo() or path.is_socket():
        kind = "a pipe" if path.is_fifo() else "a socket"
        raise DataError(f"{path} is {kind}, not a file; write it to a .jsonl file first")
    if path.exists() and not path.is_file():
        raise DataError(f"{path} is a device, not a file; give a .jsonl or .jsonl.gz file")
    if not path.is_file():
        raise DataError(f"{path}: no such file")


def is_json_name(value: object) -> bool:
    """Whether a JSON value can name a record (its id or group): a string or an integer, not
    a bool (a list or object would become its Python form)."""
    return isinstance(value, str | int) and not isinstance(value, bool)


class RepeatedKeyError(ValueError):
    """A record gives one of its keys twice: json.loads keeps the last value without a word."""


def read_json(text: str) -> object:
    """``json.loads``, any failure a ValueError saying why: json.JSONDecodeError, a key the
    outer object gives twice (RepeatedKeyError; nested objects, metadata that other tools
    write, are taken as json.loads takes them), an integer of 4,300 digits or more, or nesting
    deeper than Python's stack (a RecursionError otherwise)."""
    closed: list[list[tuple[str, object]]] = []  # the pairs of the object closed last

    def keep_pairs(pairs: list[tuple[str, object]]) -> dict:
        closed[:] = [pairs]
        return dict(pairs)

    try:
        value = json.loads(text, object_pairs_hook=keep_pairs)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    if isinstance(value, dict):
        keys = [key for key, _ in closed[0]]  # the outer object is the one closed last
        if len(keys) > len(value):
            repeated = next(key for index, key in enumerate(keys) if key in keys[:index])
            raise RepeatedKeyError(f"key {repeated!r} is given twice in one object")
    return value


def raw_lines(path: Path, raw: BinaryIO | None = None) -> Iterator[bytes]:
    """The raw lines of an input file, gunzipped when its name ends .gz (decoded one by one by
    the caller), read from ``raw`` (the file opened, or its bytes already in hand) or from the
    file; a file that is not valid gzip is a DataError naming it, not a traceback."""
    with raw or path.open("rb") as source:
        handle = gzip.GzipFile(fileobj=source, mode="rb") if is_gzip(path) else source
        try:
            yield from handle
        except (gzip.BadGzipFile, EOFError, zlib.error) as error:
            raise DataError(f"{path}: not a readable gzip file ({error})") from None


def hashed_jsonl(path: Path) -> tuple[str, Iterator[tuple[int, dict]]]:
    """The sha256 of a .jsonl(.gz) file's bytes and its (line number, object) pairs, from one
    read: the hash names what was parsed, even if the file changes meanwhile."""
    check_jsonl_file(path)
    data = path.read_bytes()
    lines = raw_lines(path, io.BytesIO(data))
    return hashlib.sha256(data).hexdigest(), iter_json_lines(lines, str(path))


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) for every non-blank line; invalid UTF-8 or JSON names the line."""
    check_jsonl_file(path)
    yield from iter_json_lines(raw_lines(path), str(path))


def decoded_lines(lines: Iterable[bytes], name: str, compressed: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of every raw line of an input (JSONL or plain text), decoded as
    UTF-8, a byte order mark starting the first line dropped; DataError names ``name``, the
    line of invalid UTF-8 and, for a first line in gzip, what to do (``compressed``)."""
    for number, raw in enumerate(lines, 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            if number == 1 and raw.startswith(GZIP_MAGIC):
                raise DataError(f"{name}:1: gzip-compressed; {compressed}") from None
            marked = next((n for n, marks in WIDE_MARKS.items() if raw.startswith(marks)), None)
            if number == 1 and marked:  # UTF-16: what Windows PowerShell's > writes
                raise DataError(f"{name}:1: {marked} text; save it as UTF-8") from None
            raise DataError(f"{name}:{number}: invalid UTF-8 ({error.reason})") from None
        yield number, line.removeprefix(BYTE_ORDER_MARK) if number == 1 else line


def iter_json_lines(
    lines: Iterable[bytes], name: str, piped: bool = False
) -> Iterator[tuple[int, dict]]:
    """(line number, object) for every non-blank line of JSONL bytes (a file, stdin, a pipe:
    ``piped``, which cannot be renamed .gz); DataError names ``name``, the line and what is
    wrong with it."""
    piped = piped or name == STDIN_NAME
    compressed = "pipe it through zcat" if piped else "name it .jsonl.gz"
    for line_number, line in decoded_lines(lines, name, compressed):
        where = f"{name}:{line_number}"
        if not line.strip():
            continue
        try:
            value = read_json(line)
        except json.JSONDecodeError as error:
            hint = "" if line.lstrip().startswith("{") else "; JSONL holds one JSON object a line"
            table = name.lower().removesuffix(".gz").endswith((".csv", ".tsv"))
            if hint and ("\t" in line or table):  # a CSV/TSV file given as JSONL
                hint += ", not a table row: write each row as one object of its columns"
            column = min(error.pos, len(line.rstrip("\r\n"))) + 1  # the line ending is no column
            raise DataError(f"{where}: invalid JSON ({error.msg}, column {column}){hint}") from None
        except RepeatedKeyError as error:
            raise DataError(f"{where}: {error}; which value is meant?") from None
        except ValueError as error:  # an integer of 4,300+ digits, deep nesting
            raise DataError(f"{where}: unreadable JSON ({error})") from None
        if not isinstance(value, dict):
            raise DataError(f"{where}: expected a JSON object, got {type(value).__name__}")
        surrogate_escape = "\\ud" in line or "\\uD" in line  # \\u00e9 and others are text
        if surrogate_escape and (key := lone_surrogate_key(value)) is not None:
            raise DataError(
                f"{where}: key {key!r} holds a lone surrogate escape (\\ud800 to \\udfff "
                "without its pair), which is not text"
            )
        yield line_number, value


def lone_surrogate_key(record: dict) -> str | None:
    """Which top-level value of ``record`` (its key, or ``ref[1]`` for a list's item) first holds
    a lone UTF-16 surrogate, JSON's "\\ud800" without its pair: Python reads it, but no UTF-8
    file or tokenizer takes it. The texts the readers score (ref, gen, src, id) sit at the top;
    nested metadata (often cut by other tools mid-pair) is not read. None when there is none."""
    for key, value in record.items():
        texts = value if isinstance(value, list) else [value]
        for index, text in enumerate(texts):
            if isinstance(text, str) and not _encodable(text):
                return f"{key}[{index}]" if isinstance(value, list) else key
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
