"""What the scoring commands (predict, compare, demo) share: the --refs, --checkpoint, --task,
--batch-size and --threshold options, the checks of --batch-size, --threshold and of a JSON file
they write, the checkpoint named by --checkpoint and --task, the evaluator loaded from it with
--device and --threshold, and how truncation is reported."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Iterable
from pathlib import Path

from evaluator.cli import CommandError
from evaluator.tasks import TASKS
from mismatch_core.atomic import output_problem, same_path
from mismatch_core.checkpoint_files import (
    CHECKPOINT_FILES,
    checkpoint_directory,
    read_config,
    resolve_checkpoint,
)
from mismatch_core.errors import CheckpointError
from mismatch_core.jsonl import is_gzip
from mismatch_core.resources import DEFAULT_CHECKPOINT

# the Evaluator's default, written out so that --help does not load torch
DEFAULT_THRESHOLD = 0.5


def add_refs_argument(group: argparse._ActionsContainer) -> None:
    group.add_argument(
        "--refs",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="reference file(s), one text per line; several files = several references per pair",
    )


def add_checkpoint_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--checkpoint",
        metavar="PATH_OR_HUB_ID[@REVISION]",
        help=f"checkpoint directory or Hub repo id (default: {DEFAULT_CHECKPOINT}, "
        "or checkpoints/mismatch-TASK with --task)",
    )


def add_task_argument(parser: argparse.ArgumentParser, use: str = "") -> None:
    """--task; ``use`` says what the command does with the task checkpoint's ratings."""
    parser.add_argument(
        "--task",
        help=f"use the checkpoint fine-tuned for this task{use}: one of {', '.join(TASKS)}",
    )


def add_batch_and_threshold_arguments(parser: argparse.ArgumentParser) -> None:
    """--batch-size and --threshold, which check_batch_and_threshold checks."""
    parser.add_argument("--batch-size", type=int, default=64, help="pairs per batch")
    parser.add_argument(
        "--threshold",
        type=float,
        default=DEFAULT_THRESHOLD,
        help="a class is listed in labels when its probability is at least this",
    )


def check_batch_and_threshold(args: argparse.Namespace) -> None:
    if args.batch_size < 1:
        raise CommandError(f"--batch-size must be positive, got {args.batch_size}")
    if not 0.0 < args.threshold <= 1.0:
        raise CommandError(f"--threshold must be in (0, 1], got {args.threshold}")


def checkpoint_inputs(spec: str | None, task: str | None = None) -> list[Path]:
    """The files of the checkpoint folder a run reads, which no output may replace; none for a
    Hub id, or for a checkpoint not found (the run's own lookup says so)."""
    try:
        name, _ = resolve_checkpoint(spec, task)
    except CheckpointError:
        return []
    folder = Path(name)
    return [folder / file for file in CHECKPOINT_FILES] if folder.is_dir() else []


def check_json_output(option: str, path: Path, inputs: Iterable[Path | None], what: str) -> None:
    """``path`` (given to ``option``) must be a writable plain JSON file that is no input of
    the run (scoring would read the input and then replace it); ``what`` names its contents
    in the message about a .gz name."""
    if path == Path("-"):  # it was written as a file named "-", where --input - reads stdin
        raise CommandError(f"{option} -: name a file; - is not standard output here")
    problem = output_problem(path)  # first: a loop of links cannot be resolved
    if problem:
        raise CommandError(f"{option} {problem}")
    if any(same_path(path, given) for given in inputs if given is not None):
        raise CommandError(f"{option} {path} is an input of this run; name another file")
    if is_gzip(path):
        raise CommandError(f"{option} {path}: {what} is plain JSON; drop the .gz")


def checkpoint_of(args: argparse.Namespace) -> tuple[Path, dict]:
    """The directory (a Hub id downloaded once, here) and config.json of the checkpoint asked
    for (--checkpoint, --task), found and read before torch loads."""
    if args.task is not None:
        from evaluator.tasks import get_task

        try:
            get_task(args.task)
        except KeyError as error:
            raise CommandError(str(error.args[0])) from None
    directory = checkpoint_directory(
        *resolve_checkpoint(args.checkpoint, args.task), local_files_only=False
    )
    return directory, read_config(directory)


def load_evaluator(args: argparse.Namespace, directory: Path):
    """The Evaluator of ``directory`` with --device and --threshold; one fine-tuned for --task
    when a task is named."""
    from evaluator.evaluator import Evaluator

    try:
        evaluator = Evaluator.from_pretrained(
            directory, device=args.device or "cpu", threshold=args.threshold
        )
    except ValueError as error:  # a --threshold or --device the evaluator refuses
        raise CommandError(str(error)) from None
    if args.task and args.task not in evaluator.checkpoint.tasks:
        raise CommandError(
            f"{evaluator.checkpoint.path} is not fine-tuned for task {args.task!r} "
            f"(its tasks: {', '.join(evaluator.checkpoint.tasks) or 'none'})"
        )
    return evaluator


def report_warnings(caught: list[warnings.WarningMessage], prefix: str) -> None:
    """Print our counted warnings (truncation, span reach, short references) as one line each
    after ``prefix``; pass every other warning on unchanged."""
    from evaluator.evaluator import COUNTED_WARNINGS

    for warning in caught:
        if issubclass(warning.category, COUNTED_WARNINGS):
            print(f"{prefix}: warning: {warning.message}", file=sys.stderr)
        else:
            warnings.showwarning(
                warning.message, warning.category, warning.filename, warning.lineno
            )
