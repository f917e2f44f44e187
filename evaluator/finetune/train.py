"""Fit a RatingModule with early stopping and export the result as a task checkpoint.

One fit recipe serves the shipped checkpoints, every seed and ablation of ``mismatch
evaluate`` and ``mismatch finetune``: validation every ``val_check_interval`` steps across
epochs, early stopping on the validation loss, the best weights restored at the end. The
numbers come from ``configs/finetune/<task>.yaml``, read by the LightningCLI's own schema
(``evaluator.finetune.config``), so every entry point trains alike.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import lightning as L
import torch
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint

from evaluator.finetune.config import FitSettings, trainer_kwargs
from evaluator.finetune.datamodule import PreparedTask, RatingDataModule
from evaluator.finetune.module import RatingModule
from evaluator.finetune.rating_mix import choose_mix
from evaluator.hub import save_pretrained
from evaluator.lightning_interrupt import InterruptNoted, interrupt_kept
from evaluator.lightning_quiet import quiet_lightning
from evaluator.signature import signature
from mismatch_core.resources import portable_path


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
    """Train on the records at ``rows``; returns the module with its best weights (with
    ``rating_mix``, each criterion's learned share chosen on the validation records), the data
    module and the best validation loss. ``freeze_mismatch`` None: the settings' choice."""
    if tuple(settings.source_features) != prepared.source_features:
        raise ValueError(
            f"the task was prepared with source features {list(prepared.source_features)}, "
            f"the fit settings name {list(settings.source_features)}"
        )
    if tuple(settings.train_datasets) != prepared.train_datasets:
        raise ValueError(
            f"the task was prepared to train on {list(prepared.train_datasets) or 'every dataset'}, "
            f"the fit settings name {list(settings.train_datasets) or 'every dataset'}"
        )
    L.seed_everything(seed, workers=True, verbose=False)
    module = RatingModule(
        prepared.task,
        checkpoint=checkpoint,
        pretrained=pretrained,
        use_metrics=use_metrics,
        lr=settings.lr,
        weight_decay=settings.weight_decay,
        ridge_anchor=settings.ridge_anchor,
        contrast_weight=settings.contrast_weight,
        contrast_margin=settings.contrast_margin,
        reference_margin=settings.reference_margin,
        freeze_mismatch=settings.freeze_mismatch if freeze_mismatch is None else freeze_mismatch,
        ratings_read_all_references=settings.ratings_read_all_references,
        rating_mix=settings.rating_mix,
        source_features=list(settings.source_features),
        single_metric_anchor=settings.single_metric_anchor,
    )
    data = RatingDataModule.for_rows(
        prepared, rows, seed, settings.val_fraction, settings.batch_size
    )
    with tempfile.TemporaryDirectory(prefix="finetune-") as directory, quiet_lightning():
        best = ModelCheckpoint(dirpath=directory, monitor="val_loss", mode="min", save_top_k=1)
        noted = InterruptNoted()
        trainer = L.Trainer(
            **trainer_kwargs(settings),
            callbacks=[EarlyStopping(monitor="val_loss", patience=settings.patience), best, noted],
            logger=False,
            enable_progress_bar=False,
        )
        with interrupt_kept(noted):
            trainer.fit(module, datamodule=data)
        if best.best_model_score is None:
            raise RuntimeError(
                f"no validation ran in trainer.max_steps {settings.max_steps} "
                f"(trainer.val_check_interval {settings.val_check_interval})"
            )
        finish_fit(module, data, best.best_model_path)
    return module.eval(), data, float(best.best_model_score)


def finish_fit(module: RatingModule, data: RatingDataModule, best_path: str | None) -> None:
    """After training: the best weights (``best_path``; None keeps the last step's) and, with
    ``rating_mix``, each criterion's learned share and anchor chosen on the validation records."""
    if best_path:
        state = torch.load(best_path, map_location=module.device, weights_only=True)
        module.load_state_dict(state["state_dict"])
    if module.model.ridge_rating is not None:
        choose_mix(module.model, data.ready(), data.split["val"], module.single_start)


def task_entry(module: RatingModule) -> dict:
    """The checkpoint's ``tasks`` entry: kind and criteria with their human scales."""
    task = module.task
    criteria = [{"key": c.key, "low": c.low, "high": c.high} for c in task.criteria]
    return {task.name: {"kind": task.kind, "criteria": criteria}}


def recorded_settings(settings: FitSettings, checkpoint: str) -> dict:
    """The fit settings a checkpoint records: the recipe with the base it read
    (``checkpoint``, which --checkpoint may set over the config's), named portably."""
    return replace(settings, checkpoint=portable_path(checkpoint)).to_dict()


def export(
    module: RatingModule,
    data: RatingDataModule,
    directory: str | Path,
    *,
    training: dict | None = None,
    metrics: dict | None = None,
) -> Path:
    """save_pretrained the fine-tuned model with the base checkpoint's feature settings."""
    base = data.ready().base
    return save_pretrained(
        module.model,
        directory,
        scaler=base.scaler,
        num_layers=base.num_layers,
        training={
            **data.describe(),
            "base checkpoint": portable_path(base.path),
            "base signature": str(signature(base)),  # which base, whatever its folder holds now
            **(training or {}),
        },
        metrics=metrics,
        tasks=task_entry(module),
    )
