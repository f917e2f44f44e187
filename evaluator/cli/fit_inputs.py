"""What `mismatch finetune` and `mismatch evaluate` share: their input options, the fit config
each task reads, the task of a user's --ratings, and the prepared task data, with the user
errors of each as CommandError."""

from __future__ import annotations

import argparse
import math
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from evaluator.cli import CommandError
from evaluator.tasks import TASKS, RatingsFile, Task, as_task, read_ratings
from mismatch_core.errors import CheckpointError, ConfigError, DataError
from mismatch_core.resources import local_path

if TYPE_CHECKING:
    from evaluator.finetune.config import FitSettings
    from evaluator.finetune.datamodule import PreparedTask

# The fitting modules load Lightning (seconds): they are imported where a command needs them,
# after its arguments are checked, so that --help and a misspelt option answer at once.


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    """What `mismatch finetune` and `mismatch evaluate` read: base checkpoint, cache, data."""
    parser.add_argument(
        "--checkpoint",
        default=None,
        help="pretrained base, a folder or Hub id (default: the config's data.checkpoint)",
    )
    parser.add_argument(
        "--cache-dir",
        default=None,
        help="feature/embedding cache (default: the config's data.cache_dir)",
    )
    parser.add_argument(
        "--data-root",
        default=None,
        help="the shipped tasks' human data folder (default: the config's data.data_root; null "
        "there: the shared data/human)",
    )
    parser.add_argument(
        "--device",
        default="cpu",
        help="where the encoder pass of the features the cache lacks runs: cpu (default) or "
        "cuda; the rating head fits on the CPU",
    )


CONFIG_DIR = "configs/finetune"  # <task>.yaml for each shipped task
RATINGS_CONFIG = f"{CONFIG_DIR}/ratings.yaml"  # the recipe for a user's own ratings


RATINGS_HELP = (  # --ratings of finetune and evaluate
    "your own rated outputs instead of a shipped task: JSONL(.gz), one object per line, "
    '{"ref": str | [str], "gen": str, "scores": {criterion: number}, "src"?, "group"?, "id"?}; '
    "group: the outputs of one item, kept on one side of a split (default: src, else the first "
    f"ref); fitted with {RATINGS_CONFIG} unless --config"
)


def add_scale_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that describe the task of --ratings."""
    parser.add_argument(
        "--scale",
        action="append",
        default=[],
        metavar="CRITERION=LOW:HIGH",
        help="with --ratings: a criterion's human scale, e.g. overall=1:5 (repeatable; "
        "default: the lowest to the highest score in the file)",
    )
    parser.add_argument(
        "--name",
        default=None,
        help="with --ratings: the task's name in the checkpoint and results (default: the "
        "file name without .jsonl, .json, .jsonl.gz or .json.gz)",
    )


def parse_scales(given: list[str]) -> dict[str, tuple[float, float]]:
    """--scale CRITERION=LOW:HIGH values, each checked."""
    scales: dict[str, tuple[float, float]] = {}
    for value in given:
        key, _, bounds = value.partition("=")
        low, _, high = bounds.partition(":")
        try:
            scale = (float(low), float(high))
        except ValueError:
            scale = (math.nan, math.nan)
        if not all(map(math.isfinite, scale)):
            raise CommandError(
                f"--scale {value!r}: give CRITERION=LOW:HIGH with two finite numbers, e.g. "
                "overall=1:5"
            )
        if not key or key in scales:
            problem = "names no criterion" if not key else f"gives {key!r} a second time"
            raise CommandError(f"--scale {value!r} {problem}")
        if not scale[0] < scale[1]:
            raise CommandError(f"--scale {value!r}: LOW must be below HIGH")
        scales[key] = scale
    return scales


def cache_option(args: argparse.Namespace) -> str:
    """Where the feature cache folder was named: the option, or the config's key."""
    return "--cache-dir" if args.cache_dir else "data.cache_dir"


