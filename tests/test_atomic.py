"""Atomic writes and output-path checks shared by every command that writes files."""

from __future__ import annotations

import errno
import io
import os
import stat
from pathlib import Path

import pytest

from mismatch_core.atomic import (
    atomic_directory,
    atomic_path,
    folder_problem,
    output_problem,
    same_path,
    write_text_atomic,
)
from mismatch_core.errors import DataError

NAMES = ("weights", "config")  # what the folders of these tests hold


@pytest.fixture
def umask_022():
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_written_files_get_the_usual_permissions(tmp_path: Path, umask_022) -> None:
    target = tmp_path / "new" / "report.md"
    write_text_atomic(target, "line\n")
    assert target.read_text() == "line\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644  # not mkstemp's 0600
    assert [p.name for p in target.parent.iterdir()] == ["report.md"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "plot.png"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(target) as temporary:
        assert temporary.suffix == ".png"  # writers that read the format from the name work
        temporary.write_text("half")
        raise RuntimeError("disk full")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["plot.png"]


def test_a_failed_write_removes_the_folders_it_created_and_only_those(tmp_path: Path) -> None:
    """A run that failed left the missing folders of its output path created and empty."""
    (tmp_path / "runs").mkdir()
    with pytest.raises(RuntimeError), atomic_path(tmp_path / "runs/a/b/scores.jsonl"):
        raise RuntimeError("interrupted")
    with pytest.raises(RuntimeError), atomic_directory(tmp_path / "runs/c/model", NAMES):
        raise RuntimeError("interrupted")
    assert [p.name for p in tmp_path.iterdir()] == ["runs"]
    assert list((tmp_path / "runs").iterdir()) == []
    (tmp_path / "runs/a").mkdir()
    with pytest.raises(RuntimeError), atomic_path(tmp_path / "runs/a/b/scores.jsonl"):
        (tmp_path / "runs/a/other.txt").write_text("another writer's")
        raise RuntimeError("interrupted")
    assert [p.name for p in (tmp_path / "runs/a").iterdir()] == ["other.txt"]


def test_a_name_near_the_length_limit_is_written(tmp_path: Path) -> None:
    """A file or folder name of 245 characters or more failed at the end of the work: its
    temporary name, 13 characters longer, passed the file system's limit of 255."""
    target = tmp_path / ("s" * 245 + ".jsonl")
    write_text_atomic(target, "line\n")
    assert target.read_text() == "line\n"
    folder = tmp_path / ("m" * 250)
    for _ in range(2):  # new, then replaced (the old folder is renamed aside)
        with atomic_directory(folder, NAMES) as staging:
            (staging / "config").write_text("{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([target.name, folder.name])


def test_a_linked_file_is_replaced_through_its_link(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    target = tmp_path / "runs" / "scores.jsonl"
    target.write_text("old")
    link = tmp_path / "latest.jsonl"
    link.symlink_to(target)
    write_text_atomic(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["scores.jsonl"]


def test_a_pipe_is_written_in_place_not_replaced(tmp_path: Path) -> None:
    pipe = tmp_path / "scores.pipe"
    os.mkfifo(pipe)
    reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)  # so the writer's open does not block
    try:
        write_text_atomic(pipe, "line\n")
        assert os.read(reader, 100) == b"line\n"
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(pipe.stat().st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["scores.pipe"]


def test_dev_stdout_is_written_in_place() -> None:
    """/dev/stdout led through its links to a pipe's name, and the write beside it failed."""
    import subprocess
    import sys

    script = "from mismatch_core.atomic import write_text_atomic; write_text_atomic('/dev/stdout', 'new\\n')"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, check=True)
    assert result.stdout == b"new\n"


def test_a_loop_of_links_is_a_problem_named_before_the_work(tmp_path: Path) -> None:
    (tmp_path / "a.json").symlink_to(tmp_path / "b.json")
    (tmp_path / "b.json").symlink_to(tmp_path / "a.json")
    problem = output_problem(tmp_path / "a.json")
    assert problem == f"cannot write {tmp_path / 'a.json'}: Too many levels of symbolic links"


def test_a_folder_is_replaced_whole_or_not_at_all(tmp_path: Path, umask_022) -> None:
    target = tmp_path / "detector"
    target.mkdir()
    (target / "weights").write_text("old")
    (target / "config").write_text("old")
    with pytest.raises(RuntimeError), atomic_directory(target, NAMES) as staging:
        (staging / "weights").write_text("new")
        raise RuntimeError("disk full")
    assert {p.name: p.read_text() for p in target.iterdir()} == {"weights": "old", "config": "old"}
    with atomic_directory(target, NAMES) as staging:
        (staging / "weights").write_text("new")
    assert {p.name: p.read_text() for p in target.iterdir()} == {"weights": "new"}
    assert stat.S_IMODE(target.stat().st_mode) == 0o755  # not mkdtemp's 0700
    assert [p.name for p in tmp_path.iterdir()] == ["detector"]


def test_a_swap_that_fails_halfway_puts_the_old_folder_back(tmp_path: Path, monkeypatch) -> None:
    """The old folder is renamed aside before the new one takes its name: when that second
    rename failed (or Ctrl-C came between), the folder was gone, kept only as a hidden
    .NAME.old-xxxx."""
    target = tmp_path / "detector"
    target.mkdir()
    (target / "weights").write_text("old")
    rename = Path.rename

    def staging_cannot_move(self: Path, to: Path) -> Path:
        if ".tmp-" in self.name:
            raise OSError("no space left on device")
        return rename(self, to)

    monkeypatch.setattr(Path, "rename", staging_cannot_move)
    with pytest.raises(OSError, match="no space"), atomic_directory(target, NAMES) as staging:
        (staging / "weights").write_text("new")
    assert [p.name for p in tmp_path.iterdir()] == ["detector"]
    assert (target / "weights").read_text() == "old"


def test_a_replaced_folder_keeps_its_permissions_and_a_new_one_follows_the_umask(
    tmp_path: Path,
) -> None:
    previous = os.umask(0o002)  # a group-shared setup
    try:
        with atomic_directory(tmp_path / "new", NAMES) as staging:
            (staging / "weights").write_text("new")
        assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o775
        shared = tmp_path / "shared"
        shared.mkdir()
        shared.chmod(0o2770)  # group-writable, setgid
        with atomic_directory(shared, NAMES) as staging:
            (staging / "weights").write_text("new")
        assert stat.S_IMODE(shared.stat().st_mode) == 0o2770
    finally:
        os.umask(previous)


def test_a_folder_that_took_other_files_meanwhile_is_not_replaced(tmp_path: Path) -> None:
    target = tmp_path / "detector"
    with pytest.raises(DataError, match="holds notes.txt, not only weights, config"):
        with atomic_directory(target, NAMES) as staging:
            (staging / "weights").write_text("new")
            target.mkdir()
            (target / "notes.txt").write_text("saved while the block ran")
    assert [p.name for p in target.iterdir()] == ["notes.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["detector"]  # no staging folder left


def test_output_problem_names_what_is_in_the_way(tmp_path: Path) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    assert output_problem(tmp_path / "deep" / "new.parquet") is None
    assert output_problem(tmp_path / "report", kind="directory") is None
    assert output_problem(tmp_path) == f"{tmp_path} is a directory, expected a file path"
    assert output_problem(a_file, kind="directory") == f"{a_file} exists and is not a directory"
    assert output_problem(a_file / "out.parquet") == (
        f"cannot create {a_file / 'out.parquet'}: {a_file} is a file, not a directory"
    )


def test_a_folder_replaced_whole_must_hold_only_its_files_and_be_no_link(tmp_path: Path) -> None:
    names = ("train.parquet", "val.parquet")
    assert folder_problem(tmp_path / "new", names) is None
    ours = tmp_path / "ours"
    ours.mkdir()
    (ours / "train.parquet").write_text("x")
    assert folder_problem(ours, names) is None
    (ours / "notes.txt").write_text("mine")
    assert "holds notes.txt, not only train.parquet, val.parquet" in folder_problem(ours, names)
    link = tmp_path / "link"
    link.symlink_to(ours, target_is_directory=True)
    assert folder_problem(link, names) == f"{link} is a symbolic link; give the folder it points to"


def test_the_working_directory_is_not_replaced_whole(tmp_path: Path, monkeypatch) -> None:
    """`--out .` passed the checks, then failed after the work (a staging folder needs a
    name); replacing it would have left the shell in a removed folder."""
    names = ("train.parquet", "val.parquet")
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path / "empty")
    for given in (".", "..", str(tmp_path)):
        assert folder_problem(Path(given), names) == (
            f"{given} is the working directory or holds it; give a new folder for the output"
        )
    assert folder_problem(Path("new"), names) is None
    with atomic_directory(Path("made/inner/.."), names):  # ".." has no name to stage by
        pass
    assert Path("made").is_dir() and not Path("made/inner").exists()


def test_same_path_compares_paths_as_their_commands_open_them(tmp_path: Path, monkeypatch) -> None:
    """Links followed and relative paths resolved, but ``~`` taken literally: predict opens
    '~/in.jsonl' as written, so it is not the home folder's file."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "in.jsonl").write_text("{}\n")
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "in.jsonl")
    assert same_path(Path("in.jsonl"), tmp_path / "in.jsonl")
    assert same_path(Path("link.jsonl"), Path("./in.jsonl"))
    assert not same_path(Path("~/in.jsonl"), tmp_path / "home" / "in.jsonl")
    assert same_path(Path("~/in.jsonl"), tmp_path / "~" / "in.jsonl")


def test_a_write_that_fails_names_the_file_it_was_for(tmp_path: Path) -> None:
    """A full disk raised "[Errno 28] No space left on device" naming no file (compare --out,
    the feature caches): the error now names the output, and nothing is left behind."""
    target = tmp_path / "new" / "out.json"
    with pytest.raises(OSError) as caught:
        with atomic_path(target) as temporary:
            temporary.write_text("half")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert (caught.value.errno, caught.value.filename) == (errno.ENOSPC, str(target))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "error", [OSError("Error writing bytes"), io.UnsupportedOperation("not writable")]
)
def test_a_failure_without_errno_names_the_output_and_keeps_its_type(tmp_path, error) -> None:
    """pyarrow's write errors carry no errno: "[Errno None] None: 'out.parquet'" said nothing."""
    target, message = tmp_path / "out.parquet", str(error)
    with pytest.raises(type(error)) as caught:
        with atomic_path(target):
            raise error
    assert str(caught.value) == f"{target}: {message}"


def test_a_replaced_file_keeps_its_permissions(tmp_path: Path) -> None:
    target = tmp_path / "scores.json"
    target.write_text("old")
    target.chmod(0o600)
    write_text_atomic(target, "new")
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_replaced_file_gets_no_set_id_bits(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_text("old")
    target.chmod(0o6755)
    write_text_atomic(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o755


def test_permissions_that_cannot_be_set_do_not_lose_the_output(tmp_path, monkeypatch) -> None:
    """A file system without modes (vfat, some network mounts) refuses chmod: the output is
    still written, with the new file's own permissions."""
    target = tmp_path / "scores.json"
    target.write_text("old")

    def refused(*args, **kwargs):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "chmod", refused)
    write_text_atomic(target, "new")
    assert target.read_text() == "new"
    assert [path.name for path in tmp_path.iterdir()] == ["scores.json"]
