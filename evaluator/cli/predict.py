"""`mismatch predict`: score generated texts against references from files or stdin.

Input is read and checked line by line before the checkpoint loads, so bad input fails fast;
then it is read again in chunks of STREAM_PAIRS, each scored and written as it comes (to
stdout, or to a temporary file renamed to --output at the end), so memory stays flat however
long the input. With --devices N, Lightning runs the command in N processes; each scores its
share of every chunk and rank 0 writes.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import io
import os
import sys
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from evaluator.cli import CommandError
from evaluator.cli.scoring import (
    add_batch_and_threshold_arguments,
    add_checkpoint_argument,
    add_refs_argument,
    add_task_argument,
    check_batch_and_threshold,
    check_json_output,
    checkpoint_inputs,
    checkpoint_of,
    load_evaluator,
    report_warnings,
)
from mismatch_core.atomic import output_problem, same_path, write_text_atomic
from mismatch_core.checkpoint_files import reads_sources
from mismatch_core.jsonl import is_gzip, report_json

if TYPE_CHECKING:
    from evaluator.predict_io import SystemSummary

# pairs read, scored and written at a time (2 of the Evaluator's CHUNK_PAIRS): memory is
# bounded by this, not by the input (but for the JSONL ids kept to find repeats)
STREAM_PAIRS = 2048

EPILOG = (
    "Each output record: id (default: the input line number); score = P(NoContr), the "
    "probability that gen says what the reference says (1 = no error found); ratings = the "
    "task's criteria on their human scales (task checkpoints only); mismatch = the "
    "probability of each of the 14 classes; labels = the classes with probability >= "
    "--threshold, most likely first (empty when the model is unsure); ref_index = which "
    "reference names the errors (from 0; with several, see docs/scoring.md); with a "
    "checkpoint that has a span tagger, spans = the characters of gen read as wrong (start, "
    "end, text, label, prob) and missing = the reference words gen leaves out (CSV/TSV: "
    "compact columns, see docs/scoring.md). Texts over the encoder's "
    "token limit are truncated and counted in one warning. --summary FILE writes the "
    "system-level figures as one JSON object: pairs, mean_score, mean_ratings, label_counts "
    "(pairs that list each class), flagged (pairs with an error label), unsure (no label) and "
    "the signature."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    source = parser.add_argument_group("input (one of; default: JSONL on stdin)")
    add_refs_argument(source)
    source.add_argument("--gens", type=Path, metavar="FILE", help="generated texts, line-aligned")
    source.add_argument("--srcs", type=Path, metavar="FILE", help="source texts, line-aligned")
    source.add_argument(
        "--input",
        metavar="FILE",
        help='JSONL of {"ref": str | [str], "gen": str | null (no output), "src"?: str, '
        '"id"?: str | int}; "-" = stdin',
    )
    add_checkpoint_argument(parser)
    add_task_argument(parser)
    parser.add_argument(
        "--output",
        type=Path,
        metavar="FILE",
        help="output file (default: stdout); a name ending in .gz is written gzip-compressed",
    )
    parser.add_argument(
        "--summary",
        type=Path,
        metavar="FILE",
        help="also write the system-level figures as JSON (pairs, mean score, mean ratings, "
        "pairs per class, flagged and unsure pairs, signature), last, once every pair is scored",
    )
    parser.add_argument(
        "--format",
        metavar="{jsonl,csv,tsv}",
        help="output format: jsonl (one JSON object a record), csv or tsv (default: from the "
        "--output suffix before any .gz: .jsonl or .ndjson, .csv or .tsv; jsonl for a name "
        "without one, and for stdout); --summary writes the system-level figures as one JSON "
        "object",
    )
    add_batch_and_threshold_arguments(parser)
    parser.add_argument(
        "--device",
        default=None,
        help="cpu or cuda: where the encoder pass and the model run, in one process (default "
        "cpu; with --devices N, --accelerator chooses)",
    )
    parser.add_argument(
        "--devices",
        type=int,
        default=1,
        help="score on N devices with Lightning DDP, one process each; the output is the same "
        "as with one (input from files, not stdin)",
    )
    parser.add_argument(
        "--accelerator",
        choices=("cpu", "gpu"),
        default="cpu",
        help="with --devices above 1: CPU processes (gloo) or one GPU per process",
    )
    parser.add_argument(
        "--no-spans",
        action="store_true",
        help="do not mark error spans: no spans/missing keys or columns in the output",
    )
    parser.add_argument(
        "--offline", action="store_true", help="never contact the Hugging Face Hub (cache only)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar or summary line")
    parser.add_argument(
        "--signature",
        action="store_true",
        help="print the reproducibility signature of the checkpoint and --threshold, and exit",
    )


def run(args: argparse.Namespace) -> int:
    from evaluator.malloc import fix_mmap_threshold

    fix_mmap_threshold()  # peak memory flat over long inputs (--offline: set by cli.main)
    started = time.perf_counter()
    check_batch_and_threshold(args)
    if args.signature:
        print(load_evaluator(args, checkpoint_of(args)[0]).signature)
        return 0
    _check_written_paths(args)
    output_format = _output_format(args)
    source = _input_source(args)
    checkpoint, config = checkpoint_of(args)
    total = source.count(require_sources=reads_sources(config))  # checked before the model loads
    scorer = _scorer(args)
    try:
        status = _score(args, source, total, scorer, output_format, started, checkpoint)
    except BaseException:
        if scorer is not None:
            scorer.close(wait=False)
        raise
    if scorer is not None:
        scorer.close()
    return status


def _score(args, source, total: int, scorer, output_format: str, started: float, checkpoint) -> int:
    """Score and write (rank 0) or score a share (other ranks); the command's exit status."""
    evaluator = load_evaluator(args, checkpoint)
    score = functools.partial(_score_and_write, args, source, total, evaluator, scorer)
    from evaluator.evaluator import COUNTED_WARNINGS

    if scorer is not None and not scorer.is_global_zero:  # scores its share; rank 0 writes,
        # and reports the counts (each process printed them)
        with open(os.devnull, "w", encoding="utf-8") as sink, warnings.catch_warnings():
            for category in COUNTED_WARNINGS:
                warnings.simplefilter("ignore", category)
            score(sink, output_format, progress=False)
        return 0
    with warnings.catch_warnings(record=True) as caught:
        for category in COUNTED_WARNINGS:
            warnings.simplefilter("always", category)
        if args.output is None:
            try:
                summary = score(sys.stdout, output_format, progress=not args.quiet)
                sys.stdout.flush()
            except BrokenPipeError:  # the reader stopped early (`| head`): nothing to report
                _silence_stdout()
                return 141  # as a shell reports a command ended by SIGPIPE
            except OSError as error:  # a full disk behind the redirection, /dev/full
                raise CommandError(f"cannot write to stdout: {error.strerror}") from None
        else:
            from mismatch_core.atomic import atomic_path

            try:
                with atomic_path(args.output) as temporary, temporary.open("wb") as raw:
                    with _text_stream(raw, is_gzip(args.output)) as stream:
                        summary = score(stream, output_format, progress=not args.quiet)
            except OSError as error:
                raise CommandError(f"cannot write {args.output}: {error.strerror}") from None
    report_warnings(caught, "mismatch predict")
    if args.summary is not None:
        figures = report_json(summary.to_dict(str(evaluator.signature)))
        try:
            write_text_atomic(args.summary, figures)
        except OSError as error:
            where = "stdout" if args.output is None else args.output
            raise CommandError(
                f"cannot write the summary {args.summary}: {error.strerror} (the scores were "
                f"written to {where})"
            ) from None
    if not args.quiet:
        seconds = time.perf_counter() - started
        where = "stdout" if args.output is None else args.output
        mean = "none" if summary.mean_score is None else f"{summary.mean_score:.4f}"
        print(
            f"mismatch predict: {total} pair(s) scored with {evaluator.checkpoint.path} "
            f"in {seconds:.1f} s -> {where}\n"
            f"mismatch predict: mean score {mean}; {summary.flagged} pair(s) labelled with an "
            f"error, {summary.unsure} with no label\n"
            f"mismatch predict: signature {evaluator.signature}",
            file=sys.stderr,
        )
    return 0


