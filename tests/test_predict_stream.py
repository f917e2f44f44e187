"""`mismatch predict` streams: chunks in, chunks out, the same bytes as scoring all at once."""

from __future__ import annotations

import csv
import gzip
import io
import json
import multiprocessing
import os
import platform
import signal
import threading
from pathlib import Path

import numpy as np
import pytest
from test_predict import GENS, REFS, make_checkpoint, write_jsonl, write_lines

import evaluator.cli.predict as predict_cli_module
import evaluator.evaluator as evaluator_module
import evaluator.malloc as malloc_module
from evaluator.cli import main
from evaluator.evaluator import Evaluator
from evaluator.predict_io import AlignedInput, JsonlInput, Pairs, columns, flat_row
from mismatch_core.errors import DataError

PAIRS = 11  # over several stream chunks of 3 and model chunks of 2


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    """Metric features only: scores do not depend on which pairs share a batch."""
    return make_checkpoint(tmp_path_factory.mktemp("ckpt") / "base")


@pytest.fixture
def small_chunks(monkeypatch) -> None:
    monkeypatch.setattr(predict_cli_module, "STREAM_PAIRS", 3)
    monkeypatch.setattr(evaluator_module, "CHUNK_PAIRS", 2)


def pairs() -> tuple[list[str], list[str]]:
    refs = [REFS[i % len(REFS)] + f" {i}" for i in range(PAIRS)]
    gens = [GENS[i % len(GENS)] for i in range(PAIRS)]
    return refs, gens


def predict_aligned_files(checkpoint: Path, tmp_path: Path, out: Path) -> int:
    """`mismatch predict` on ``pairs()`` as --refs and --gens files, into ``out``."""
    refs, gens = pairs()
    return main([
        "predict", "--quiet", "--checkpoint", str(checkpoint), "--output", str(out),
        "--refs", str(write_lines(tmp_path / "refs.txt", refs)),
        "--gens", str(write_lines(tmp_path / "gens.txt", gens)),
    ])  # fmt: skip


def one_pass(checkpoint: Path, output_format: str) -> str:
    """What `mismatch predict` wrote before it streamed: every prediction, then formatted."""
    refs, gens = pairs()
    ids = [str(i) for i in range(1, PAIRS + 1)]
    predictions = Evaluator.from_pretrained(checkpoint).predict(refs, gens, ids=ids)
    if output_format == "jsonl":
        return "".join(json.dumps(p.to_dict(), ensure_ascii=False) + "\n" for p in predictions)
    buffer = io.StringIO()
    writer = csv.writer(
        buffer, delimiter="," if output_format == "csv" else "\t", lineterminator="\n"
    )
    writer.writerow(columns([]))
    writer.writerows(flat_row(p, []) for p in predictions)
    return buffer.getvalue()


@pytest.mark.parametrize("output_format", ["jsonl", "csv", "tsv"])
def test_streamed_output_is_byte_identical_to_one_pass(
    output_format: str, checkpoint: Path, tmp_path: Path, small_chunks, monkeypatch
) -> None:
    seen: list[int] = []
    score = Evaluator._score
    monkeypatch.setattr(
        Evaluator,
        "_score",
        lambda self, ids, *rest: seen.append(len(ids)) or score(self, ids, *rest),
    )
    out = tmp_path / f"out.{output_format}"
    assert predict_aligned_files(checkpoint, tmp_path, out) == 0
    assert seen == [3, 3, 3, 2]  # never more than a stream chunk in memory
    assert out.read_bytes() == one_pass(checkpoint, output_format).encode("utf-8")


def test_jsonl_input_streams_the_same(checkpoint: Path, tmp_path: Path, small_chunks) -> None:
    refs, gens = pairs()
    rows = [{"ref": ref, "gen": gen} for ref, gen in zip(refs, gens, strict=True)]
    out = tmp_path / "out.jsonl"
    status = main([
        "predict", "--quiet", "--checkpoint", str(checkpoint), "--output", str(out),
        "--input", str(write_jsonl(tmp_path / "in.jsonl", rows)),
    ])  # fmt: skip
    assert status == 0
    assert out.read_text(encoding="utf-8") == one_pass(checkpoint, "jsonl")


