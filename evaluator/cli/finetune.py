"""`mismatch finetune --task T` and the LightningCLI behind `scripts/finetune.py fit --config ...`.

Both fine-tune the base checkpoint on every record of a task (a validation slice split off by
group for early stopping) with the numbers of ``configs/finetune/<task>.yaml``, read through one
schema (``evaluator.finetune.config``), and export the best weights to the folder named by
``--out`` (the LightningCLI: the config's ``export_dir``); no default, so the shipped
``checkpoints/mismatch-<task>`` is replaced only when asked.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.cli import ArgsType, LightningArgumentParser, LightningCLI

from evaluator.cli import CommandError
from evaluator.finetune.config import (
    SEED,
    FitSettings,
    add_fit_arguments,
    fit_settings,
    read_fit_config,
    trainer_kwargs,
)
from evaluator.finetune.datamodule import RatingDataModule, prepare_task
from evaluator.finetune.module import RatingModule
from evaluator.finetune.train import export, finish_fit, fit
from evaluator.tasks import TASKS
from mismatch_core.atomic import output_problem
from mismatch_core.checkpoint_files import export_problem
from mismatch_core.config import config_file_problem
from mismatch_core.errors import CheckpointError, ConfigError, DataError


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
        help="human data folder (default: the config's data.data_root; null there: the shared "
        "data/human); the config's trainer.accelerator/devices are read by scripts/finetune.py "
        "only: this command fits on one CPU process",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--task", required=True, help=f"one of {', '.join(TASKS)}")
    add_input_arguments(parser)
    parser.add_argument(
        "--out",
        required=True,
        help="export directory, e.g. checkpoints/mismatch-<task> to replace the shipped one",
    )
    parser.add_argument(
        "--config", default=None, help="fit numbers (default configs/finetune/<task>.yaml)"
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="fit seed (default: the config's seed_everything, the seed of the shipped checkpoint)",
    )


def config_file(task: str, config: str | None) -> str:
    """The config a task's fit reads: ``config``, or the task's shipped one."""
    return config or f"configs/finetune/{task}.yaml"


def check_given_paths(args: argparse.Namespace) -> None:
    """An option given an empty value is a mistake, not a request for the config's value."""
    for option in (
        "checkpoint",
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


def load_settings(task: str, config: str | None) -> FitSettings:
    """The fit numbers of a task's config; an unknown task, a missing file, an unknown key or
    a bad setting is a user error."""
    if task not in TASKS:
        raise CommandError(f"unknown task {task!r}; known: {', '.join(TASKS)}")
    return read_fit_config(config_file(task, config), task)


def prepare(
    task: str,
    checkpoint: str,
    settings: FitSettings,
    config: str | None = None,
    checkpoint_from_config: bool = False,
):
    """prepare_task (with the cache, data and contrast copies of ``settings``) with its user
    errors (unknown task, bad checkpoint or data) as CommandError. ``config``: the file
    ``settings`` came from, named in the errors of what it set: a dataset it names, and the
    checkpoint when ``checkpoint_from_config`` (no --checkpoint)."""
    if task not in TASKS:
        raise CommandError(f"unknown task {task!r}; known: {', '.join(TASKS)}")
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
        )
    except ConfigError as error:  # a setting prepare_task cannot follow (data.train_datasets)
        raise CommandError(f"{config}: {error}" if config else str(error)) from None
    except CheckpointError as error:
        if config is not None and checkpoint_from_config:
            raise CommandError(f"{config}: data.checkpoint: {error}") from None
        raise CommandError(str(error)) from None
    except (DataError, ValueError) as error:
        raise CommandError(str(error)) from None


def run(args: argparse.Namespace) -> int:
    check_given_paths(args)
    config = config_file(args.task, args.config)
    settings = with_paths(load_settings(args.task, config), args)
    problem = export_problem(Path(args.out))
    if problem:  # checked before the fit, not after it
        raise CommandError(f"--out: {problem}")
    problem = output_problem(Path(settings.cache_dir), "directory")
    if problem:
        raise CommandError(f"--cache-dir: {problem}")
    if args.seed is not None:
        try:
            settings = replace(settings, seed=args.seed)
        except ValueError as error:
            raise CommandError(f"--seed: {error}") from None
    checkpoint = args.checkpoint or settings.checkpoint
    prepared = prepare(
        args.task, checkpoint, settings, config, checkpoint_from_config=args.checkpoint is None
    )
    module, data, val_loss = fit(
        prepared, np.arange(len(prepared.records)), settings, settings.seed, checkpoint=checkpoint
    )
    out = export(
        module,
        data,
        args.out,
        training={"fit settings": json.dumps(settings.to_dict())},
        metrics={"val_loss": val_loss},
    )
    print(f"{args.task}: val loss {val_loss:.4f}; exported to {out}")
    return 0


class FinetuneCLI(LightningCLI):
    """LightningCLI for RatingModule + RatingDataModule with the schema of
    ``evaluator.finetune.config``; checks the fit numbers as ``mismatch finetune`` does and
    exports the best weights after fit. No optimizer arguments: RatingModule makes its own
    from model.lr and model.weight_decay, which the other entry points read too."""

    def __init__(self, args: ArgsType = None) -> None:
        super().__init__(
            RatingModule,
            RatingDataModule,
            save_config_kwargs={"overwrite": True},
            trainer_defaults=trainer_kwargs(FitSettings()),
            seed_everything_default=SEED,
            args=args,
            auto_configure_optimizers=False,
        )

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        add_fit_arguments(parser)

    def parse_arguments(self, parser: LightningArgumentParser, args) -> None:
        """Name a --config file that holds no settings, or gives a section as something other
        than a mapping, before the parser reads it (it says only "Unexpected config: ..." or
        that a key of the section is missing)."""
        if args is None or isinstance(args, list):
            problem = config_file_problem(sys.argv[1:] if args is None else args)
            if problem:
                parser.error(problem)
        super().parse_arguments(parser, args)

    def before_instantiate_classes(self) -> None:
        if self.subcommand == "fit":
            try:
                fit_settings(self.config["fit"])
            except ValueError as error:
                self.parser.error(str(error))

    def after_fit(self) -> None:
        callback = self.trainer.checkpoint_callback
        best = callback.best_model_path if isinstance(callback, ModelCheckpoint) else ""
        finish_fit(self.model, self.datamodule, best)
        export_dir = self._get(self.config, "export_dir")
        if export_dir and self.trainer.is_global_zero:  # under DDP, one process exports
            out = export(
                self.model.eval(),
                self.datamodule,
                Path(export_dir),
                training={"best checkpoint": Path(best).name if best else "last step"},
            )
            print(f"exported to {out}")


def main(args: list[str] | None = None) -> None:
    """Run the CLI; ``args`` None reads sys.argv (e.g. ``fit --config configs/finetune/dialogue.yaml``)."""
    torch.set_flush_denormal(True)
    FinetuneCLI(args)
