"""LightningModule fine-tuning a mismatch model's rating head (and the layers below it) on a task.

The model is the base checkpoint's architecture with ``num_ratings = len(criteria)``; every
base tensor whose shape still fits is loaded (set transformer, projections, mismatch head),
so only the rating head starts fresh. The mismatch head gets no loss and stays the base
model's auxiliary output. Regression: MSE on normalised criteria, skipping criteria a record
lacks; classification (NLI): cross-entropy over the criteria as classes.
"""

from __future__ import annotations

from dataclasses import replace

import lightning as L
import torch
from torch import Tensor

from evaluator.hub import load
from evaluator.model import MismatchModel
from evaluator.tasks import get_task


def rating_model(
    base: MismatchModel, num_ratings: int, pretrained: bool, use_metrics: bool
) -> MismatchModel:
    """The base architecture with a rating head; ``pretrained`` copies every base tensor that fits."""
    model = MismatchModel(replace(base.config, num_ratings=num_ratings, use_metrics=use_metrics))
    if pretrained:
        own = model.state_dict()
        fitting = {
            name: tensor
            for name, tensor in base.state_dict().items()
            if name in own and own[name].shape == tensor.shape
        }
        model.load_state_dict(fitting, strict=False)
    return model


class RatingModule(L.LightningModule):
    """Trains the rating outputs of a MismatchModel on one task's human scores."""

    def __init__(
        self,
        task: str,
        checkpoint: str = "checkpoints/mismatch-base",
        pretrained: bool = True,
        use_metrics: bool = True,
        lr: float = 1e-3,
        weight_decay: float = 0.01,
    ) -> None:
        """pretrained false: same architecture, random init (ablation); use_metrics false: text
        branch only (ablation); checkpoint: the pretrained base model (architecture, weights)."""
        super().__init__()
        self.save_hyperparameters()
        self.task = get_task(task)
        base = load(checkpoint).model
        self.model = rating_model(base, len(self.task.criteria), pretrained, use_metrics)

    def forward(self, batch: dict) -> Tensor:
        representation = self.model.represent(
            features=batch["features"] if self.model.config.use_metrics else None,
            ref=batch["ref"],
            gen=batch["gen"],
            alignment=batch.get("alignment"),
        )
        return self.model.rate(representation)

    def loss(self, outputs: Tensor, targets: Tensor) -> Tensor:
        if self.task.kind == "classification":
            return torch.nn.functional.cross_entropy(outputs, targets.argmax(dim=-1))
        present = ~torch.isnan(targets)
        errors = (outputs - torch.nan_to_num(targets)) ** 2 * present
        return errors.sum() / present.sum().clamp(min=1)

    def training_step(self, batch: dict, batch_index: int) -> Tensor:
        loss = self.loss(self(batch), batch["targets"])
        self.log("train_loss", loss, batch_size=len(batch["targets"]))
        return loss

    def validation_step(self, batch: dict, batch_index: int) -> None:
        loss = self.loss(self(batch), batch["targets"])
        self.log("val_loss", loss, prog_bar=True, batch_size=len(batch["targets"]))

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.AdamW(
            self.model.parameters(), lr=self.hparams.lr, weight_decay=self.hparams.weight_decay
        )