def test_one_pool_of_workers_serves_the_whole_stream(
    checkpoint: Path, tmp_path: Path, small_chunks, counted_pools
) -> None:
    """Workers warm their WordNet and word caches as they read: started anew at every chunk,
    5,600 real pairs took 98-113 s; one pool for the stream, 80-90 s."""
    out = tmp_path / "out.jsonl"
    assert predict_aligned_files(checkpoint, tmp_path, out) == 0
    assert counted_pools == [2] and multiprocessing.active_children() == []
    assert out.read_text(encoding="utf-8") == one_pass(checkpoint, "jsonl")
    counted_pools.clear()  # predict: one pool for its model chunks, too
    refs, gens = pairs()
    assert len(Evaluator.from_pretrained(checkpoint).predict(refs, gens, progress=False)) == PAIRS
    assert counted_pools == [2] and multiprocessing.active_children() == []


def test_a_stream_resumed_on_another_thread_keeps_its_workers_to_itself(
    checkpoint: Path, small_chunks, counted_pools
) -> None:
    """A server may resume a stream on another thread, or leave it open: its workers serve it
    only while it scores a chunk. Before, the first thread kept a stopped pool (every later
    call there failed: "Pool not running"), or the open stream's pool served unrelated calls."""
    from evaluator.features import compute

    refs, gens = pairs()
    evaluator = Evaluator.from_pretrained(checkpoint)
    chunks = [  # two pairs each: the CPU metrics of a chunk run in workers
        Pairs([str(i), str(i + 1)], refs[i : i + 2], gens[i : i + 2], [None, None])
        for i in range(0, 10, 2)
    ]
    stream = evaluator.predict_stream(iter(chunks), total=10, progress=False)
    first = next(stream)
    assert len(counted_pools) == 1
    expected = compute.run_cpu_metrics(["bleu"], refs * 2, gens * 2)
    np.testing.assert_array_equal(compute.cpu_scores(["bleu"], refs * 2, gens * 2), expected)
    assert len(counted_pools) == 2  # its own workers, not the open stream's
    rest: list = []
    worker = threading.Thread(target=lambda: rest.extend(stream))  # finished elsewhere
    worker.start()
    worker.join()
    assert len(first) + sum(map(len, rest)) == 10
    np.testing.assert_array_equal(compute.cpu_scores(["bleu"], refs * 2, gens * 2), expected)
    assert multiprocessing.active_children() == []


def test_progress_bar_counts_to_the_known_total(
    checkpoint: Path, tmp_path: Path, small_chunks, capsys
) -> None:
    refs, gens = pairs()
    status = main([
        "predict", "--checkpoint", str(checkpoint), "--output", str(tmp_path / "out.jsonl"),
        "--refs", str(write_lines(tmp_path / "refs.txt", refs)),
        "--gens", str(write_lines(tmp_path / "gens.txt", gens)),
    ])  # fmt: skip
    assert status == 0
    error = capsys.readouterr().err
    assert f"{PAIRS}/{PAIRS}" in error and f"{PAIRS} pair(s) scored" in error


def test_a_bad_line_met_while_streaming_names_it_and_leaves_no_file(
    checkpoint: Path, tmp_path: Path, small_chunks, monkeypatch, capsys
) -> None:
    """The first pass finds bad lines before anything is written; were one to get past it
    (a file changed in between), the chunks already written are thrown away all the same."""
    refs, gens = pairs()
    rows = [{"ref": ref, "gen": gen} for ref, gen in zip(refs, gens, strict=True)]
    rows[8] = {"ref": refs[8]}  # line 9: after two stream chunks were written
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    monkeypatch.setattr(JsonlInput, "count", lambda self, **_: PAIRS)  # skip the checking pass
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    status = main(
        ["predict", "--quiet", "--checkpoint", str(checkpoint), "--input", str(source),
         "--output", str(out_dir / "scores.jsonl")]
    )  # fmt: skip
    assert status == 2
    assert f"{source}:9: missing key 'gen'" in capsys.readouterr().err
    assert list(out_dir.iterdir()) == []  # no partial output, no temp file


