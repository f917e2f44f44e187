"""The one reader of ``configs/finetune/<task>.yaml``: the schema of the fine-tuning LightningCLI.

``scripts/finetune.py fit`` (``evaluator.finetune.lightning_cli.FinetuneCLI``), ``mismatch
finetune`` and ``mismatch evaluate`` read a fine-tuning config through the same jsonargparse
schema: the LightningCLI's ``fit`` arguments (seed_everything, trainer, model, data,
ckpt_path) plus what ``add_fit_arguments`` adds to them. A key one entry point accepts, the
others accept; an unknown key or a value of the wrong type fails in all of them, naming the
key. ``mismatch finetune`` and ``mismatch evaluate`` run the fit recipe and read only its keys
(``SETTING_KEYS``): one set to another value that they do not read is named in a warning. ``FitSettings`` holds the numbers of the fit recipe (``evaluator.finetune.train.fit``)
taken from a parsed config, and checks them the same way for every entry point.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import lightning as L
from jsonargparse import ActionConfigFile, Namespace
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from lightning.pytorch.cli import LightningArgumentParser, LightningCLI

from evaluator.features.registry import check_source_columns
from evaluator.finetune.contrast import check_class_weights
from evaluator.finetune.data import DEFAULT_CACHE_DIR
from evaluator.finetune.datamodule import SEED, RatingDataModule
from evaluator.finetune.module import RatingModule
from mismatch_core.config import (
    TRAINING_SECTIONS,
    check_at_least_one,
    check_not_negative,
    check_seed,
    read_config,
)
from mismatch_core.errors import ConfigError, MismatchWarning
from mismatch_core.resources import DEFAULT_CHECKPOINT


class ConfigWarning(MismatchWarning):
    """A fine-tuning config sets keys the command reading it does not read."""


@dataclass(frozen=True)
class FitSettings:
    """The fit recipe's numbers; the defaults are those of the schema (``fit_parser``)."""

    max_steps: int = 600
    val_check_interval: int = 50
    patience: int = 4
    batch_size: int = 64
    val_fraction: float = 0.1
    lr: float = 1e-3
    weight_decay: float = 0.01
    ridge_anchor: float = 0.0  # pull of the metric map toward its ridge start (regression)
    contrast_size: int = 0
    contrast_depth: int = 1
    contrast_class_weights: dict[str, float] = field(default_factory=dict)
    reference_triples_size: int = 0
    paraphrase_triples_size: int = 0  # SICK TRAIN paraphrases above error copies of their reference
    train_datasets: tuple[str, ...] = ()  # the datasets trained on (empty: all)
    # features the ratings also read against each record's source (data.source_features)
    source_features: tuple[str, ...] = ()
    contrast_weight: float = 0.0
    contrast_margin: float = 0.05
    reference_margin: float = 0.2
    freeze_mismatch: bool = True
    ratings_read_all_references: bool = False
    rating_mix: bool = False
    single_metric_anchor: bool = False  # the mix may anchor on the best single metric's line
    checkpoint: str = DEFAULT_CHECKPOINT  # the pretrained base (data.checkpoint)
    # seed_everything: the fit on every record that ships (`mismatch finetune`, `mismatch
    # evaluate --export-dir`); evaluate's seeded splits fit with their own seeds 0..N-1
    seed: int = SEED
    # where the data is, not how the fit goes: left out of to_dict (the model card's record),
    # so that a checkpoint's files do not depend on the machine it was fitted on
    cache_dir: str = field(default=str(DEFAULT_CACHE_DIR), metadata={"recorded": False})
    data_root: str | None = field(default=None, metadata={"recorded": False})

    def __post_init__(self) -> None:
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise ValueError(f"seed_everything must be a whole number, got {self.seed!r}")
        check_seed(self.seed, "seed_everything")
        steps = {
            "trainer.max_steps": self.max_steps,
            "trainer.val_check_interval": self.val_check_interval,
        }
        for name, steps_value in steps.items():  # the Trainer also takes None, floats, -1
            if not isinstance(steps_value, int) or isinstance(steps_value, bool):
                raise ValueError(f"{name} must be a whole number of steps, got {steps_value!r}")
        positive: dict[str, float] = {
            **steps,
            "early_stopping.patience": self.patience,
            "data.batch_size": self.batch_size,
            "model.lr": self.lr,
        }
        for name, value in positive.items():
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a finite number above 0, got {value}")
        if self.val_check_interval > self.max_steps:
            raise ValueError(
                f"trainer.val_check_interval {self.val_check_interval} is above trainer.max_steps "
                f"{self.max_steps}: no validation would choose the weights"
            )
        check_not_negative(
            {
                "model.weight_decay": self.weight_decay,
                "model.ridge_anchor": self.ridge_anchor,
                "data.contrast_size": self.contrast_size,
                "data.reference_triples_size": self.reference_triples_size,
                "data.paraphrase_triples_size": self.paraphrase_triples_size,
                "model.contrast_weight": self.contrast_weight,
                "model.contrast_margin": self.contrast_margin,
                "model.reference_margin": self.reference_margin,
            }
        )
        if not 0 < self.val_fraction < 1:
            raise ValueError(f"data.val_fraction must be between 0 and 1, got {self.val_fraction}")
        copies = self.contrast_size + self.reference_triples_size + self.paraphrase_triples_size
        if (copies > 0) != (self.contrast_weight > 0):
            raise ValueError(
                "contrast copies need model.contrast_weight and data.contrast_size, "
                "data.reference_triples_size or data.paraphrase_triples_size above 0 (got "
                f"{self.contrast_weight}, {self.contrast_size}, {self.reference_triples_size}, "
                f"{self.paraphrase_triples_size})"
            )
        if self.paraphrase_triples_size == 1:  # a triple is a paraphrase and an error copy
            raise ValueError("data.paraphrase_triples_size must be 0 or at least 2, got 1")
        check_at_least_one({"data.contrast_depth": self.contrast_depth})
        check_class_weights(self.contrast_class_weights)
        try:
            check_source_columns(self.source_features)
        except ValueError as error:
            raise ValueError(f"data.source_features: {error}") from None
        if self.single_metric_anchor and not self.rating_mix:
            raise ValueError(
                "model.single_metric_anchor chooses an anchor of the rating mix; it needs model.rating_mix"
            )
        if not self.checkpoint.strip():
            raise ValueError("data.checkpoint must name a base checkpoint (a folder or Hub id)")

    def to_dict(self) -> dict[str, Any]:
        """The recipe as recorded with a fitted checkpoint (no paths on this machine)."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if f.metadata.get("recorded", True)
        }


def trainer_kwargs(settings: FitSettings) -> dict[str, Any]:
    """The Trainer arguments of the fit recipe (with FitSettings(), the schema's defaults)."""
    return {
        "max_steps": settings.max_steps,
        "max_epochs": -1,
        "val_check_interval": settings.val_check_interval,
        "check_val_every_n_epoch": None,
        "accelerator": "cpu",
        "devices": 1,
        "enable_model_summary": False,
    }


def add_fit_arguments(parser: LightningArgumentParser) -> None:
    """What the fine-tuning schema adds to the LightningCLI's: the best-weights and early
    stopping callbacks, the export folder, and the model's task and base taken from data."""
    parser.add_lightning_class_args(ModelCheckpoint, "checkpoint")
    parser.set_defaults(
        {"checkpoint.monitor": "val_loss", "checkpoint.mode": "min", "checkpoint.save_top_k": 1}
    )
    parser.add_lightning_class_args(EarlyStopping, "early_stopping")
    parser.set_defaults(
        {"early_stopping.monitor": "val_loss", "early_stopping.patience": FitSettings.patience}
    )
    parser.add_argument(
        "--export_dir", type=str | None, default=None, help="save_pretrained target"
    )
    parser.link_arguments("data.task", "model.task")
    parser.link_arguments("data.ratings", "model.ratings")
    parser.link_arguments("data.scales", "model.scales")
    parser.link_arguments("data.checkpoint", "model.checkpoint")
    parser.link_arguments("data.source_features", "model.source_features")


def fit_parser() -> LightningArgumentParser:
    """The parser of ``scripts/finetune.py fit``, built the way LightningCLI builds its fit
    subcommand for FinetuneCLI; errors raise ArgumentError instead of exiting."""
    parser = LightningArgumentParser(exit_on_error=False)
    parser.add_argument("-c", "--config", action=ActionConfigFile, help="a YAML config")
    parser.add_argument("--seed_everything", type=bool | int, default=SEED)
    parser.add_lightning_class_args(L.Trainer, "trainer")
    parser.set_defaults({f"trainer.{k}": v for k, v in trainer_kwargs(FitSettings()).items()})
    parser.add_lightning_class_args(RatingModule, "model")
    parser.add_lightning_class_args(RatingDataModule, "data")
    add_fit_arguments(parser)
    parser.add_method_arguments(L.Trainer, "fit", skip=set(LightningCLI.subcommands()["fit"]))
    return parser


# FitSettings field -> the config key it is read from
SETTING_KEYS: dict[str, str] = {
    "max_steps": "trainer.max_steps",
    "val_check_interval": "trainer.val_check_interval",
    "patience": "early_stopping.patience",
    "batch_size": "data.batch_size",
    "val_fraction": "data.val_fraction",
    "lr": "model.lr",
    "weight_decay": "model.weight_decay",
    "ridge_anchor": "model.ridge_anchor",
    "contrast_size": "data.contrast_size",
    "contrast_depth": "data.contrast_depth",
    "contrast_class_weights": "data.contrast_class_weights",
    "reference_triples_size": "data.reference_triples_size",
    "paraphrase_triples_size": "data.paraphrase_triples_size",
    "train_datasets": "data.train_datasets",
    "source_features": "data.source_features",
    "contrast_weight": "model.contrast_weight",
    "contrast_margin": "model.contrast_margin",
    "reference_margin": "model.reference_margin",
    "freeze_mismatch": "model.freeze_mismatch",
    "ratings_read_all_references": "model.ratings_read_all_references",
    "rating_mix": "model.rating_mix",
    "single_metric_anchor": "model.single_metric_anchor",
    "checkpoint": "data.checkpoint",
    "seed": "seed_everything",
    "cache_dir": "data.cache_dir",
    "data_root": "data.data_root",
}
# keys the fit recipe takes from elsewhere: the command's own options (the export folder, the
# task, ratings and scales), the model keys linked to data's, logging, the file's own path
TAKEN_ELSEWHERE = frozenset(
    {
        "config",
        "export_dir",
        "data.task",
        "data.ratings",
        "data.scales",
        "model.task",
        "model.ratings",
        "model.scales",
        "model.checkpoint",
        "model.source_features",
        "trainer.log_every_n_steps",
    }
)


def fit_settings(config: Namespace) -> FitSettings:
    """The fit numbers of a parsed config (its sections checked by ``settings_problem`` in the
    file); ValueError names the key of a bad one."""
    values = {name: config[key] for name, key in SETTING_KEYS.items()}
    values["contrast_class_weights"] = values["contrast_class_weights"] or {}
    values["train_datasets"] = tuple(values["train_datasets"] or ())
    values["source_features"] = tuple(values["source_features"] or ())
    return FitSettings(**values)


def unread_keys(config: Namespace, defaults: Namespace) -> list[str]:
    """The keys a config sets away from their defaults that the fit recipe (``mismatch
    finetune``, ``mismatch evaluate``) does not read, though scripts/finetune.py does: its
    Trainer, checkpoint and early-stopping settings but the patience, the model's own
    arguments; and a data.seed other than seed_everything, which splits the groups here
    (scripts/finetune.py splits by data.seed, by default seed_everything too)."""
    read = {*SETTING_KEYS.values(), *TAKEN_ELSEWHERE, "data.seed"}
    unread = [k for k in config.keys() if k not in read and config[k] != defaults.get(k)]
    if config["data.seed"] not in (None, config["seed_everything"]):
        unread.append("data.seed")
    return sorted(unread)


def read_fit_config(path: str | Path, task: str | None = None) -> FitSettings:
    """The fit numbers of a fine-tuning config. ``task`` stands in for a missing data.task and
    must match a given one. ConfigError names the file and the key."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"fine-tuning config {path} is a directory; name a YAML file")
    if not path.is_file():
        raise ConfigError(f"fine-tuning config {path} does not exist")
    parser = fit_parser()
    if task is not None:
        parser.set_defaults({"data.task": task})

    def settings(config: Namespace) -> FitSettings:
        if task is not None and config.data.task != task:
            raise ValueError(f"data.task is {config.data.task!r}, not {task!r}")
        given = [f"data.{key}" for key in ("ratings", "scales") if getattr(config.data, key)]
        if given:
            raise ValueError(
                f"{' and '.join(given)}: read by scripts/finetune.py; here give --ratings FILE "
                "and --scale"
            )
        unread = unread_keys(config, parser.get_defaults())
        if unread:
            warnings.warn(
                f"{path}: {', '.join(unread)} not read: this command runs the fit recipe on one "
                "CPU process, seeded by seed_everything (or --seed); scripts/finetune.py "
                "reads them",
                ConfigWarning,
                stacklevel=3,
            )
        return fit_settings(config)

    return read_config(path, parser.parse_path, settings, TRAINING_SECTIONS)
