"""Write files through a temporary file beside them and one rename, so a failed or interrupted
write never leaves a half-written file where the old one was; and check an output path before
a long run, so it does not fail at its last step."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` with the same suffix (writers such as ``savefig`` read
    the format from it); renamed to ``path`` when the block succeeds, deleted when it fails.
    Created by the writer, so it gets the usual permissions (umask), not mkstemp's 0600."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.stem}.{os.getpid()}.tmp{path.suffix}")
    try:
        yield temporary
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def write_text_atomic(path: Path, text: str) -> None:
    """Write UTF-8 text to ``path`` atomically (no newline translation)."""
    with atomic_path(path) as temporary:
        with temporary.open("w", encoding="utf-8", newline="") as handle:
            handle.write(text)


def output_problem(path: Path, kind: str = "file") -> str | None:
    """Why ``path`` cannot be written as a ``kind`` ("file" or "directory"), or None.

    Checked before the work starts: an existing entry of the other kind, a parent that is a
    file, or a folder (the nearest existing one) this process may not write to.
    """
    path = Path(path)
    if kind == "file" and path.is_dir():
        return f"{path} is a directory, expected a file path"
    if kind == "directory" and path.exists() and not path.is_dir():
        return f"{path} exists and is not a directory"
    folder = path if kind == "directory" and path.is_dir() else path.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        return f"cannot create {path}: {folder} is a file, not a directory"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot write {path}: no write permission in {folder}"
    return None