def test_stdin_is_read_twice_from_a_spool(checkpoint: Path, monkeypatch, capsys) -> None:
    refs, gens = pairs()
    lines = "".join(
        json.dumps({"ref": r, "gen": g}) + "\n" for r, g in zip(refs, gens, strict=True)
    )
    stdin = io.TextIOWrapper(io.BytesIO(lines.encode("utf-8")), encoding="utf-8")
    monkeypatch.setattr("sys.stdin", stdin)
    assert main(["predict", "--quiet", "--checkpoint", str(checkpoint), "--input", "-"]) == 0
    assert capsys.readouterr().out == one_pass(checkpoint, "jsonl")


def fifo(path: Path, text: str | bytes) -> Path:
    """A named pipe at ``path`` that gives ``text`` once, as `<(cmd)` does (a daemon thread
    writes it, so a test that fails before reading it does not hang)."""
    os.mkfifo(path)
    data = text.encode("utf-8") if isinstance(text, str) else text

    def write() -> None:
        with path.open("wb") as pipe:
            pipe.write(data)

    threading.Thread(target=write, daemon=True).start()
    return path


@pytest.fixture
def fails_rather_than_hangs():
    """A pipe opened again after its writer has gone waits for another writer: such a read
    fails the test after a minute instead of hanging the run."""

    def expire(signum, frame) -> None:
        pytest.fail("a pipe was opened a second time")  # not an OSError the readers catch

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def test_pipes_are_read_twice_from_a_copy(
    checkpoint: Path, tmp_path: Path, capsys, fails_rather_than_hangs
) -> None:
    """`--refs <(cmd) --gens <(cmd)`: the pairs were counted from the pipes, which then gave
    nothing to score: an empty output with status 0 (one pipe: "the files changed")."""
    refs, gens = pairs()
    out = tmp_path / "out.jsonl"
    argv = ["predict", "--quiet", "--checkpoint", str(checkpoint), "--output", str(out)]
    refs_pipe = fifo(tmp_path / "refs", "".join(f"{line}\n" for line in refs))
    gens_pipe = fifo(tmp_path / "gens", "".join(f"{line}\n" for line in gens))
    assert main([*argv, "--refs", str(refs_pipe), "--gens", str(gens_pipe)]) == 0
    assert out.read_text(encoding="utf-8") == one_pass(checkpoint, "jsonl")
    lines = "".join(
        json.dumps({"ref": r, "gen": g}) + "\n" for r, g in zip(refs, gens, strict=True)
    )
    out.unlink()
    assert main([*argv, "--input", str(fifo(tmp_path / "pairs", lines))]) == 0
    assert out.read_text(encoding="utf-8") == one_pass(checkpoint, "jsonl")
    out.unlink()
    status = main([*argv, "--input", str(fifo(tmp_path / "more", lines)), "--devices", "2"])
    assert status == 2 and not out.exists()
    assert "more gives its input once (a pipe or a terminal); --devices above 1" in (
        capsys.readouterr().err
    )


def test_gzip_through_a_pipe_is_read_by_its_name_or_named_for_zcat(
    tmp_path: Path, fails_rather_than_hangs
) -> None:
    """A named pipe ending .jsonl.gz is gunzipped as a file of that name is; `<(cat x.gz)`
    cannot be renamed, so the remedy is zcat (it said "name it .jsonl.gz")."""
    lines = json.dumps({"ref": "A ref.", "gen": "A gen."}).encode() + b"\n"
    named = JsonlInput.from_file(fifo(tmp_path / "pairs.jsonl.gz", gzip.compress(lines)))
    assert [row[1:3] for row in named.rows()] == [("A ref.", "A gen.")]
    unnamed = JsonlInput.from_file(fifo(tmp_path / "63", gzip.compress(lines)))
    with pytest.raises(DataError, match="63:1: gzip-compressed; pipe it through zcat"):
        unnamed.count()
    write_lines(tmp_path / "gens.txt", ["a gen"])
    refs = fifo(tmp_path / "62", gzip.compress(b"a ref\n"))
    text = AlignedInput([refs], tmp_path / "gens.txt", None)
    with pytest.raises(DataError, match="62:1: gzip-compressed; pipe it through zcat"):
        text.count()


