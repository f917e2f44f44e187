"""Continue a base checkpoint's mismatch training on real-base pairs with a synthetic replay.

The checkpoint's weights and feature scaler are the start (its layers were trained on that
scale); every weight but the span tagger's trains. Each epoch runs over the real-base and the
synthetic train pairs together; a run per NoContr class weight, and the epoch and run kept are
those with the best mean of three val figures: accuracy on the real-base val pairs, accuracy on
the synthetic val pairs and NoContr recall on the real-base val pairs (correct real outputs
must read as correct without the synthetic classes being forgotten).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import torch
from torch.nn import functional

from evaluator.features.compute import pair_key
from evaluator.features.embeddings import EmbeddingStore
from evaluator.hub import Checkpoint, load
from evaluator.model import MismatchModel
from evaluator.training.data import attach_features, feature_columns, read_split
from mismatch_core.errors import DataError


@dataclass
class ContinueSettings:
    """How training continues (stored with the checkpoint)."""

    epochs: int = 8
    learning_rate: float = 3e-4
    nocontr_weights: tuple[float, ...] = (1.0, 2.0, 3.0)
    batch_size: int = 256
    weight_decay: float = 0.01
    seed: int = 13


@dataclass
class PairSet:
    """A split's model inputs: scaled features, ref/gen embeddings, alignment vectors, labels."""

    features: torch.Tensor
    ref: torch.Tensor | None  # None: the checkpoint reads no text
    gen: torch.Tensor | None
    alignment: torch.Tensor | None
    labels: torch.Tensor

    def __len__(self) -> int:
        return len(self.labels)

    def rows(self, index) -> dict:
        return {
            "features": self.features[index],
            "ref": None if self.ref is None else self.ref[index],
            "gen": None if self.gen is None else self.gen[index],
            "alignment": None if self.alignment is None else self.alignment[index],
        }

    @staticmethod
    def concat(parts: list[PairSet]) -> PairSet:
        def joined(tensors: list[torch.Tensor | None]) -> torch.Tensor | None:
            present = [tensor for tensor in tensors if tensor is not None]
            return torch.cat(present) if len(present) == len(tensors) else None

        return PairSet(
            torch.cat([part.features for part in parts]),
            joined([part.ref for part in parts]),
            joined([part.gen for part in parts]),
            joined([part.alignment for part in parts]),
            torch.cat([part.labels for part in parts]),
        )


def load_pair_sets(
    checkpoint: Checkpoint, pairs_dir: Path, features_dir: Path
) -> dict[str, PairSet]:
    """The train and val splits of a pairs folder as model inputs. ``features_dir`` holds what
    ``mismatch features`` wrote for them: ``<split>.parquet`` feature caches, and the
    ``embeddings.parquet`` and ``alignments.parquet`` stores the checkpoint reads. Features are
    scaled by the checkpoint's own scaler. Base checkpoints on a frozen encoder without the
    token-level branch only: the inputs cached here are theirs, and a task checkpoint's ratings
    would not follow its moved layers."""
    config = checkpoint.model.config
    if (config.use_text and config.encoder_mode != "frozen") or config.use_tokens:
        raise DataError(
            f"{checkpoint.path}: continued training takes checkpoints on a frozen encoder "
            "without the token-level branch"
        )
    if config.num_ratings:
        raise DataError(f"{checkpoint.path} is a task checkpoint; continue its base instead")
    stores = {}
    if config.use_text:
        stores["embeddings"] = features_dir / "embeddings.parquet"
    if config.use_alignment:
        stores["alignments"] = features_dir / "alignments.parquet"
    for path in (*stores.values(), *(features_dir / f"{s}.parquet" for s in ("train", "val"))):
        if not path.is_file():
            raise DataError(f"{path} does not exist; run mismatch features for {pairs_dir}")
    embeddings, alignments = (
        EmbeddingStore.open(stores[name]) if name in stores else None
        for name in ("embeddings", "alignments")
    )
    sets = {
        split: _pair_set(checkpoint, pairs_dir, split, features_dir, embeddings, alignments)
        for split in ("train", "val")
    }
    if not len(sets["train"]) or not len(sets["val"]):
        raise DataError(
            f"{pairs_dir}: training needs train and val pairs, found "
            + ", ".join(f"{len(pairs)} {split}" for split, pairs in sets.items())
        )
    if not (sets["val"].labels == 0).any():
        raise DataError(f"{pairs_dir}/val.parquet holds no NoContr pair: no recall to choose by")
    return sets


