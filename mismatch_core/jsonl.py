"""JSON Lines reading (.jsonl or .jsonl.gz, a file or a stream); every error is a DataError
naming the file and line."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from mismatch_core.errors import DataError

GZIP_MAGIC = b"\x1f\x8b"
BYTE_ORDER_MARK = "\ufeff"  # how some editors (Windows Notepad) start a UTF-8 file


def is_gzip(path: Path) -> bool:
    """Whether a file name says gzip (.gz, any case), for input and output alike."""
    return path.suffix.lower() == ".gz"


def jsonl_lines(path: Path, raw: BinaryIO | None = None) -> Iterator[bytes]:
    """The raw lines of a .jsonl or .jsonl.gz file (decoded one by one by the caller), read
    from ``raw`` (its bytes already in hand) or from the file; a file that is not valid gzip
    is a DataError naming it, not a traceback."""
    with raw or path.open("rb") as source:
        handle = gzip.GzipFile(fileobj=source, mode="rb") if is_gzip(path) else source
        try:
            yield from handle
        except (gzip.BadGzipFile, EOFError, zlib.error) as error:
            raise DataError(f"{path}: not a readable gzip file ({error})") from None


def hashed_jsonl(path: Path) -> tuple[str, Iterator[tuple[int, dict]]]:
    """The sha256 of a .jsonl(.gz) file's bytes and its (line number, object) pairs, from one
    read: the hash names what was parsed, even if the file changes meanwhile."""
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    data = path.read_bytes()
    lines = jsonl_lines(path, io.BytesIO(data))
    return hashlib.sha256(data).hexdigest(), iter_json_lines(lines, str(path))


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
            if line_number == 1 and raw.startswith(GZIP_MAGIC):
                raise DataError(f"{where}: gzip-compressed; name it .jsonl.gz") from None
            raise DataError(f"{where}: invalid UTF-8 ({error.reason})") from None
        if line_number == 1:
            line = line.removeprefix(BYTE_ORDER_MARK)
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            hint = "" if line.lstrip().startswith("{") else "; JSONL holds one JSON object a line"
            raise DataError(
                f"{where}: invalid JSON ({error.msg}, column {error.colno}){hint}"
            ) from None
        if not isinstance(value, dict):
            raise DataError(f"{where}: expected a JSON object, got {type(value).__name__}")
        yield line_number, value
