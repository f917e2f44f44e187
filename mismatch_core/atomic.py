"""Write files through a temporary file beside them and one rename, so a failed or interrupted
write never leaves a half-written file where the old one was; write a folder of files the same
way; and check an output path before a long run, so it does not fail at its last step."""

from __future__ import annotations

import os
import shutil
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from mismatch_core.errors import DataError

# the longest file name, in bytes, that common file systems take (NAME_MAX on Linux)
NAME_MAX = 255


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` with the same suffix (writers such as ``savefig`` read
    the format from it); renamed to ``path`` when the block succeeds, deleted when it fails.
    Created by the writer, so it gets the usual permissions (umask), not mkstemp's 0600.
    Where ``write_target`` says so (a device or a pipe, also behind a link: /dev/null, a
    FIFO, /dev/stdout on a pipe), ``path`` itself."""
    path, in_place = write_target(path)
    if in_place:
        yield path
        return
    made = _missing_folders(path.parent)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = _hidden_beside(path, path.stem, f".{os.getpid()}.tmp{path.suffix}")
    try:
        yield temporary
        _keep_permissions(path, temporary)
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        _remove_if_empty(made)
        if error.filename is None:  # a write that names no file (a full disk; pyarrow's)
            _name_output(error, path)
        raise
    except BaseException:
        temporary.unlink(missing_ok=True)
        _remove_if_empty(made)
        raise


def _keep_permissions(path: Path, replacement: Path, bits: int = 0o777) -> None:
    """A replaced file's or folder's permission ``bits`` (a private 0600 file's too) on its
    replacement; where they cannot be set (a file system without them, a file removed
    meanwhile), the new one keeps the umask's, rather than the output being lost. A file's
    set-id bits are not copied (``bits``' default)."""
    with suppress(OSError):
        os.chmod(replacement, stat.S_IMODE(path.stat().st_mode) & bits)


def _name_output(error: OSError, path: Path) -> None:
    """``error``, of its own type, made to name the output ``path`` that it failed."""
    if error.errno is not None:
        error.filename = str(path)
    else:  # str() of an OSError without errno shows its args alone
        error.args = (f"{path}: {error}",)


def _hidden_beside(path: Path, stem: str, tail: str) -> Path:
    """``.STEM`` + ``tail`` beside ``path``, for a temporary or a replaced copy; the stem is cut
    as far as needed to keep the name within NAME_MAX: an output name of 245 characters
    failed at the run's last step, when its temporary name, 13 characters longer, was
    created."""
    while len(os.fsencode(f".{stem}{tail}")) > NAME_MAX and stem:
        stem = stem[:-1]
    return path.with_name(f".{stem}{tail}")


def _missing_folders(folder: Path) -> list[Path]:
    """The folders of ``folder``'s path that do not exist yet, the deepest first."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


def _remove_if_empty(folders: list[Path]) -> None:
    """Remove the folders a failed write created, deepest first, each only while it is empty
    (another writer may have put a file there meanwhile): a failed run left them behind."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def write_target(path: Path) -> tuple[Path, bool]:
    """The file that writing ``path`` replaces, and whether it is written in place instead.
    What ``path`` leads to, through any links, decides: a device or a pipe (/dev/null, a FIFO,
    /dev/stdout on a pipe) is written in place, since a rename would put a plain file there or
    fail; anything else is replaced, and a symbolic link stays a link, the file it points to
    replaced. OSError (ELOOP) for a loop of links."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode  # follows links, and names a loop on every Python version
    except (FileNotFoundError, NotADirectoryError):  # a new file (or a link to one)
        mode = None
    if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return path, True
    return (path.resolve() if path.is_symlink() else path), False


@contextmanager
def atomic_directory(target: Path, keep_only: tuple[str, ...]) -> Iterator[Path]:
    """A new staging folder beside ``target``; when the block succeeds it takes ``target``'s
    place (the old folder renamed aside, then removed), so its files change together; when the
    block fails it is removed and ``target`` is left as it was. ``keep_only``: the names the
    folder holds; one holding anything else is not replaced (``folder_problem``, checked
    right before the swap: a DataError), so no file of another kind is lost; commands check
    it before long work too. The folder keeps the replaced folder's mode bits, or gets
    mkdir's (the umask) when new."""
    target = Path(os.path.abspath(target))  # "x/.." has no name to put the staging folder by
    made = _missing_folders(target.parent)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = _hidden_beside(target, target.name, f".tmp-{uuid.uuid4().hex[:8]}")
    staging.mkdir()
    try:
        yield staging
        problem = folder_problem(target, keep_only)  # files may have come in meanwhile
        if problem:
            raise DataError(problem)
        if target.exists():
            _keep_permissions(target, staging, bits=0o7777)  # a folder's set-group-id stays
            old = _hidden_beside(target, target.name, f".old-{uuid.uuid4().hex[:8]}")
            target.rename(old)
            try:
                staging.rename(target)
            except BaseException:  # the old folder back where it was, not left hidden
                old.rename(target)
                raise
            shutil.rmtree(old)
        else:
            staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        _remove_if_empty(made)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """Write UTF-8 text to ``path`` atomically (no newline translation)."""
    with atomic_path(path) as temporary:
        with temporary.open("w", encoding="utf-8", newline="") as handle:
            handle.write(text)


def folder_problem(path: Path, names: tuple[str, ...]) -> str | None:
    """Why folder ``path`` cannot be replaced as a whole by one holding ``names`` (as
    ``atomic_directory`` replaces it), or None: it must be absent or hold nothing else, so
    that no file of another kind is lost; checked before the work starts."""
    path = Path(path)
    problem = output_problem(path, "directory")
    if problem or not path.exists():
        return problem
    if _holds_working_directory(path):  # "." failed after the work; replacing it would
        # leave the shell in a removed folder
        return f"{path} is the working directory or holds it; give a new folder for the output"
    if path.is_symlink():  # replacing would swap the link for a local folder
        return f"{path} is a symbolic link; give the folder it points to"
    if not os.access(path.parent, os.W_OK | os.X_OK):  # the staging folder is made there
        return f"cannot replace {path}: no write permission in {path.parent}"
    others = sorted(entry.name for entry in path.iterdir() if entry.name not in names)
    if others:
        return (
            f"{path} holds {', '.join(others[:3])}{' ...' if len(others) > 3 else ''}, not "
            f"only {', '.join(names)}; refusing to replace it (give a new or empty folder)"
        )
    return None


def _holds_working_directory(path: Path) -> bool:
    """Whether ``path`` (``~`` taken literally, as the writers take it) is the working
    directory or a folder above it; a removed working directory is in none."""
    try:
        here, folder = Path.cwd().resolve(), Path(path).resolve()
    except (OSError, RuntimeError):
        return False
    return here == folder or folder in here.parents


def same_path(first: Path, second: Path) -> bool:
    """Whether two paths name one file or folder (links followed), so that writing the one
    would replace the other; a path that cannot be resolved (a loop of links) names no other."""
    try:
        return Path(first).resolve() == Path(second).resolve()
    except (OSError, RuntimeError):
        return False


def is_within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or lies inside it (links followed, ``~`` expanded), so
    that replacing the folder whole would take it along; unresolvable paths: False."""
    try:
        inner, outer = (Path(p).expanduser().resolve() for p in (path, folder))
    except (OSError, RuntimeError):
        return False
    return inner == outer or outer in inner.parents


def output_problem(path: Path, kind: str = "file") -> str | None:
    """Why ``path`` cannot be written as a ``kind`` ("file" or "directory"), or None.

    Checked before the work starts: an existing entry of the other kind, a parent that is a
    file, or a folder (the nearest existing one) this process may not write to; for a file
    written in place (``write_target``), the file itself.
    """
    path = Path(path)
    if kind == "file":
        try:
            target, in_place = write_target(path)
        except OSError as error:
            return f"cannot write {path}: {error.strerror}"
        if in_place:
            return None if os.access(target, os.W_OK) else f"cannot write {path}: permission denied"
        path = target
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