def _pair_set(
    checkpoint: Checkpoint,
    pairs_dir: Path,
    split: str,
    features_dir: Path,
    embeddings: EmbeddingStore | None,
    alignments: EmbeddingStore | None,
) -> PairSet:
    frame = read_split(pairs_dir, split)
    path = features_dir / f"{split}.parquet"
    names = checkpoint.feature_names
    missing = [name for name in names if name not in feature_columns(path)]
    if missing:
        raise DataError(f"feature cache {path} lacks the checkpoint's feature(s) {missing}")
    cached = pd.read_parquet(path, columns=["id", *names]).set_index("id")
    try:
        raw = attach_features(frame, cached, split)
    except DataError as error:
        raise DataError(f"{path} for {pairs_dir / f'{split}.parquet'}: {error}") from None
    texts = {"ref": frame["ref"].tolist(), "gen": frame["gen"].tolist()}
    try:
        ref, gen = (
            None if embeddings is None else torch.from_numpy(embeddings.lookup(texts[side]))
            for side in ("ref", "gen")
        )
        alignment = None
        if alignments is not None:
            keys = [pair_key(r, g) for r, g in zip(texts["ref"], texts["gen"], strict=True)]
            alignment = torch.from_numpy(alignments.lookup_keyed(keys))
    except KeyError as error:
        raise DataError(
            f"{pairs_dir / f'{split}.parquet'}: {error.args[0]} in {features_dir}; run mismatch "
            "features with --embeddings/--alignments there"
        ) from None
    return PairSet(
        torch.from_numpy(checkpoint.scaler.transform(raw)),
        ref,
        gen,
        alignment,
        torch.tensor(frame["label_id"].to_numpy(), dtype=torch.long),
    )


def val_figures(
    model: MismatchModel, pairs: PairSet, batch_size: int = 2048
) -> tuple[float, float]:
    """(accuracy, NoContr recall) on a val set."""
    model.eval()
    with torch.no_grad():
        predicted = torch.cat(
            [
                model(**pairs.rows(slice(start, start + batch_size))).argmax(-1)
                for start in range(0, len(pairs), batch_size)
            ]
        )
    correct = predicted == pairs.labels
    return float(correct.float().mean()), float(correct[pairs.labels == 0].float().mean())


def selection_score(real_acc: float, synth_acc: float, real_nocontr: float) -> float:
    """The rule that picks the epoch and the run (module docstring)."""
    return (real_acc + synth_acc + real_nocontr) / 3


def continue_run(
    checkpoint_path: str,
    revision: str | None,
    data: dict[str, PairSet],
    settings: ContinueSettings,
    nocontr_weight: float,
    log: Callable[[str], None] = print,
) -> tuple[MismatchModel, list[dict], dict]:
    """One run from the checkpoint's weights; (model at its best epoch, per-epoch figures, the
    best epoch's figures). ``data`` holds real_train, real_val, synth_train and synth_val;
    epoch 0 is the checkpoint as loaded. Each run loads the checkpoint itself, after setting
    the seed: building the model draws from the generator, and the shipped base's run did it in
    this order, so runs repeat it bit for bit whether or not others ran before them."""
    torch.manual_seed(settings.seed)
    model = load(checkpoint_path, revision).model
    train = PairSet.concat([data["real_train"], data["synth_train"]])
    weight = torch.ones(model.config.num_classes)
    weight[0] = nocontr_weight
    params = [p for n, p in model.named_parameters() if not n.startswith("span_tagger")]
    optimizer = torch.optim.AdamW(
        params, lr=settings.learning_rate, weight_decay=settings.weight_decay
    )
    steps = settings.epochs * -(-len(train) // settings.batch_size)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, steps)
    history: list[dict] = []
    best_state, chosen, best = None, {}, -1.0
    for epoch in range(settings.epochs + 1):
        started = time.time()
        if epoch:
            model.train()
            order = torch.randperm(len(train))
            for start in range(0, len(order), settings.batch_size):
                rows = order[start : start + settings.batch_size]
                loss = functional.cross_entropy(
                    model(**train.rows(rows)), train.labels[rows], weight=weight
                )
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                optimizer.step()
                schedule.step()
        real_acc, real_recall = val_figures(model, data["real_val"])
        synth_acc, synth_recall = val_figures(model, data["synth_val"])
        figures = {
            "nocontr_weight": nocontr_weight,
            "epoch": epoch,
            "real_val_acc": round(real_acc, 4),
            "real_val_nocontr": round(real_recall, 4),
            "synth_val_acc": round(synth_acc, 4),
            "synth_val_nocontr": round(synth_recall, 4),
            "seconds": round(time.time() - started, 1),
            "score": selection_score(real_acc, synth_acc, real_recall),
        }
        history.append(figures)
        log(str(figures))
        if figures["score"] > best:
            best, chosen = figures["score"], figures
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
    assert best_state is not None
    model.load_state_dict(best_state)
    return model.eval(), history, chosen