def _check_written_paths(args: argparse.Namespace) -> None:
    """--output and --summary must name two writable files that are not an input (scoring
    would read the input and then replace it), and the summary is plain JSON."""
    if args.output == Path("-"):  # as check_json_output refuses it for --summary
        raise CommandError("--output -: leave --output out to write the records to stdout")
    inputs = [*(args.refs or []), args.gens, args.srcs]
    inputs += checkpoint_inputs(args.checkpoint, args.task)
    if args.input not in (None, "-"):
        inputs.append(Path(args.input))
    if args.output is not None:
        problem = output_problem(args.output)  # first: a loop of links cannot be resolved
        if problem:
            raise CommandError(f"--output {problem}")
        if any(same_path(args.output, path) for path in inputs if path is not None):
            raise CommandError(f"--output {args.output} is an input of this run; name another file")
    if args.summary is None:
        return
    check_json_output("--summary", args.summary, inputs, "the summary")
    if args.output is not None and same_path(args.summary, args.output):
        raise CommandError("--summary and --output name the same file")


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit does not raise again."""
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, descriptor)
    os.close(devnull)


def _score_and_write(
    args, source, total: int, evaluator, scorer, stream, output_format: str, progress: bool
) -> SystemSummary:
    """Score the input chunk by chunk and write each chunk's predictions as they come; the
    run's SystemSummary."""
    from evaluator.predict_io import PredictionWriter, SystemSummary, chunked

    spans = not args.no_spans
    writer = PredictionWriter(
        stream, output_format, evaluator.rating_keys, spans=spans and evaluator.has_spans
    )
    summary = SystemSummary(evaluator.rating_keys)
    chunks = chunked(source.rows(), STREAM_PAIRS)
    for predictions in evaluator.predict_stream(
        chunks, total, batch_size=args.batch_size, progress=progress, scorer=scorer, spans=spans
    ):
        writer.write(predictions)
        summary.add(predictions)
    return summary


