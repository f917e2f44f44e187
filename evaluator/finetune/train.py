"""Fit a RatingModule with early stopping and export the result as a task checkpoint.

One fit recipe serves the shipped checkpoints, every seed and ablation of ``mismatch
evaluate`` and ``mismatch finetune``: validation every ``val_check_interval`` steps across
epochs, early stopping on the validation loss, the best weights restored at the end. The
numbers come from ``configs/finetune/<task>.yaml`` (the LightningCLI config), so both entry
points train alike.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field, fields
from pathlib import Path

import lightning as L
import torch
import yaml
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint

from evaluator.finetune.contrast import check_class_weights
from evaluator.finetune.datamodule import PreparedTask, RatingDataModule
from evaluator.finetune.module import RatingModule
from evaluator.hub import save_pretrained
from mismatch_core.resources import DEFAULT_CHECKPOINT


@dataclass(frozen=True)
class FitSettings:
    max_steps: int = 600
    val_check_interval: int = 50
    patience: int = 4
    batch_size: int = 64
    val_fraction: float = 0.1
    lr: float = 1e-3
    weight_decay: float = 0.01
    contrast_size: int = 0
    contrast_depth: int = 1
    contrast_class_weights: dict[str, float] = field(default_factory=dict)
    contrast_weight: float = 0.0
    contrast_margin: float = 0.05
    freeze_mismatch: bool = True
    checkpoint: str = DEFAULT_CHECKPOINT  # the pretrained base (data.checkpoint)

    def __post_init__(self) -> None:
        positive = {
            "trainer.max_steps": self.max_steps,
            "trainer.val_check_interval": self.val_check_interval,
            "early_stopping.patience": self.patience,
            "data.batch_size": self.batch_size,
            "model.lr": self.lr,
        }
        for name, value in positive.items():
            if not value > 0:
                raise ValueError(f"{name} must be above 0 (got {value})")
        not_negative = {
            "model.weight_decay": self.weight_decay,
            "data.contrast_size": self.contrast_size,
            "model.contrast_weight": self.contrast_weight,
            "model.contrast_margin": self.contrast_margin,
        }
        for name, value in not_negative.items():
            if value < 0:
                raise ValueError(f"{name} must not be negative (got {value})")
        if not 0 < self.val_fraction < 1:
            raise ValueError(f"data.val_fraction must be between 0 and 1 (got {self.val_fraction})")
        if (self.contrast_size > 0) != (self.contrast_weight > 0):
            raise ValueError(
                "contrast copies need both data.contrast_size and model.contrast_weight above 0 "
                f"(got {self.contrast_size} and {self.contrast_weight})"
            )
        if self.contrast_depth < 1:
            raise ValueError(f"data.contrast_depth must be at least 1 (got {self.contrast_depth})")
        check_class_weights(self.contrast_class_weights)
        if not self.checkpoint.strip():
            raise ValueError("data.checkpoint must name a base checkpoint (a folder or Hub id)")

    @classmethod
    def from_config(cls, path: str | Path) -> FitSettings:
        """Read the fit numbers from a finetune LightningCLI YAML (model/data/trainer/early_stopping)."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"fine-tuning config {path} does not exist")
        try:
            config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as error:
            raise ValueError(f"not valid YAML: {error}") from None
        if not isinstance(config, dict):
            raise ValueError(f"expected a mapping of sections, got {type(config).__name__}")
        for section in ("trainer", "early_stopping", "data", "model"):
            if not isinstance(config.get(section) or {}, dict):
                raise ValueError(
                    f"section {section!r} must be a mapping, got {type(config[section]).__name__}"
                )
        sections = {
            "max_steps": ("trainer", "max_steps"),
            "val_check_interval": ("trainer", "val_check_interval"),
            "patience": ("early_stopping", "patience"),
            "batch_size": ("data", "batch_size"),
            "val_fraction": ("data", "val_fraction"),
            "lr": ("model", "lr"),
            "weight_decay": ("model", "weight_decay"),
            "contrast_size": ("data", "contrast_size"),
            "contrast_depth": ("data", "contrast_depth"),
            "contrast_class_weights": ("data", "contrast_class_weights"),
            "contrast_weight": ("model", "contrast_weight"),
            "contrast_margin": ("model", "contrast_margin"),
            "freeze_mismatch": ("model", "freeze_mismatch"),
            "checkpoint": ("data", "checkpoint"),
        }
        values = {}
        for name, (section, key) in sections.items():
            if (config.get(section) or {}).get(key) is not None:  # null: the default
                kind = type(getattr(cls(), name))
                try:
                    if kind is bool and not isinstance(config[section][key], bool):
                        raise TypeError  # bool("false") is True
                    values[name] = kind(config[section][key])
                except (TypeError, ValueError):
                    raise ValueError(
                        f"{section}.{key}: expected {kind.__name__}, got {config[section][key]!r}"
                    ) from None
        return cls(**values)

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def trainer_kwargs(settings: FitSettings) -> dict:
    """The Trainer arguments of the fit recipe (also the defaults of the LightningCLI)."""
    return {
        "max_steps": settings.max_steps,
        "max_epochs": -1,
        "val_check_interval": settings.val_check_interval,
        "check_val_every_n_epoch": None,
        "accelerator": "cpu",
        "devices": 1,
        "enable_model_summary": False,
    }


