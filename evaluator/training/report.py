"""Held-out classification report: per-class precision/recall/F1, accuracy, confusion-matrix PNG."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

from mismatch_core.atomic import atomic_path, write_text_atomic
from mismatch_core.taxonomy import CODES, NUM_CLASSES


def per_class_frame(labels: np.ndarray, predictions: np.ndarray) -> pd.DataFrame:
    """One row per class (in taxonomy order) plus macro and weighted averages."""
    classes = list(range(NUM_CLASSES))
    precision, recall, f1, support = precision_recall_fscore_support(
        labels, predictions, labels=classes, zero_division=0
    )
    frame = pd.DataFrame(
        {
            "class": list(CODES),
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "support": support,
        }
    )
    for average in ("macro", "weighted"):
        p, r, f, _ = precision_recall_fscore_support(
            labels, predictions, labels=classes, average=average, zero_division=0
        )
        frame.loc[len(frame)] = [f"{average} avg", p, r, f, int(support.sum())]
    return frame


def summary(labels: np.ndarray, predictions: np.ndarray) -> dict[str, float]:
    """The headline numbers stored in the checkpoint config and model card."""
    frame = per_class_frame(labels, predictions)
    return {
        "val_accuracy": float((labels == predictions).mean()),
        "val_macro_f1": float(frame.loc[frame["class"] == "macro avg", "f1"].iloc[0]),
        "val_pairs": int(len(labels)),
    }


def write_report(
    labels: np.ndarray, predictions: np.ndarray, directory: str | os.PathLike, title: str
) -> dict[str, float]:
    """Write per_class.md, per_class.csv, metrics.json and confusion_matrix.png; return the summary."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.metrics import ConfusionMatrixDisplay

    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    frame = per_class_frame(labels, predictions)
    numbers = summary(labels, predictions)
    heading = (
        f"# {title}\n\naccuracy: {numbers['val_accuracy']:.4f} on {numbers['val_pairs']} pairs\n\n"
    )
    write_text_atomic(target / "per_class.md", heading + markdown_table(frame))
    write_text_atomic(target / "per_class.csv", frame.to_csv(index=False))
    write_text_atomic(target / "metrics.json", json.dumps(numbers, indent=2) + "\n")

    matrix = confusion_matrix(labels, predictions, labels=list(range(NUM_CLASSES)))
    figure, axes = plt.subplots(figsize=(10, 9))
    ConfusionMatrixDisplay(matrix, display_labels=list(CODES)).plot(
        ax=axes, xticks_rotation=60, colorbar=False, values_format="d"
    )
    axes.set_title(title)
    figure.tight_layout()
    try:
        with atomic_path(target / "confusion_matrix.png") as temporary:
            figure.savefig(temporary, dpi=120)
    finally:
        plt.close(figure)
    return numbers


def markdown_table(frame: pd.DataFrame) -> str:
    """The per-class frame as a Markdown table (4 decimals for scores)."""
    lines = ["| class | precision | recall | f1 | support |", "|---|---|---|---|---|"]
    lines += [
        f"| {row['class']} | {row['precision']:.4f} | {row['recall']:.4f} | {row['f1']:.4f} | {int(row['support'])} |"
        for _, row in frame.iterrows()
    ]
    return "\n".join(lines) + "\n"
