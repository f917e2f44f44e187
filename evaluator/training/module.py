"""LightningModule for mismatch pretraining: cross-entropy over the 14 classes, AdamW with an
optional cosine decay of the learning rate."""

from __future__ import annotations

from typing import Literal

import lightning as L
import torch
from lightning.pytorch.utilities.types import OptimizerLRSchedulerConfig
from torch import Tensor
from torchmetrics.classification import MulticlassAccuracy

from evaluator.model import MismatchConfig, MismatchModel
from evaluator.model.mismatch_model import EncoderMode
from mismatch_core.config import check_learning_rate, check_not_negative
from mismatch_core.resources import DEFAULT_ENCODER
from mismatch_core.taxonomy import NUM_CLASSES


def encoder_hidden_size(encoder: str) -> int:
    """Width of the encoder's mean-pooled embeddings, read from its config (no weights loaded)."""
    from transformers import AutoConfig

    from mismatch_core.resources import encoder_path, hub_reachable

    return int(
        AutoConfig.from_pretrained(
            encoder_path(encoder), local_files_only=not hub_reachable()
        ).hidden_size
    )


class MismatchModule(L.LightningModule):
    """Trains a MismatchModel; every architecture choice is a typed, saved hyperparameter."""

    def __init__(
        self,
        feature_names: list[str],
        encoder: str = DEFAULT_ENCODER,
        encoder_mode: EncoderMode = "frozen",
        use_text: bool = True,
        use_alignment: bool = False,
        text_interactions: bool = False,
        use_tokens: bool = False,
        token_dim: int = 64,
        use_metrics: bool = True,
        metric_ids: bool = True,
        text_dim: int = 64,
        set_dim: int = 64,
        num_heads: int = 4,
        num_blocks: int = 2,
        num_inducing: int = 0,
        num_seeds: int = 1,
        head_hidden: int = 0,
        dropout: float = 0.1,
        deciding_reference: str = "likeliest_errors_closest",
        lr: float = 1e-3,
        encoder_lr: float = 2e-5,
        weight_decay: float = 0.01,
        lr_schedule: Literal["constant", "cosine"] = "constant",
    ) -> None:
        """feature_names: metric columns in order (linked from the data module by the CLI);
        lr: heads and set transformer; encoder_lr: the BERT encoder in trainable mode;
        lr_schedule cosine: both rates decay to 0 by the last step of ``max_epochs`` (the
        constant rate left validation accuracy swinging by up to 0.008 between epochs).
        deciding_reference: which of several references names a pair's errors at prediction
        (``MismatchConfig.deciding_reference``); a model without metrics takes "likeliest",
        the only rule it can read."""
        check_learning_rate(lr, "model.lr")
        check_learning_rate(encoder_lr, "model.encoder_lr")
        check_not_negative({"model.weight_decay": weight_decay})
        super().__init__()
        self.save_hyperparameters()
        config = MismatchConfig(
            feature_names=list(feature_names),
            encoder=encoder,
            encoder_mode=encoder_mode,
            embedding_dim=encoder_hidden_size(encoder) if use_text else 0,
            use_text=use_text,
            use_alignment=use_alignment,
            text_interactions=text_interactions,
            use_tokens=use_tokens,
            token_dim=token_dim,
            use_metrics=use_metrics,
            metric_ids=metric_ids,
            text_dim=text_dim,
            set_dim=set_dim,
            num_heads=num_heads,
            num_blocks=num_blocks,
            num_inducing=num_inducing,
            num_seeds=num_seeds,
            head_hidden=head_hidden,
            dropout=dropout,
            deciding_reference=deciding_reference if use_metrics else "likeliest",
        )
        self.model = MismatchModel.with_pretrained_encoder(config)
        self.train_accuracy = MulticlassAccuracy(num_classes=NUM_CLASSES, average="micro")
        self.val_accuracy = MulticlassAccuracy(num_classes=NUM_CLASSES, average="micro")

    def forward(self, batch: dict) -> Tensor:
        return self.model(
            features=batch["features"],
            ref=batch.get("ref"),
            gen=batch.get("gen"),
            alignment=batch.get("alignment"),
            tokens=batch.get("tokens"),
        )

    def training_step(self, batch: dict, batch_index: int) -> Tensor:
        logits = self(batch)
        loss = torch.nn.functional.cross_entropy(logits, batch["labels"])
        self.train_accuracy(logits, batch["labels"])
        size = len(batch["labels"])
        self.log("train_loss", loss, prog_bar=True, batch_size=size)
        self.log("train_acc", self.train_accuracy, on_step=False, on_epoch=True, batch_size=size)
        return loss

    def validation_step(self, batch: dict, batch_index: int) -> None:
        logits = self(batch)
        loss = torch.nn.functional.cross_entropy(logits, batch["labels"])
        self.val_accuracy(logits, batch["labels"])
        size = len(batch["labels"])
        self.log("val_loss", loss, prog_bar=True, batch_size=size, sync_dist=True)
        self.log("val_acc", self.val_accuracy, prog_bar=True, batch_size=size)

    def configure_optimizers(self) -> torch.optim.Optimizer | OptimizerLRSchedulerConfig:
        encoder = self.model.encoder
        encoder_ids = {id(p) for p in encoder.parameters()} if encoder is not None else set()
        groups = [{"params": [p for p in self.model.parameters() if id(p) not in encoder_ids]}]
        if encoder is not None:
            groups.append({"params": list(encoder.parameters()), "lr": self.hparams["encoder_lr"]})
        optimizer = torch.optim.AdamW(
            groups, lr=self.hparams["lr"], weight_decay=self.hparams["weight_decay"]
        )
        if self.hparams["lr_schedule"] == "constant":
            return optimizer
        steps = self.trainer.estimated_stepping_batches
        if steps == float("inf"):
            raise ValueError("lr_schedule cosine needs trainer.max_epochs or trainer.max_steps")
        steps = int(steps)
        schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(steps, 1))
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": schedule, "interval": "step"}}
