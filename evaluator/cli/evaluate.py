"""`mismatch evaluate --task T|all --seeds 3 --out DIR`: fine-tune per seed, compare, write results.

Writes DIR/results.{md,json} (several tasks: DIR/<task>/results.{md,json} as each finishes,
then the combined table), with a row per dataset and, unless --no-transfer, the transfer rows
(fitted on one dataset of a task, tested on another). Only with --export-dir DIR does it also fit each task on every record
and write DIR/mismatch-<task>/: the shipped checkpoints are never replaced as a side effect.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from evaluator.cli import CommandError
from evaluator.cli.finetune import (
    add_input_arguments,
    check_given_paths,
    load_settings,
    prepare,
    with_paths,
)
from evaluator.tasks import TASKS, missing_data_file
from mismatch_core.atomic import output_problem
from mismatch_core.checkpoint_files import export_problem


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--task",
        action="append",
        required=True,
        help=f"'all' or one of {', '.join(TASKS)}; repeatable",
    )
    add_input_arguments(parser)
    parser.add_argument(
        "--seeds", type=int, default=3, help="number of seeded splits (seeds 0..N-1)"
    )
    parser.add_argument(
        "--out",
        required=True,
        help="folder for results.md / results.json (docs/results holds the shipped ones: "
        "give it only to replace them)",
    )
    parser.add_argument(
        "--export-dir",
        default=None,
        help="also fit on every record and write DIR/mismatch-<task>/ (default: write no checkpoint)",
    )
    parser.add_argument(
        "--config-dir", default="configs/finetune", help="holds <task>.yaml fit numbers"
    )
    parser.add_argument(
        "--no-transfer",
        action="store_true",
        help="skip the transfer rows (fit on one dataset of a task, test on another)",
    )


def _named(option: str, problem: str | None) -> str | None:
    """The problem with an option's path, prefixed with the option, or None."""
    return problem and f"{option}: {problem}"


def run(args: argparse.Namespace) -> int:
    check_given_paths(args)
    tasks = list(TASKS) if "all" in args.task else list(dict.fromkeys(args.task))
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        raise CommandError(f"unknown task(s) {', '.join(unknown)}; known: all, {', '.join(TASKS)}")
    if args.seeds < 1:
        raise CommandError("--seeds must be at least 1")
    configs = {t: str(Path(args.config_dir) / f"{t}.yaml") for t in tasks}
    settings = {t: with_paths(load_settings(t, configs[t]), args) for t in tasks}
    problems = [_named("--out", output_problem(Path(args.out), "directory"))]
    problems += [
        _named(f"--cache-dir of {task}", output_problem(Path(s.cache_dir), "directory"))
        for task, s in settings.items()
    ]
    if args.export_dir is not None:
        problems += [export_problem(Path(args.export_dir) / f"mismatch-{t}") for t in tasks]
    for task, task_settings in settings.items():
        missing = missing_data_file(TASKS[task], task_settings.data_root)
        problems.append(f"{missing}: no such file (task {task})" if missing else None)
    problem = next(filter(None, problems), None)
    if problem:  # checked before the fits, not after them
        raise CommandError(problem)
    # the fitting modules load Lightning (seconds): only once the arguments are known good
    from evaluator.finetune.evaluate import evaluate_task, write_results
    from evaluator.finetune.transfer import evaluate_transfers
    from evaluator.signature import signature

    command = (
        "mismatch evaluate " + " ".join(shlex.quote(a) for a in sys.argv[2:])
        if sys.argv[1:2] == ["evaluate"]
        else "mismatch evaluate"
    )
    out = Path(args.out)
    results = []
    for task in tasks:
        start = time.time()
        task_settings = settings[task]
        checkpoint = args.checkpoint or task_settings.checkpoint
        prepared = prepare(
            task,
            checkpoint,
            task_settings,
            configs[task],
            checkpoint_from_config=args.checkpoint is None,
        )
        print(
            f"{task}: {len(prepared.records)} records ready in {time.time() - start:.0f}s",
            flush=True,
        )
        result = evaluate_task(
            prepared,
            list(range(args.seeds)),
            task_settings,
            checkpoint,
            None if args.export_dir is None else Path(args.export_dir),
            log=lambda line: print(line, flush=True),
        )
        if not args.no_transfer:
            result["transfer"] = evaluate_transfers(
                prepared,
                list(range(args.seeds)),
                task_settings,
                checkpoint,
                log=lambda line: print(line, flush=True),
            )
        result["base_signature"] = signature(prepared.base).to_dict()
        results.append(result)
        write_results(out / task if len(tasks) > 1 else out, [result], command)
        print(f"{task}: done in {time.time() - start:.0f}s", flush=True)
    if len(tasks) > 1:
        write_results(out, results, command)
    print(f"results in {out}/results.md")
    return 0
