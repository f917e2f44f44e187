"""Continue training the shipped base on real-base pairs plus a synthetic replay set.

The base's feature scaler is kept (the model was trained on its scale); every weight except
the span tagger's trains. Each epoch runs over both training sets; the epoch is chosen by the
mean of three training-side figures: the accuracy on the real-base val groups, the accuracy on
the synthetic val split, and the NoContr recall on the real-base val groups (the issue asks
that correct real outputs read as correct).

    python continue_base.py BASE OUT EPOCHS LR REAL_DIR SYNTH_DIR [NOCONTR_WEIGHT [REAL_REPEAT]]
NOCONTR_WEIGHT: the cross-entropy weight of the NoContr class (others 1); REAL_REPEAT: how
many times each epoch runs over the real-base training pairs.
REAL_DIR / SYNTH_DIR each hold pairs/{train,val}.parquet (SYNTH_DIR: synth/), features/,
embeddings.parquet and alignments.parquet.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pandas as pd
import torch
from torch.nn import functional

from evaluator.features.compute import pair_key
from evaluator.features.embeddings import EmbeddingStore
from evaluator.hub import load, save_pretrained
from evaluator.training.data import attach_features, read_split

RECORD = "docs/experiments/2026-11-26-real-base-pretrain"
torch.manual_seed(13)
torch.set_num_threads(2)


def tensors(directory: Path, pairs: str, split: str, names: list[str], scaler) -> dict:
    frame = read_split(directory / pairs, split)
    features = pd.read_parquet(directory / "features" / f"{split}.parquet").set_index("id")
    raw = attach_features(frame, features[names], split)
    store = EmbeddingStore.open(directory / "embeddings.parquet")
    aligned = EmbeddingStore.open(directory / "alignments.parquet")
    keys = [pair_key(r, g) for r, g in zip(frame["ref"], frame["gen"], strict=True)]
    return {
        "features": torch.from_numpy(scaler.transform(raw)),
        "ref": torch.from_numpy(store.lookup(frame["ref"].tolist())),
        "gen": torch.from_numpy(store.lookup(frame["gen"].tolist())),
        "alignment": torch.from_numpy(aligned.lookup_keyed(keys)),
        "labels": torch.tensor(frame["label_id"].to_numpy(), dtype=torch.long),
    }


def logits(model, batch: dict, rows) -> torch.Tensor:
    return model(
        features=batch["features"][rows],
        ref=batch["ref"][rows],
        gen=batch["gen"][rows],
        alignment=batch["alignment"][rows],
    )


def accuracy(model, batch: dict) -> tuple[float, float]:
    """(accuracy, NoContr recall)."""
    model.eval()
    with torch.no_grad():
        predicted = torch.cat(
            [
                logits(model, batch, slice(s, s + 2048)).argmax(-1)
                for s in range(0, len(batch["labels"]), 2048)
            ]
        )
    labels = batch["labels"]
    return float((predicted == labels).float().mean()), float(
        (predicted[labels == 0] == 0).float().mean()
    )


def main(
    base: str,
    out: str,
    epochs: int,
    lr: float,
    real_dir: Path,
    synth_dir: Path,
    nocontr_weight: float = 1.0,
    real_repeat: int = 1,
) -> None:
    checkpoint = load(base)
    model, scaler, names = checkpoint.model, checkpoint.scaler, checkpoint.feature_names
    data = {
        ("real", split): tensors(real_dir, "pairs", split, names, scaler)
        for split in ("train", "val")
    } | {
        ("synth", split): tensors(synth_dir, "synth", split, names, scaler)
        for split in ("train", "val")
    }
    train = {
        k: torch.cat([data[("real", "train")][k]] * real_repeat + [data[("synth", "train")][k]])
        for k in data[("real", "train")]
    }
    weight = torch.ones(model.config.num_classes)
    weight[0] = nocontr_weight
    params = [p for n, p in model.named_parameters() if not n.startswith("span_tagger")]
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    steps = epochs * ((len(train["labels"]) + 255) // 256)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, steps)
    history = []
    best, best_state, chosen = -1.0, None, {}
    for epoch in range(epochs + 1):
        if epoch:
            model.train()
            started = time.time()
            order = torch.randperm(len(train["labels"]))
            for start in range(0, len(order), 256):
                rows = order[start : start + 256]
                loss = functional.cross_entropy(
                    logits(model, train, rows), train["labels"][rows], weight=weight
                )
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                optimizer.step()
                schedule.step()
        real_acc, real_recall = accuracy(model, data[("real", "val")])
        synth_acc, synth_recall = accuracy(model, data[("synth", "val")])
        score = (real_acc + synth_acc + real_recall) / 3
        history.append(
            {
                "epoch": epoch,
                "real_val_acc": round(real_acc, 4),
                "real_val_nocontr": round(real_recall, 4),
                "synth_val_acc": round(synth_acc, 4),
                "synth_val_nocontr": round(synth_recall, 4),
                "seconds": round(time.time() - started, 1) if epoch else 0,
            }
        )
        print(json.dumps(history[-1]), flush=True)
        if score > best:
            best, best_state = score, {k: v.clone() for k, v in model.state_dict().items()}
            chosen = history[-1]
    model.load_state_dict(best_state)
    training = dict(checkpoint.config["training"])
    training["continued"] = {
        "from": "the base trained on data/synth (above)",
        "real_bases": f"build_pairs.py of {RECORD}: {len(data[('real', 'train')]['labels'])} train, "
        f"{len(data[('real', 'val')]['labels'])} val pairs",
        "synthetic_replay": f"`mismatch synth --num-pairs 30000` of 2026-11-26: "
        f"{len(data[('synth', 'train')]['labels'])} train, {len(data[('synth', 'val')]['labels'])} val pairs",
        "epochs": epochs,
        "lr": lr,
        "nocontr_weight": nocontr_weight,
        "real_repeat": real_repeat,
        "history": history,
        "chosen_epoch": chosen["epoch"],
    }
    save_pretrained(
        model.eval(),
        out,
        scaler=scaler,
        num_layers=checkpoint.num_layers,
        training=training,
        metrics={
            f"chosen epoch {k}": v for k, v in chosen.items() if k not in ("epoch", "seconds")
        },
    )
    print("exported", out, "epoch", chosen["epoch"])


if __name__ == "__main__":
    a = sys.argv[1:]
    main(
        a[0],
        a[1],
        int(a[2]),
        float(a[3]),
        Path(a[4]),
        Path(a[5]),
        float(a[6]) if len(a) > 6 else 1.0,
        int(a[7]) if len(a) > 7 else 1,
    )