def fit(
    prepared: PreparedTask,
    rows,
    settings: FitSettings,
    seed: int,
    *,
    checkpoint: str,
    pretrained: bool = True,
    use_metrics: bool = True,
    freeze_mismatch: bool | None = None,
) -> tuple[RatingModule, RatingDataModule, float]:
    """Train on the records at ``rows``; returns the module with its best weights, the data
    module and the best validation loss. ``freeze_mismatch`` None: the settings' choice."""
    L.seed_everything(seed, workers=True, verbose=False)
    module = RatingModule(
        prepared.task.name,
        checkpoint=checkpoint,
        pretrained=pretrained,
        use_metrics=use_metrics,
        lr=settings.lr,
        weight_decay=settings.weight_decay,
        contrast_weight=settings.contrast_weight,
        contrast_margin=settings.contrast_margin,
        freeze_mismatch=settings.freeze_mismatch if freeze_mismatch is None else freeze_mismatch,
    )
    data = RatingDataModule.for_rows(
        prepared, rows, seed, settings.val_fraction, settings.batch_size
    )
    with tempfile.TemporaryDirectory(prefix="finetune-") as directory:
        best = ModelCheckpoint(dirpath=directory, monitor="val_loss", mode="min", save_top_k=1)
        trainer = L.Trainer(
            **trainer_kwargs(settings),
            callbacks=[EarlyStopping(monitor="val_loss", patience=settings.patience), best],
            logger=False,
            enable_progress_bar=False,
        )
        trainer.fit(module, datamodule=data)
        state = torch.load(best.best_model_path, map_location="cpu", weights_only=True)
        module.load_state_dict(state["state_dict"])
    return module.eval(), data, float(best.best_model_score)


def task_entry(module: RatingModule) -> dict:
    """The checkpoint's ``tasks`` entry: kind and criteria with their human scales."""
    task = module.task
    criteria = [{"key": c.key, "low": c.low, "high": c.high} for c in task.criteria]
    return {task.name: {"kind": task.kind, "criteria": criteria}}


def export(
    module: RatingModule,
    data: RatingDataModule,
    directory: str | Path,
    *,
    training: dict | None = None,
    metrics: dict | None = None,
) -> Path:
    """save_pretrained the fine-tuned model with the base checkpoint's feature settings."""
    base = data.prepared.base
    return save_pretrained(
        module.model,
        directory,
        scaler=base.scaler,
        aggregate=base.aggregate,
        num_layers=base.num_layers,
        training={**data.describe(), "base checkpoint": str(base.path), **(training or {})},
        metrics=metrics,
        tasks=task_entry(module),
    )