OUTPUT_FORMATS = ("jsonl", "csv", "tsv")
# what a user asking for JSON may want instead: every record is one JSON object in JSON Lines
JSON_HINT = (
    "; each record is one JSON object in jsonl, and --summary FILE writes the system-level "
    "figures as one JSON object"
)


def _output_format(args: argparse.Namespace) -> str:
    if args.format is not None:
        asked = args.format.lower()
        asked = "jsonl" if asked == "ndjson" else asked  # as the .ndjson suffix reads
        if asked not in OUTPUT_FORMATS:
            hint = JSON_HINT if asked == "json" else ""
            raise CommandError(
                f"--format {args.format}: predict writes {', '.join(OUTPUT_FORMATS)}{hint}"
            )
        return asked
    if args.output is None:
        return "jsonl"
    named = Path(args.output.stem) if is_gzip(args.output) else args.output
    suffix = named.suffix.lower().lstrip(".")
    if suffix in ("", "jsonl", "ndjson"):  # newline-delimited JSON is JSON Lines
        return "jsonl"
    if suffix in ("csv", "tsv"):
        return suffix
    # a name like scores.parquet or scores.json promises a format predict does not write
    raise CommandError(
        f"--output {args.output}: predict writes JSON Lines, CSV or TSV, not '.{suffix}'; "
        "name the file .jsonl, .csv or .tsv (optionally + .gz), or give --format"
        + (JSON_HINT if suffix == "json" else "")
    )


def _text_stream(raw: BinaryIO, compressed: bool) -> io.TextIOWrapper:
    """UTF-8 text into ``raw``; compressed, through gzip with no file name (the temporary's)
    nor time in its header, so equal runs give equal bytes."""
    if compressed:
        packed = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0)
        return io.TextIOWrapper(packed, encoding="utf-8", newline="")
    return io.TextIOWrapper(raw, encoding="utf-8", newline="")


def _scorer(args: argparse.Namespace):
    """None: score in this process; else a Lightning scorer over --devices processes."""
    if args.devices < 1:
        raise CommandError(f"--devices must be positive, got {args.devices}")
    if args.devices == 1:
        return None
    if args.device is not None:  # Lightning puts each process's model on its own device
        raise CommandError(
            f"--device {args.device} is for one process; with --devices {args.devices} "
            "choose --accelerator cpu or gpu"
        )
    from lightning.fabric.utilities.exceptions import MisconfigurationException

    from evaluator.multi_device import LightningScorer

    try:
        return LightningScorer(args.accelerator, args.devices)
    except MisconfigurationException as error:  # e.g. --accelerator gpu without a GPU
        where = f"--accelerator {args.accelerator} --devices {args.devices}"
        raise CommandError(f"{where}: {error}") from None


def _check_files_for_devices(args: argparse.Namespace, paths: list[Path]) -> None:
    """With --devices above 1 every process re-runs the command and reads the input again: a
    pipe (`<(cmd)`) gives its lines once and is not there in the others."""
    from evaluator.predict_io import is_pipe

    if args.devices <= 1:
        return
    pipe = next((path for path in paths if is_pipe(path)), None)
    if pipe is not None:
        raise CommandError(
            f"{pipe} gives its input once (a pipe or a terminal); --devices above 1 reads its "
            "input from files: save it first"
        )


def _input_source(args: argparse.Namespace):
    from evaluator.predict_io import AlignedInput, JsonlInput

    aligned = args.refs is not None or args.gens is not None or args.srcs is not None
    if aligned and args.input is not None:
        options = {"--refs": args.refs, "--gens": args.gens, "--srcs": args.srcs}
        given = " / ".join(name for name, value in options.items() if value is not None)
        raise CommandError(f"give either --input or --refs/--gens (and --srcs), not {given} too")
    if aligned:
        if args.refs is None or args.gens is None:
            raise CommandError("line-aligned input needs both --refs and --gens")
        paths = [*args.refs, args.gens, *([args.srcs] if args.srcs else [])]
        _check_files_for_devices(args, paths)
        return AlignedInput(args.refs, args.gens, args.srcs)
    if args.input not in (None, "-"):
        _check_files_for_devices(args, [Path(args.input)])
        return JsonlInput.from_file(Path(args.input))
    if args.devices > 1:  # every process re-runs the command and would read stdin again
        raise CommandError("--devices above 1 reads its input from files: give --input FILE")
    if args.input is None and sys.stdin.isatty():
        raise CommandError(
            "no input: give --input pairs.jsonl, --refs F --gens F, or pipe JSONL on stdin"
        )
    return JsonlInput.from_stream(sys.stdin.buffer)
