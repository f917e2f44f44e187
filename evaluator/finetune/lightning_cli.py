"""The fine-tuning LightningCLI behind ``scripts/finetune.py fit --config
configs/finetune/<task>.yaml`` (or ``ratings.yaml --data.ratings FILE``: your own ratings).

Kept apart from the ``mismatch finetune`` command (``evaluator.cli.finetune``) so that the
command's help and argument checks do not wait for Lightning to load, as the pretraining
LightningCLI sits in ``evaluator.training.pretrain``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import yaml
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.cli import ArgsType, LightningArgumentParser, LightningCLI

from evaluator.finetune.config import (
    SEED,
    FitSettings,
    add_fit_arguments,
    fit_settings,
    trainer_kwargs,
)
from evaluator.finetune.datamodule import RatingDataModule
from evaluator.finetune.module import RatingModule
from evaluator.finetune.train import export, finish_fit, recorded_settings
from evaluator.lightning_interrupt import InterruptNoted, interrupt_kept
from evaluator.signature import folder_signature
from mismatch_core.atomic import is_within, output_problem
from mismatch_core.checkpoint_files import export_problem, replaces_base_problem
from mismatch_core.config import config_file_problem, config_values, monitor_problem
from mismatch_core.errors import DataError

# what RatingModule logs that a callback can monitor at a validation (and train_contrast_loss
# with model.contrast_weight above 0)
LOGGED_METRICS = ("val_loss", "train_loss")


class FinetuneCLI(LightningCLI):
    """LightningCLI for RatingModule + RatingDataModule with the schema of
    ``evaluator.finetune.config``; checks the fit numbers as ``mismatch finetune`` does and
    exports the best weights after fit. No optimizer arguments: RatingModule makes its own
    from model.lr and model.weight_decay, which the other entry points read too."""

    def __init__(self, args: ArgsType, noted: InterruptNoted) -> None:
        super().__init__(
            RatingModule,
            RatingDataModule,
            save_config_kwargs={"overwrite": True},
            trainer_defaults=trainer_kwargs(FitSettings()) | {"callbacks": [noted]},
            seed_everything_default=SEED,
            args=args,
            auto_configure_optimizers=False,
        )

    @staticmethod
    def subcommands() -> dict[str, set[str]]:
        """fit and validate: the modules define no test or predict steps (those were Lightning
        tracebacks)."""
        every = LightningCLI.subcommands()
        return {name: every[name] for name in ("fit", "validate")}

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        add_fit_arguments(parser)

    def parse_arguments(self, parser: LightningArgumentParser, args) -> None:
        """Name a --config file that holds no settings, or gives a section as something other
        than a mapping, or names no task, before the parser reads it (it says only "Unexpected
        config: ...", or that a key is missing or "Got value: None")."""
        if args is None or isinstance(args, list):
            given = sys.argv[1:] if args is None else args
            problem = config_file_problem(given) or task_problem(given)
            if problem:
                parser.error(problem)
        super().parse_arguments(parser, args)

    def instantiate_classes(self) -> None:
        """A task or ratings file the model cannot be made for (no task, a bad file, scales
        without a file) is a usage error, as in ``mismatch finetune``, not a traceback."""
        try:
            super().instantiate_classes()
        except DataError as error:
            self.parser.error(str(error))

    def before_instantiate_classes(self) -> None:
        data = self.config[self.subcommand]["data"]
        seed = self.config[self.subcommand]["seed_everything"]  # an int, or False: none
        if data["seed"] is None and not isinstance(seed, bool):
            data["seed"] = seed  # split as mismatch finetune does (fit, and validate on what
            # fit held out); left None, RatingDataModule.seed falls back to SEED
        if self.subcommand == "fit":
            try:
                fit_settings(self.config["fit"])
            except ValueError as error:
                self.parser.error(str(error))
            ranked = self.config["fit"]["model"]["contrast_weight"] > 0
            logged = (*LOGGED_METRICS, *(["train_contrast_loss"] if ranked else []))
            problem = monitor_problem(self.config["fit"], logged)
            if problem:
                self.parser.error(problem)
            export_dir = self.config["fit"].get("export_dir")
            problem = export_dir_problem(export_dir, data["checkpoint"])
            cache_dir = data.get("cache_dir")
            if not problem and cache_dir is not None:  # a traceback when the cache was filled
                problem = output_problem(Path(cache_dir), "directory")
                if not problem and export_dir and is_within(Path(cache_dir), Path(export_dir)):
                    # the export after the fit refused the folder the cache had made
                    problem = (
                        f"{cache_dir} is inside --export_dir {export_dir}, the checkpoint this "
                        "run writes"
                    )
                problem = problem and f"data.cache_dir: {problem}"
            if problem:  # found now, not after the fit
                self.parser.error(problem)

    def after_fit(self) -> None:
        callback = self.trainer.checkpoint_callback
        best = callback.best_model_path if isinstance(callback, ModelCheckpoint) else ""
        finish_fit(self.model, self.datamodule, best)
        export_dir = self._get(self.config, "export_dir")
        if export_dir and self.trainer.is_global_zero:  # under DDP, one process exports
            # the record mismatch finetune writes, and where the best weights came from
            settings = fit_settings(self.config["fit"])
            metrics = None
            if isinstance(callback, ModelCheckpoint) and callback.best_model_score is not None:
                metrics = {str(callback.monitor): float(callback.best_model_score)}
            training = {
                "fit settings": json.dumps(recorded_settings(settings, settings.checkpoint)),
                "best checkpoint": Path(best).name if best else "last step",
            }
            if self.datamodule.seed != settings.seed:  # data.seed split the groups
                training["validation split seed"] = self.datamodule.seed
            out = export(
                self.model.eval(),
                self.datamodule,
                Path(export_dir),
                training=training,
                metrics=metrics,
            )
            print(f"exported to {out}\nsignature {folder_signature(out)}")


def export_dir_problem(export_dir: str | None, checkpoint: str) -> str | None:
    """Why the fit could not export to ``export_dir`` (None: no export), or None."""
    if not export_dir:
        return None
    problem = replaces_base_problem(export_dir, checkpoint)
    if problem:
        return f"--export_dir {problem}"
    problem = export_problem(Path(export_dir))
    return f"--export_dir: {problem}" if problem else None


RATINGS_RECIPES = ("ratings.yaml", "ratings_source.yaml")  # they name no task or file


def task_problem(args: list[str]) -> str | None:
    """A command line that gives neither data.task nor data.ratings, in its config files or as
    an option, named at once (the model's own check would say it only after the parser's
    work). Anything this cannot read for sure (inline YAML, a --data section, a config before
    the subcommand, --help, --print_config, a file that is no YAML mapping) is left to the
    parser: None."""
    if any(arg.startswith(("--data", "-h", "--help", "--print_config")) for arg in args):
        return None
    files = []
    for index, value in config_values(args):
        if index == 0:
            return None  # a config before the subcommand
        try:  # inline YAML is no file (and may be longer than a file name can be)
            settings = yaml.safe_load(Path(value).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            return None
        data = settings.get("data") if isinstance(settings, dict) else None
        if not isinstance(data, dict) or data.get("task") or data.get("ratings"):
            return None
        files.append(Path(value))
    if not files:
        return None
    recipes = [path for path in files if path.name in RATINGS_RECIPES]
    note = f"; {recipes[0]} is a recipe for your own ratings file" if recipes else ""
    return (
        f"no data.task or data.ratings in {', '.join(map(str, files))} or on the command line: "
        f"add --data.task TASK or --data.ratings FILE{note}"
    )


def main(args: list[str] | None = None) -> None:
    """Run the CLI; ``args`` None reads sys.argv (e.g. ``fit --config
    configs/finetune/dialogue.yaml``)."""
    torch.set_flush_denormal(True)
    noted = InterruptNoted()
    with interrupt_kept(noted):
        FinetuneCLI(args, noted)
