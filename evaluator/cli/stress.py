"""`mismatch stress`: blind-spot stress tests for any metric, ours included."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from evaluator.cli import CommandError
from evaluator.stress.metrics import DEFAULT_METRICS
from mismatch_core.atomic import output_problem, same_path

DEFAULT_LIMIT = 200


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--metrics",
        default=DEFAULT_METRICS,
        help="comma-separated: bleu, rougeL, chrf, meteor, bertscore, any feature column, "
        "mismatch[=CHECKPOINT[@REVISION]] (P(NoContr)), mismatch=CHECKPOINT#CRITERION or "
        "#ratings (what a fine-tuned checkpoint rates), module:function (default: %(default)s)",
    )
    parser.add_argument(
        "--data",
        required=True,
        help="normalised JSONL (ref, gen = gold hypothesis, optional src) or a task name "
        "(gold = the first of 2+ references, ref = the others)",
    )
    parser.add_argument(
        "--out", required=True, help="folder for report.md/json and plots/"
    )
    parser.add_argument("--seeds", type=int, default=5, help="random seeds per test (default: 5)")
    parser.add_argument(
        "--limit", type=int, default=DEFAULT_LIMIT, help="items (default: %(default)s)"
    )
    parser.add_argument("--tests", help="comma-separated subset of the tests (default: all)")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads for the encoder and the mismatch model (default: 1, which on "
        "a shared 2-core machine encoded faster than 2)",
    )


def _log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    import torch

    from evaluator.stress.data import load_items
    from evaluator.stress.metrics import parse_metrics, signatures
    from evaluator.stress.report import REPORT_FILES, write_report
    from evaluator.stress.runner import run_stress
    from mismatch_core.errors import CheckpointError, DataError

    if args.seeds < 1:
        raise CommandError(f"--seeds must be at least 1, got {args.seeds}")
    if args.limit < 1:
        raise CommandError(f"--limit must be at least 1, got {args.limit}")
    if args.threads < 1:
        raise CommandError(f"--threads must be at least 1, got {args.threads}")
    torch.set_num_threads(args.threads)
    if not args.out.strip():  # Path("") is the working directory
        raise CommandError("--out is empty; give a folder")
    out = Path(args.out)
    problem = output_problem(out, kind="directory")
    if problem:
        raise CommandError(f"--out: {problem}")
    written = [out / name for name in REPORT_FILES]
    if any(same_path(Path(args.data), path) for path in written):
        raise CommandError(f"--data {args.data} is a report this run writes to --out {out}")
    tests = None if args.tests is None else [t.strip() for t in args.tests.split(",") if t.strip()]
    if tests == []:
        raise CommandError(f"--tests {args.tests!r} names no test; leave it out to run them all")
    try:
        items = load_items(args.data, args.limit)
        metrics = parse_metrics(args.metrics)
        _log(f"{len(items)} items from {args.data}; metrics: {', '.join(metrics)}")
        result = run_stress(items, metrics, tests=tests, seeds=args.seeds, log=_log)
        signed = signatures(list(metrics))
    except (DataError, CheckpointError, ValueError) as error:
        raise CommandError(str(error)) from None
    command = (
        f"mismatch stress --metrics {shlex.quote(args.metrics)} --data {shlex.quote(args.data)} "
        f"--out {shlex.quote(args.out)} --seeds {args.seeds} --limit {args.limit}"
        + (f" --tests {shlex.quote(args.tests)}" if args.tests else "")
    )
    title = f"Stress tests on {args.data}"
    for path in write_report(result, out, title, command, signed):
        print(path)
    for metric, curves in result.curves.items():
        print(f"{metric}: {sum(c.passed for c in curves.values())}/{len(curves)} tests passed")
    return 0
