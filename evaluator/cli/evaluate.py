"""`mismatch evaluate --task T|all --seeds 3 --out DIR`: fine-tune per seed, compare, write results.

``--ratings FILE`` evaluates a user's own rated outputs the same way (transfer rows between the
datasets its records name, ``evaluator.finetune.transfer.transfers_of``).

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

from evaluator.cli import CommandError, check_device
from evaluator.cli.fit_inputs import (
    CONFIG_DIR,
    RATINGS_HELP,
    add_input_arguments,
    add_scale_arguments,
    cache_option,
    check_given_paths,
    config_file,
    load_settings,
    prepare,
    ratings_of,
    with_paths,
)
from evaluator.tasks import TASKS, Task, as_task, missing_data_file
from mismatch_core.atomic import is_within, output_problem
from mismatch_core.checkpoint_files import CONFIG_FILE, export_problem, replaces_base_problem


def add_arguments(parser: argparse.ArgumentParser) -> None:
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--task", action="append", help=f"'all' or one of {', '.join(TASKS)}; repeatable"
    )
    what.add_argument("--ratings", metavar="FILE", help=RATINGS_HELP)
    add_scale_arguments(parser)
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
        "--config-dir",
        default=None,
        help=f"holds <task>.yaml fit numbers (ratings.yaml for --ratings; default {CONFIG_DIR})",
    )
    parser.add_argument(
        "--config",
        default=None,
        help="with --ratings: the fit numbers (default: ratings.yaml of --config-dir; "
        "configs/finetune/ratings_source.yaml also reads each output's src)",
    )
    parser.add_argument(
        "--no-transfer",
        action="store_true",
        help="skip the transfer rows (fit on one dataset of a task, test on another)",
    )
    parser.add_argument(
        "--no-ablations",
        action="store_true",
        help="skip the ablation fits (no_pretraining, no_metrics, all_layers: three of the four "
        "fits per seed); their columns read —",
    )


def _named(option: str, problem: str | None) -> str | None:
    """The problem with an option's path, prefixed with the option, or None."""
    return problem and f"{option}: {problem}"


def run(args: argparse.Namespace) -> int:
    check_given_paths(args)
    ratings = ratings_of(args, measured=True)
    by_name: dict[str, str | Task]  # what each task's fit is prepared from: a name or a Task
    if ratings is not None:
        by_name = {ratings.task.name: ratings.task}
    else:
        names = list(TASKS) if "all" in args.task else list(dict.fromkeys(args.task))
        unknown = [t for t in names if t not in TASKS]
        if unknown:
            raise CommandError(
                f"unknown task(s) {', '.join(unknown)}; known: all, {', '.join(TASKS)}"
            )
        by_name = {name: name for name in names}
    if args.seeds < 1:
        raise CommandError("--seeds must be at least 1")
    tasks = list(by_name)
    if args.config is not None and ratings is None:
        raise CommandError("--config names the recipe of --ratings; --config-dir the tasks'")
    if args.config is not None and args.config_dir is not None:  # --config-dir went unread
        raise CommandError("--config names the recipe itself; leave out --config-dir")
    config_dir = CONFIG_DIR if args.config_dir is None else args.config_dir
    configs = {name: config_file(t, args.config, config_dir) for name, t in by_name.items()}
    settings = {t: with_paths(load_settings(by_name[t], configs[t]), args) for t in tasks}
    check_device(args.device)
    problems = [_named("--out", output_problem(Path(args.out), "directory"))]
    if (Path(args.out) / CONFIG_FILE).is_file():  # results there would block its next export
        problems.append(f"--out {args.out} is a checkpoint folder; write the results elsewhere")
    problems += [
        _named(f"{cache_option(args)} of {task}", output_problem(Path(s.cache_dir), "directory"))
        for task, s in settings.items()
    ]
    if args.export_dir is not None:
        for task, task_settings in settings.items():
            target = Path(args.export_dir) / f"mismatch-{task}"
            problems += [
                export_problem(target),
                replaces_base_problem(target, args.checkpoint or task_settings.checkpoint),
                f"--out {args.out} is inside {target}, a checkpoint this run writes"
                if is_within(Path(args.out), target)
                else None,
                f"{cache_option(args)} {task_settings.cache_dir} is inside {target}, a "
                "checkpoint this run writes"
                if is_within(Path(task_settings.cache_dir), target)
                else None,
            ]
    for task, task_settings in settings.items():
        missing = missing_data_file(as_task(by_name[task]), task_settings.data_root)
        problems.append(f"{missing}: no such file (task {task})" if missing else None)
    if ratings is not None:
        problems.append(ratings.source_problem(bool(settings[ratings.task.name].source_features)))
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
    if ratings is not None:
        print(ratings.describe(bool(settings[ratings.task.name].source_features)), flush=True)
    for task in tasks:
        start = time.time()
        task_settings = settings[task]
        checkpoint = args.checkpoint or task_settings.checkpoint
        prepared = prepare(
            by_name[task],
            checkpoint,
            task_settings,
            configs[task],
            checkpoint_from_config=args.checkpoint is None,
            device=args.device,
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
            ablations=not args.no_ablations,
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
