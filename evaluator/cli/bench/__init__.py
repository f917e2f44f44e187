"""`mismatch bench TARGET`: throughput and real-text benchmarks, one function per target,
printed as text."""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from evaluator.cli import CommandError, check_device
from mismatch_core.config import check_seed

# target -> "module:function"; each function takes the parsed args and prints its report.
TARGETS: dict[str, str] = {
    "synth": "evaluator.cli.bench.synth:bench_synth",
    "features": "evaluator.cli.bench.features:bench_features",
    "predict": "evaluator.cli.bench.predict:bench_predict",
    "realtext": "evaluator.cli.bench.realtext:bench_realtext",
    "spans": "evaluator.cli.bench.spans:bench_spans",
}

# the options only some targets read -> those targets (every target reads --seed; with `all`,
# each target reads what is its own)
OPTION_READERS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("pairs",): ("synth", "features", "predict", "spans"),
    ("checkpoint", "parts", "bases_limit", "out"): ("realtext", "spans"),
    ("darr_limit",): ("realtext",),
    ("synth_pairs",): ("spans",),
    ("input", "device"): ("predict",),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", choices=[*TARGETS, "all"], help="what to measure")
    parser.add_argument(
        "--pairs",
        type=int,
        default=None,
        help="number of pairs, for synth, features and predict (spans: per class, for its synth "
        "part); default per target",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=13,
        help="seed of the sampled pairs and applied errors (predict with --input reads none)",
    )
    predict = parser.add_argument_group("predict")
    predict.add_argument(
        "--input",
        default=None,
        help="time these pairs: a JSONL of {ref, gen} objects as mismatch predict reads it "
        "(first reference of each; --pairs takes the first N, --seed is not read); default "
        "real human-rated pairs",
    )
    predict.add_argument(
        "--device",
        default=None,
        help="where both scorers run their encoder (and ours its model): cpu (default) or cuda",
    )
    realtext = parser.add_argument_group("realtext and spans")
    realtext.add_argument(
        "--checkpoint",
        default=None,
        help="checkpoint to measure (default checkpoints/mismatch-base; a task checkpoint "
        "adds its mean rating as a scored column)",
    )
    realtext.add_argument(
        "--parts",
        default=None,
        help="comma-separated subset of sick,bases,darr (realtext; default all) or synth,bases "
        "(spans; default bases, and synth when --synth-pairs is given)",
    )
    realtext.add_argument(
        "--synth-pairs",
        default=None,
        help="spans: held-out synthetic pairs, a mismatch synth val.parquet (--pairs per class)",
    )
    realtext.add_argument(
        "--bases-limit",
        type=int,
        default=None,
        help="real bases per dataset, for the bases part (seeded sample; default 150; 0 = all "
        "held-out)",
    )
    realtext.add_argument(
        "--darr-limit",
        type=int,
        default=None,
        help="realtext: DARR pairs per language pair (default 1500; 0 = all)",
    )
    realtext.add_argument("--out", default=None, help="write every figure to this JSON file")


def run(args: argparse.Namespace) -> int:
    if args.out is not None and not args.out.strip():
        raise CommandError("--out is empty; give a path")
    if args.target == "all" and (args.out or args.parts):
        raise CommandError("--out and --parts name one target's output and parts; not with all")
    if args.pairs is not None and args.pairs < 1:
        raise CommandError(f"--pairs must be at least 1, got {args.pairs}")
    try:
        check_seed(args.seed, "--seed")
    except ValueError as error:
        raise CommandError(str(error)) from None
    for name in ("bases_limit", "darr_limit"):
        if getattr(args, name) is not None and getattr(args, name) < 0:
            raise CommandError(f"--{name.replace('_', '-')} must not be negative")
    for options, readers in OPTION_READERS.items():
        given = [name for name in options if getattr(args, name) is not None]
        if given and args.target not in (*readers, "all"):
            flags = ", ".join(f"--{name.replace('_', '-')}" for name in given)
            where = (
                f"{', '.join(readers[:-1])} and {readers[-1]} targets"
                if len(readers) > 1
                else f"{readers[0]} target"
            )
            raise CommandError(f"{flags}: for the {where}, not {args.target}")
    # checked before any target runs: with `all`, predict comes after minutes of others
    check_device(args.device)
    if args.input is not None and not Path(args.input).is_file():
        what = "is a directory; give a .jsonl file" if Path(args.input).is_dir() else "no such file"
        raise CommandError(f"--input: {args.input}: {what}")
    targets = list(TARGETS) if args.target == "all" else [args.target]
    for target in targets:
        module_name, function_name = TARGETS[target].split(":")
        getattr(importlib.import_module(module_name), function_name)(args)
    return 0
