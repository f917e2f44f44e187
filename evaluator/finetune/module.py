"""LightningModule fine-tuning a mismatch model's rating head (and the layers below it) on a task.

The model is the base checkpoint's architecture with ``num_ratings = len(criteria)``; every
base tensor whose shape still fits is loaded (set transformer, projections, mismatch head),
so only the rating head starts fresh. With metric features the ratings also read them
through a linear map; for regression it starts at the ridge fit of the training ratings and
the head's last layer at zero, so training starts from the best linear mix of the metrics
(on few rated groups a fresh head alone ends below the best single metric), and
``ridge_anchor`` pulls the map back toward that fit while the rest of the rating learns. The ratings
also read the mismatch head's class log-probabilities through a linear map started at zero.
With ``freeze_mismatch`` (the default) everything the mismatch head reads, and the head
itself, keeps the base's weights: only the rating head and the two maps learn, so a task
checkpoint names errors exactly as its base does (fitting the shared layers to a few thousand
ratings made an exact copy read as an error). For regression the map from the mismatch
log-probabilities keeps its signs after every step (weights of NoContr at or above zero, of
the error classes at or below): more belief that the output holds an error can only lower
a rating, never raise it, whatever the task's ratings happen to reward. Regression: MSE on normalised
criteria, skipping criteria a record lacks, plus (with ``contrast_weight``) a margin ranking
loss asking each contrast copy in the batch (the output with synthetic errors,
``evaluator.finetune.contrast``) to rate, on the mean of its criteria, at least
``contrast_margin`` below the text it was made from (its original or, in a graded chain, the
copy with one error less); classification (NLI): cross-entropy over the
criteria as classes.
"""

from __future__ import annotations

from dataclasses import replace

import lightning as L
import numpy as np
import torch
from torch import Tensor

from evaluator.features.scaling import FeatureScaler
from evaluator.finetune.agreement import kendall
from evaluator.finetune.contrast import ANCHOR
from evaluator.hub import load
from evaluator.inference import over_references
from evaluator.model import MismatchModel
from evaluator.model.mismatch_model import FIT_REFERENCE_AGGREGATE, NO_CONTRADICTION
from evaluator.tasks import Task, fit_task
from mismatch_core.errors import DataError
from mismatch_core.resources import DEFAULT_CHECKPOINT

RATING_PARTS = ("rating_head.", "metric_rating.", "mismatch_rating.")


def rating_model(
    base: MismatchModel,
    num_ratings: int,
    pretrained: bool,
    use_metrics: bool,
    ratings_read_all_references: bool = False,
    rating_mix: bool = False,
    source_features: list[str] | None = None,
) -> MismatchModel:
    """The base architecture with a rating head; ``pretrained`` copies every base tensor that fits."""
    config = replace(
        base.config,
        num_ratings=num_ratings,
        use_metrics=use_metrics,
        rating_from_metrics=use_metrics,
        rating_from_mismatch=True,
        ratings_read_all_references=ratings_read_all_references and use_metrics,
        reference_aggregate=FIT_REFERENCE_AGGREGATE,
        deciding_reference=base.config.deciding_reference if use_metrics else "likeliest",
        rating_mix=rating_mix and use_metrics,
        head_only_features=base.config.head_only_features if use_metrics else [],
        source_features=list(source_features or []) if use_metrics else [],
    )
    model = MismatchModel(config)
    if pretrained:
        own = model.state_dict()
        fitting = {
            name: tensor
            for name, tensor in base.state_dict().items()
            if name in own and own[name].shape == tensor.shape
        }
        model.load_state_dict(fitting, strict=False)
    return model


