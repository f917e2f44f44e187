"""`mismatch compare --refs REF --gens A B [C ...]` (or `--inputs A.jsonl B.jsonl`): systems
scored on the same references, each compared with the first.

As sacrebleu's paired tests and COMET's comet-compare do for their scores: every system's
mean score (and mean ratings with --task) with a 95 % bootstrap interval, its difference to
the baseline (the first system) with an interval and a paired randomization p-value, and
the same for the share of pairs labelled with each error class, which says what kind of
errors one system makes more often than another (``evaluator.system_comparison``).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import warnings
from pathlib import Path

from evaluator.cli import CommandError, check_device
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
from mismatch_core.atomic import write_text_atomic
from mismatch_core.checkpoint_files import reads_sources
from mismatch_core.config import check_seed
from mismatch_core.errors import DataError
from mismatch_core.jsonl import is_gzip, report_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_argument_group(
        "input (one of; two or more systems, the first the baseline)"
    )
    add_refs_argument(source)
    source.add_argument(
        "--gens",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="each system's outputs, line-aligned with the references",
    )
    source.add_argument("--srcs", type=Path, metavar="FILE", help="source texts, line-aligned")
    source.add_argument(
        "--inputs",
        type=Path,
        nargs="+",
        metavar="FILE",
        help='each system\'s pairs as JSONL, as predict reads them ({"ref": str | [str], "gen": '
        'str, "src"?, "id"?}), the same references line by line',
    )
    parser.add_argument(
        "--names",
        help="comma-separated system names, one per system file (default: the file names "
        "without their suffix, or the paths where two are alike)",
    )
    add_checkpoint_argument(parser)
    add_task_argument(parser, " and compare its ratings too")
    add_batch_and_threshold_arguments(parser)
    # the library's DEFAULT_RESAMPLES and seed, written out so that --help does not load scipy
    parser.add_argument(
        "--resamples",
        type=int,
        default=1000,
        help="bootstrap and randomization resamples (at least 100)",
    )
    parser.add_argument("--seed", type=int, default=13, help="seed of the resamples")
    parser.add_argument("--out", type=Path, metavar="FILE", help="also write every figure as JSON")
    parser.add_argument(
        "--device", default=None, help="cpu (default) or cuda: where the encoder and the model run"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    files = _system_files(args)
    names = _names(args, files)
    _check_numbers(args)
    _check_out(args, files)
    checkpoint, config = checkpoint_of(args)
    systems = _read_systems(args, files, reads_sources(config))
    total = len(systems[0])
    if total < 2:
        raise CommandError(f"{files[0]}: a comparison needs at least 2 pairs, got {total}")

    from evaluator.system_comparison import (
        compare_systems,
        comparison_report,
        randomization_is_exact,
    )

    evaluator = load_evaluator(args, checkpoint)
    predictions = []
    for name, path, rows in zip(names, files, systems, strict=True):
        if not args.quiet:
            print(f"mismatch compare: scoring {name}", file=sys.stderr, flush=True)
        ids, refs, gens, srcs = zip(*rows, strict=True)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                predictions.append(
                    evaluator.predict(
                        list(refs),
                        list(gens),
                        list(srcs),
                        batch_size=args.batch_size,
                        ids=list(ids),
                        progress=not args.quiet,
                        spans=False,
                    )
                )
        except ValueError as error:  # a pair the evaluator refuses (named by its id)
            raise DataError(f"{path}: {error}") from None
        report_warnings(caught, f"mismatch compare: {name}")
    try:
        comparison = compare_systems(
            names, predictions, evaluator.rating_keys, args.resamples, args.seed
        )
    except ValueError as error:  # a score that is not a number (named by system and pair)
        raise CommandError(str(error)) from None
    signature = evaluator.signature
    exact = randomization_is_exact(total, args.resamples)
    resampling = (
        f"{args.resamples} bootstrap resamples, randomization exact over all {2**total} "
        "sign patterns"
        if exact
        else f"{args.resamples} resamples"
    )
    print(
        f"mismatch compare: {total} pairs, {len(names)} systems, baseline {names[0]}; "
        f"{resampling}, seed {args.seed}\nsignature {signature}\n"
        "each mean with its 95% bootstrap interval; 'vs base': the mean per-pair difference "
        "to the baseline, its interval and the paired randomization p-value\n"
    )
    print(comparison_report(comparison, names))
    if args.out is not None:
        payload = {
            "command": "mismatch compare " + " ".join(shlex.quote(a) for a in sys.argv[2:])
            if sys.argv[1:2] == ["compare"]
            else "mismatch compare",
            "signature": signature.to_dict(),
            "pairs": total,
            "systems": dict(zip(names, map(str, files), strict=True)),
            "baseline": names[0],
            "resamples": args.resamples,
            "randomization_exact": exact,
            "seed": args.seed,
            **comparison,
        }
        write_text_atomic(args.out, report_json(payload))
        print(f"\nresults in {args.out}")
    return 0


def _system_files(args: argparse.Namespace) -> list[Path]:
    """The file of each system: the --gens files with --refs, or the --inputs files."""
    aligned = args.refs is not None or args.gens is not None or args.srcs is not None
    if aligned and args.inputs is not None:
        raise CommandError("give either --inputs or --refs/--gens (and --srcs), not both")
    if aligned and (args.refs is None or args.gens is None):
        raise CommandError("line-aligned input needs both --refs and --gens")
    if not aligned and args.inputs is None:
        raise CommandError("no input: give --refs F --gens A B, or --inputs A.jsonl B.jsonl")
    files = args.gens if aligned else args.inputs
    option = "--gens" if aligned else "--inputs"
    if len(files) < 2:
        raise CommandError(f"{option}: give two or more systems' files (the first is the baseline)")
    return files


def _read_systems(args: argparse.Namespace, files: list[Path], require_sources: bool) -> list:
    """Every system's pairs, (id, ref, gen, src) each, checked (as predict checks its input),
    matched by position: the same references, and the same id where both JSONL lines name
    one (a line without one is named by its line number, which blank lines shift); DataError
    names the file and pair that differ."""
    from evaluator.predict_io import AlignedInput, JsonlInput

    pipe_copies: dict = {}  # --refs <(cmd) is read once, for every system
    sources: list[AlignedInput | JsonlInput] = (
        [AlignedInput(args.refs, gens, args.srcs, pipe_copies) for gens in files]
        if args.inputs is None
        else [JsonlInput.from_file(path) for path in files]
    )
    for source in sources:
        source.count(require_sources=require_sources)
    systems = [list(source.rows()) for source in sources]
    named = [
        source.named_ids() if isinstance(source, JsonlInput) else [False] * len(rows)
        for source, rows in zip(sources, systems, strict=True)
    ]
    first = systems[0]
    for path, rows, own in zip(files[1:], systems[1:], named[1:], strict=True):
        if len(rows) != len(first):
            raise DataError(f"{path} has {len(rows)} pair(s) but {files[0]} has {len(first)}")
        for number, (row, base) in enumerate(zip(rows, first, strict=True), 1):
            both_named = own[number - 1] and named[0][number - 1]
            if both_named and row[0] != base[0]:  # the same pairs listed in another order
                raise DataError(
                    f"{path}: pair {number} has id {row[0]!r}, pair {number} of {files[0]} id "
                    f"{base[0]!r}; list every system's pairs in the same order"
                )
            if row[1] != base[1]:
                raise DataError(
                    f"{path}: pair {number} (id {row[0]!r}) has other references than pair "
                    f"{number} of {files[0]}; every system is read against the same ones"
                )
    return systems


def _names(args: argparse.Namespace, files: list[Path]) -> list[str]:
    """One name per system file: --names, else the file names without suffix (and without
    .gz first), else (two alike) the paths as given; two systems never share one."""
    if args.names is None:
        names = [Path(path.stem).stem if is_gzip(path) else path.stem for path in files]
        if len(set(names)) < len(names):
            names = [str(path) for path in files]
        if len(set(names)) < len(names):
            raise CommandError("a system file is given twice; give --names, one per system")
        return names
    names = [name.strip() for name in args.names.split(",")]
    if len(names) != len(files) or not all(names):
        raise CommandError(
            f"--names: give one non-empty name per system file ({len(files)}), got {args.names!r}"
        )
    if len(set(names)) != len(names):
        raise CommandError(f"--names: each system needs its own name, got {args.names!r}")
    return names


def _check_numbers(args: argparse.Namespace) -> None:
    from evaluator.system_comparison import MIN_RESAMPLES

    if args.resamples < MIN_RESAMPLES:
        raise CommandError(
            f"--resamples must be at least {MIN_RESAMPLES} (fewer give no usable interval), "
            f"got {args.resamples}"
        )
    check_batch_and_threshold(args)
    try:
        check_seed(args.seed, "--seed")
    except ValueError as error:
        raise CommandError(str(error)) from None
    check_device(args.device)  # before the checkpoint and the inputs are read


def _check_out(args: argparse.Namespace, files: list[Path]) -> None:
    if args.out is not None:
        inputs = [*(args.refs or []), *files, args.srcs]
        inputs += checkpoint_inputs(args.checkpoint, args.task)
        check_json_output("--out", args.out, inputs, "the file")
