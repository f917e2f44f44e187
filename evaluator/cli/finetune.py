"""`mismatch finetune --task T | --ratings FILE`.

Like the LightningCLI of `scripts/finetune.py fit --config ...`
(``evaluator.finetune.lightning_cli``), it fine-tunes the base checkpoint on every record of a
task (a validation slice split off by group for early stopping) with the numbers of
``configs/finetune/<task>.yaml``, read through one schema (``evaluator.finetune.config``), and
exports the best weights to the folder named by ``--out`` (the LightningCLI: the config's
``export_dir``); no default, so the shipped ``checkpoints/mismatch-<task>`` is replaced only
when asked. ``--ratings`` fits a user's own rated outputs instead of a shipped task, with the
recipe of ``configs/finetune/ratings.yaml``.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from evaluator.cli import CommandError, check_device
from evaluator.cli.fit_inputs import (
    RATINGS_CONFIG,
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
from evaluator.tasks import TASKS
from mismatch_core.atomic import is_within, output_problem
from mismatch_core.checkpoint_files import export_problem, replaces_base_problem
from mismatch_core.errors import DataError

# The fitting modules load Lightning (seconds): they are imported where a command needs them,
# after its arguments are checked, so that --help and a misspelt option answer at once.


def add_arguments(parser: argparse.ArgumentParser) -> None:
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--task", help=f"one of {', '.join(TASKS)}")
    what.add_argument("--ratings", metavar="FILE", help=RATINGS_HELP)
    add_scale_arguments(parser)
    add_input_arguments(parser)
    parser.add_argument(
        "--out",
        required=True,
        help="export directory, e.g. checkpoints/mismatch-<task> to replace the shipped one",
    )
    parser.add_argument(
        "--config",
        default=None,
        help=f"fit numbers (default configs/finetune/<task>.yaml; with --ratings {RATINGS_CONFIG}); "
        "this command fits on one CPU process with the recipe's own callbacks: a key it does not "
        "read (other Trainer or callback settings, read by scripts/finetune.py) is named in a "
        "warning",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="fit seed (default: the config's seed_everything, the seed of the shipped checkpoint)",
    )


def run(args: argparse.Namespace) -> int:
    check_given_paths(args)
    ratings = ratings_of(args)
    task = args.task if ratings is None else ratings.task
    config = config_file(task, args.config)
    settings = with_paths(load_settings(task, config), args)
    check_device(args.device)
    problem = export_problem(Path(args.out))
    if problem:  # checked before the fit, not after it
        raise CommandError(f"--out: {problem}")
    problem = output_problem(Path(settings.cache_dir), "directory")
    if not problem and is_within(Path(settings.cache_dir), Path(args.out)):
        problem = f"{settings.cache_dir} is inside --out {args.out}, the checkpoint this run writes"
    if problem:
        raise CommandError(f"{cache_option(args)}: {problem}")
    if args.seed is not None:
        try:
            settings = replace(settings, seed=args.seed)
        except ValueError as error:
            raise CommandError(f"--seed: {error}") from None
    import numpy as np

    from evaluator.finetune.train import export, fit, recorded_settings
    from evaluator.signature import folder_signature

    checkpoint = args.checkpoint or settings.checkpoint
    problem = replaces_base_problem(args.out, checkpoint)
    if problem:
        raise CommandError(f"--out {problem}")
    if ratings is not None:
        problem = ratings.source_problem(bool(settings.source_features))
        if problem:
            raise DataError(problem)
        print(ratings.describe(bool(settings.source_features)), flush=True)
    prepared = prepare(
        task,
        checkpoint,
        settings,
        config,
        checkpoint_from_config=args.checkpoint is None,
        device=args.device,
    )
    module, data, val_loss = fit(
        prepared, np.arange(len(prepared.records)), settings, settings.seed, checkpoint=checkpoint
    )
    out = export(
        module,
        data,
        args.out,
        training={"fit settings": json.dumps(recorded_settings(settings, checkpoint))},
        metrics={"val_loss": val_loss},
    )
    print(f"{prepared.task.name}: val loss {val_loss:.4f}; exported to {out}")
    print(f"signature {folder_signature(out)}")
    return 0