def single_metric_fit(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """Weights (one non-zero, on the column of ``x`` whose Kendall τ-b with ``y`` is largest in
    size) and intercept of the least-squares line of ``y`` on that column: the best single
    metric as a rating, chosen on the records it is fitted to."""
    taus = [abs(kendall(x[:, j].numpy(), y.numpy())) for j in range(x.shape[1])]
    column = int(np.argmax(taus))
    values = x[:, column]
    centred = values - values.mean()
    spread = centred.square().sum()
    slope = (
        (centred * (y - y.mean())).sum() / spread if spread > 0 else torch.zeros((), dtype=x.dtype)
    )
    weight = torch.zeros(x.shape[1], dtype=x.dtype)
    weight[column] = slope
    return weight, y.mean() - values.mean() * slope


def ridge_fit(x: Tensor, y: Tensor, alpha: float) -> tuple[Tensor, Tensor]:
    """Weights and intercept minimising |y - x w - b|^2 + alpha |w|^2 (closed form)."""
    mean_x, mean_y = x.mean(dim=0), y.mean()
    centred = x - mean_x
    gram = centred.T @ centred + alpha * torch.eye(x.shape[1], dtype=x.dtype)
    weight = torch.linalg.solve(gram, centred.T @ (y - mean_y))
    return weight, mean_y - mean_x @ weight


class RatingModule(L.LightningModule):
    """Trains the rating outputs of a MismatchModel on one task's human scores."""

    def __init__(
        self,
        task: str | Task | None,
        checkpoint: str = DEFAULT_CHECKPOINT,
        pretrained: bool = True,
        use_metrics: bool = True,
        lr: float = 1e-3,
        weight_decay: float = 0.01,
        ridge_alpha: float = 10.0,
        ridge_anchor: float = 0.0,
        contrast_weight: float = 0.0,
        contrast_margin: float = 0.05,
        reference_margin: float = 0.2,
        freeze_mismatch: bool = True,
        ratings_read_all_references: bool = False,
        rating_mix: bool = False,
        source_features: list[str] | None = None,
        single_metric_anchor: bool = False,
        ratings: str | None = None,
        scales: dict[str, tuple[float, float]] | None = None,
    ) -> None:
        """task: a shipped task's name, or a Task (a user's ratings, ``read_ratings``); ratings /
        scales: a user's ratings file and its criteria's scales instead (``tasks.fit_task``:
        task then names it), as the LightningCLI links them from its data section;
        pretrained false: same architecture, random init (ablation); use_metrics false: text
        branch only (ablation); checkpoint: the pretrained base model (architecture, weights);
        ridge_alpha: L2 penalty of the metric map's starting fit (scaled features);
        ridge_anchor: weight of the squared distance of the metric map from that start in the
        training loss (regression), so the learned part corrects the ridge fit rather than
        replacing it;
        contrast_weight / contrast_margin: weight and margin (normalised scale) of the ranking
        loss on contrast copies, when the data module serves them; reference_margin: the
        margin for a reference triple's error copy below its anchor (a wrong fact, not one
        step of a graded chain); freeze_mismatch: train the
        rating parts only (needs the whole base: pretrained and use_metrics); rating_mix:
        regression ratings mix the learned rating with the metric map's starting ridge fit,
        per criterion (``evaluator.finetune.rating_mix``; without metrics it does nothing);
        source_features: metric columns the ratings also read against each record's source
        (``MismatchConfig.source_features``; without metrics none); single_metric_anchor: with
        rating_mix, each criterion may anchor its mix on the line of its best single metric
        column instead of the ridge fit, chosen on the validation groups
        (``evaluator.finetune.rating_mix.choose_mix``)."""
        super().__init__()
        if freeze_mismatch and not (pretrained and use_metrics):
            raise ValueError(
                "freeze_mismatch keeps the base's mismatch judgement; it needs pretrained and "
                "use_metrics (the ablations train every layer: set it false)"
            )
        self.task = fit_task(task, ratings, scales)
        # the name, not a Task: Lightning's checkpoints keep plain values (weights_only loads)
        self.save_hyperparameters(ignore=["task"])
        self.hparams["task"] = self.task.name
        self.metric_start: tuple[Tensor, Tensor] | None = None  # the map's ridge (weight, bias)
        # per criterion, the line of its best single metric column (single_metric_anchor)
        self.single_start: tuple[Tensor, Tensor] | None = None
        base = load(checkpoint).model
        self.model = rating_model(
            base,
            len(self.task.criteria),
            pretrained,
            use_metrics,
            ratings_read_all_references,
            rating_mix and self.task.kind == "regression",
            source_features,
        )
        if freeze_mismatch:
            for name, parameter in self.model.named_parameters():
                parameter.requires_grad_(name.startswith(RATING_PARTS))

    def forward(self, batch: dict) -> Tensor:
        features = batch["features"] if self.model.config.use_metrics else None
        representation = self.model.represent(
            features=features,
            ref=batch["ref"],
            gen=batch["gen"],
            alignment=batch.get("alignment"),
            tokens=batch.get("tokens"),
        )
        if self.model.config.ratings_read_all_references:
            features = batch["all_reference_features"]
        return self.model.rate(representation, features, source=batch.get("source"))

    def on_fit_start(self) -> None:
        """Start the metric map at the ridge fit of the training split (after data setup), on
        the features of the reference each record trains on (with
        ``ratings_read_all_references``: over all its references, ``over_references``), and the
        source scores' scaling at the bounds of the training records' (``FeatureScaler.fit``)."""
        data = self.trainer.datamodule  # type: ignore[attr-defined]  # set by Trainer.fit
        prepared, train = data.ready(), data.split["train"]
        if prepared.task != self.task:  # the LightningCLI's model and data each read a file
            raise DataError(
                f"task {self.task.name!r}: the ratings file changed between the model's read "
                "and the data's; run the fit again"
            )
        pairs = prepared.train_pairs[train]
        table = prepared.features
        if self.model.config.ratings_read_all_references:
            table = over_references(
                table,
                prepared.inputs.pair_owner(),
                self.model.config.feature_names,
                self.model.config.reference_aggregate,
            )
        source = None
        if self.model.source_scaling is not None:
            if prepared.inputs.source is None:
                raise ValueError(
                    "the ratings read the source; prepare the task with source_features"
                )
            raw = prepared.inputs.source.iloc[train]
            scaler = FeatureScaler.fit(raw)
            self.model.source_scaling.set_bounds(
                torch.from_numpy(scaler.low).float(), torch.from_numpy(scaler.high).float()
            )
            source = torch.tensor(raw.to_numpy()).float()
        features = self.model.rating_columns(torch.from_numpy(table[pairs]).float(), source)
        targets = torch.from_numpy(prepared.inputs.targets[train]).float()
        self.start_from_metric_fit(features, targets)

    def start_from_metric_fit(self, features: Tensor, targets: Tensor) -> None:
        """Regression: the metric map := per-criterion ridge fit (records lacking the
        criterion skipped), and so the frozen ridge map of ``rating_mix``; the head's last
        layer := 0. Classification: the map starts at 0.
        The map from the mismatch probabilities starts at 0 either way."""
        with torch.no_grad():
            if self.model.mismatch_rating is not None:
                self.model.mismatch_rating.weight.zero_()
                self.model.mismatch_rating.bias.zero_()
        metric_rating, rating_head = self.model.metric_rating, self.model.rating_head
        if metric_rating is None or rating_head is None:
            return
        with torch.no_grad():
            metric_rating.weight.zero_()
            metric_rating.bias.zero_()
            if self.task.kind == "classification":
                return
            for k in range(targets.shape[1]):
                present = ~torch.isnan(targets[:, k])
                if present.sum() < 2:
                    continue
                weight, bias = ridge_fit(
                    torch.nan_to_num(features[present]),
                    targets[present, k],
                    self.hparams["ridge_alpha"],
                )
                metric_rating.weight[k] = weight
                metric_rating.bias[k] = bias
            self.metric_start = (metric_rating.weight.clone(), metric_rating.bias.clone())
            if self.hparams["single_metric_anchor"] and self.model.ridge_rating is not None:
                weight, bias = torch.zeros_like(metric_rating.weight), metric_rating.bias.clone()
                for k in range(targets.shape[1]):
                    present = ~torch.isnan(targets[:, k])
                    if present.sum() >= 2:
                        weight[k], bias[k] = single_metric_fit(
                            torch.nan_to_num(features[present]), targets[present, k]
                        )
                self.single_start = (weight, bias)
            if self.model.ridge_rating is not None:  # kept as it starts (rating_mix)
                self.model.ridge_rating.load_state_dict(metric_rating.state_dict())
            last = rating_head[-1]
            assert isinstance(last, torch.nn.Linear)  # rating_model's head ends in a Linear
            last.weight.zero_()
            last.bias.zero_()

    def loss(self, outputs: Tensor, targets: Tensor) -> Tensor:
        if self.task.kind == "classification":
            return torch.nn.functional.cross_entropy(outputs, targets.argmax(dim=-1))
        present = ~torch.isnan(targets)
        errors = (outputs - torch.nan_to_num(targets)) ** 2 * present
        return errors.sum() / present.sum().clamp(min=1)

    def contrast_loss(self, outputs: Tensor, contrast: dict) -> Tensor:
        """Hinge on (parent - copy) mean rating, the parent being the text the copy must rate
        below (its original, the copy with one error less, or a reference triple's anchor):
        zero once every copy is ``contrast_margin`` lower (``reference_margin`` below an
        anchor). Anchors (parent ANCHOR) only serve as parents."""
        copies = self(contrast).mean(dim=-1)
        parent = contrast["parent"]
        parents = torch.where(
            parent >= 0, copies[parent.clamp(min=0)], outputs[contrast["owner"]].mean(dim=-1)
        )
        below_anchor = (parent >= 0) & (parent[parent.clamp(min=0)] == ANCHOR)
        margin = torch.where(
            below_anchor, self.hparams["reference_margin"], self.hparams["contrast_margin"]
        )
        hinge = torch.relu(margin - (parents - copies))
        ranked = parent != ANCHOR
        return hinge[ranked].sum() / ranked.sum().clamp(min=1)

    def training_step(self, batch: dict, batch_index: int) -> Tensor:
        outputs = self(batch)
        size = len(batch["targets"])
        loss = self.loss(outputs, batch["targets"])
        if self.hparams["contrast_weight"] and "contrast" in batch:
            ranking = self.contrast_loss(outputs, batch["contrast"])
            self.log("train_contrast_loss", ranking, batch_size=size)
            loss = loss + self.hparams["contrast_weight"] * ranking
        if self.hparams["ridge_anchor"] and self.metric_start is not None:
            loss = loss + self.hparams["ridge_anchor"] * self.ridge_drift()
        self.log("train_loss", loss, batch_size=size)
        return loss

    def ridge_drift(self) -> Tensor:
        """Squared distance of the metric map's weights and biases from their ridge start."""
        metric_rating = self.model.metric_rating
        assert metric_rating is not None and self.metric_start is not None  # set together
        weight, bias = self.metric_start
        return (metric_rating.weight - weight).square().sum() + (
            metric_rating.bias - bias
        ).square().sum()

    def validation_step(self, batch: dict, batch_index: int) -> None:
        loss = self.loss(self(batch), batch["targets"])
        self.log("val_loss", loss, prog_bar=True, batch_size=len(batch["targets"]), sync_dist=True)

    def on_train_batch_end(self, outputs, batch: dict, batch_index: int) -> None:
        if self.task.kind == "regression":
            self.keep_mismatch_signs()

    def keep_mismatch_signs(self) -> None:
        """Project the map from the mismatch log-probabilities back onto its signs: NoContr's
        weights >= 0, every error class's <= 0 (regression)."""
        mismatch_rating = self.model.mismatch_rating
        if mismatch_rating is None:
            return
        with torch.no_grad():
            weight = mismatch_rating.weight
            no_contradiction = weight[:, NO_CONTRADICTION].clamp(min=0)
            weight.clamp_(max=0)
            weight[:, NO_CONTRADICTION] = no_contradiction

    def configure_optimizers(self) -> torch.optim.Optimizer:
        trained = [p for p in self.model.parameters() if p.requires_grad]
        return torch.optim.AdamW(
            trained, lr=self.hparams["lr"], weight_decay=self.hparams["weight_decay"]
        )