def ratings_of(args: argparse.Namespace, measured: bool = False) -> RatingsFile | None:
    """The task of --ratings (with --scale and --name), or None without --ratings;
    ``measured``: see ``read_ratings``."""
    if args.ratings is None:
        if args.scale or args.name is not None:
            raise CommandError("--scale and --name describe --ratings; give them with it")
        return None
    if args.data_root is not None:
        raise CommandError("--data-root names the shipped tasks' data; --ratings is the data")
    return read_ratings(args.ratings, args.name, parse_scales(args.scale), measured)


def config_file(task: str | Task, config: str | None, config_dir: str = CONFIG_DIR) -> str:
    """The config a task's fit reads: ``config``, or ``config_dir``'s config of the task (the
    ratings recipe for a user's task); both found as checkpoints are (the working folder, then
    the repository), so ``--config configs/finetune/ratings_source.yaml`` works anywhere."""
    if config:
        return str(local_path(config) or config)
    folder = local_path(config_dir) or Path(config_dir)
    return str(folder / (f"{task}.yaml" if isinstance(task, str) else "ratings.yaml"))


def check_given_paths(args: argparse.Namespace) -> None:
    """An option given an empty value is a mistake, not a request for the config's value."""
    for option in (
        "checkpoint",
        "ratings",
        "cache_dir",
        "data_root",
        "out",
        "export_dir",
        "config",
        "config_dir",
    ):
        value = getattr(args, option, None)
        if value is not None and not str(value).strip():
            raise CommandError(f"--{option.replace('_', '-')} is empty; give a path")


def with_paths(settings: FitSettings, args: argparse.Namespace) -> FitSettings:
    """``settings`` with --cache-dir and --data-root, where given, over the config's paths."""
    return replace(
        settings,
        cache_dir=args.cache_dir or settings.cache_dir,
        data_root=args.data_root or settings.data_root,
    )


def load_settings(task: str | Task, config: str) -> FitSettings:
    """The fit numbers of ``config`` (``config_file``'s path for the task); an unknown task, a
    missing file, an unknown key or a bad setting is a user error."""
    if isinstance(task, str) and task not in TASKS:
        raise CommandError(f"unknown task {task!r}; known: {', '.join(TASKS)}")
    from evaluator.finetune.config import read_fit_config

    return read_fit_config(config, as_task(task).name)


def prepare(
    task: str | Task,
    checkpoint: str,
    settings: FitSettings,
    config: str | None = None,
    checkpoint_from_config: bool = False,
    device: str = "cpu",
) -> PreparedTask:
    """prepare_task (with the cache, data and contrast copies of ``settings``, the encoder pass
    on ``device``) with its user errors (unknown task, bad checkpoint or data) as CommandError.
    ``config``: the file ``settings`` came from, named in the errors of what it set: a dataset
    it names, and the checkpoint when ``checkpoint_from_config`` (no --checkpoint)."""
    if isinstance(task, str) and task not in TASKS:
        raise CommandError(f"unknown task {task!r}; known: {', '.join(TASKS)}")
    from evaluator.finetune.datamodule import prepare_task

    try:
        return prepare_task(
            task,
            checkpoint,
            settings.cache_dir,
            settings.data_root,
            progress=True,
            contrast_size=settings.contrast_size,
            contrast_depth=settings.contrast_depth,
            contrast_class_weights=settings.contrast_class_weights,
            reference_triples_size=settings.reference_triples_size,
            paraphrase_triples_size=settings.paraphrase_triples_size,
            train_datasets=settings.train_datasets,
            source_features=settings.source_features,
            device=device,
        )
    except ConfigError as error:  # a setting prepare_task cannot follow (data.train_datasets)
        raise CommandError(f"{config}: {error}" if config else str(error)) from None
    except CheckpointError as error:
        if config is not None and checkpoint_from_config:
            raise CommandError(f"{config}: data.checkpoint: {error}") from None
        raise CommandError(str(error)) from None
    except (DataError, ValueError) as error:
        raise CommandError(str(error)) from None