def test_a_terminal_is_read_once_and_other_devices_as_files(
    tmp_path: Path, fails_rather_than_hangs
) -> None:
    """/dev/stdin typed into is read once (the scoring pass asked for the lines again);
    /dev/null is an empty input (it was "no such file")."""
    import pty

    typed, terminal = pty.openpty()
    os.write(typed, b"a ref\n\x04")  # a line, then Ctrl-D
    write_lines(tmp_path / "gens.txt", ["a gen"])
    source = AlignedInput([Path(os.ttyname(terminal))], tmp_path / "gens.txt", None)
    assert source.count() == 1 and [row[1] for row in source.rows()] == ["a ref"]
    os.write(typed, json.dumps({"ref": "a", "gen": "b"}).encode() + b"\n\x04")
    with open(terminal, "rb", closefd=False) as stdin:  # --input - typed: one Ctrl-D ends it
        assert JsonlInput.from_stream(stdin).count() == 1
    os.close(typed)
    os.close(terminal)
    assert JsonlInput.from_file(Path(os.devnull)).count() == 0
    with pytest.raises(DataError, match="/dev/zero is a device, not a file"):
        JsonlInput.from_file(Path("/dev/zero"))  # an endless line otherwise


def test_readers_of_one_pipe_share_its_copy(tmp_path: Path, fails_rather_than_hangs) -> None:
    """`mismatch compare --refs <(cmd) --gens A B` reads the references once per system."""
    refs = fifo(tmp_path / "refs", "a ref\nanother ref\n")
    write_lines(tmp_path / "a.txt", ["gen a", "gen b"])
    write_lines(tmp_path / "b.txt", ["gen c", "gen d"])
    copies: dict = {}
    sources = [AlignedInput([refs], tmp_path / f, None, copies) for f in ("a.txt", "b.txt")]
    assert [source.count() for source in sources] == [2, 2]
    assert [row[1] for row in sources[1].rows()] == ["a ref", "another ref"]


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")
def test_predict_fixes_the_mmap_threshold_before_scoring(
    checkpoint: Path, tmp_path: Path, monkeypatch
) -> None:
    """A fixed threshold keeps the peak memory of long inputs flat (docs/bench.md)."""
    calls = []
    fix = malloc_module.fix_mmap_threshold
    monkeypatch.setattr(malloc_module, "fix_mmap_threshold", lambda: calls.append(fix()))
    refs, gens = pairs()
    write_lines(tmp_path / "refs.txt", refs)
    write_lines(tmp_path / "gens.txt", gens)
    out = tmp_path / "out.jsonl"
    argv = ["predict", "--quiet", "--checkpoint", str(checkpoint), "--output", str(out)]
    argv += ["--refs", str(tmp_path / "refs.txt"), "--gens", str(tmp_path / "gens.txt")]
    assert main(argv) == 0
    assert calls == [True]  # called once, and glibc took the setting
    assert len(out.read_text(encoding="utf-8").splitlines()) == PAIRS


def test_several_devices_refuse_stdin(checkpoint: Path, capsys) -> None:
    status = main(["predict", "--quiet", "--checkpoint", str(checkpoint), "--devices", "2"])
    assert status == 2
    assert "--devices above 1 reads its input from files" in capsys.readouterr().err


def test_several_devices_take_the_accelerator_not_a_device(
    checkpoint: Path, tmp_path: Path, capsys
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [{"ref": REFS[0], "gen": GENS[0]}])
    argv = ["predict", "--quiet", "--checkpoint", str(checkpoint), "--input", str(source)]
    for device in ("cuda:1", "cpu"):  # an explicit --device, whichever, is refused
        assert main([*argv, "--devices", "2", "--device", device]) == 2
        assert f"--device {device} is for one process; with --devices 2 choose --accelerator" in (
            capsys.readouterr().err
        )


def test_several_gpus_without_a_gpu_are_a_clear_error(
    checkpoint: Path, tmp_path: Path, capsys
) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    source = write_jsonl(tmp_path / "in.jsonl", [{"ref": REFS[0], "gen": GENS[0]}])
    status = main(
        ["predict", "--quiet", "--checkpoint", str(checkpoint), "--input", str(source),
         "--devices", "2", "--accelerator", "gpu"]
    )  # fmt: skip
    assert status == 2
    assert "--accelerator gpu --devices 2" in capsys.readouterr().err
