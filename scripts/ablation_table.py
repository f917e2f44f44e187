"""Collect the val-split metrics of the pretraining run and its ablations into one table.

Each run writes DOCS/metrics.json (``--docs_dir``); this reads the main run's folder and every
folder under its ``ablations/`` and writes ``ablations.md`` beside them (atomically).

    python scripts/ablation_table.py docs/pretrain
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from evaluator.cli import run_reporting_errors
from mismatch_core.atomic import write_text_atomic
from mismatch_core.errors import DataError

# what each ablation run switched off, as passed to scripts/pretrain.py
ABLATIONS = {
    "no_metrics": "no metric features (`--model.use_metrics false`)",
    "no_text": "no text features (`--model.use_text false --data.embeddings null "
    "--data.alignments null`)",
    "value_only": "value-only metric set, no metric identity (`--model.metric_ids false`)",
    "no_alignment": "mean embeddings only, no alignment vectors (`--data.alignments null`)",
    "no_change_kind": "no change-kind features: the first 28 metric features, without WordNet "
    "relations, changed-word kinds and repetition (`--data.feature_names [rouge1_p,...,embed_cos]`)",
}


COLUMNS = ("val_accuracy", "val_macro_f1", "val_pairs")  # the keys each run's metrics.json gives


def read_metrics(folder: Path) -> dict:
    """The run's metrics.json, checked: DataError naming the file and the missing or bad key."""
    path = folder / "metrics.json"
    if not path.is_file():
        raise DataError(f"{path} is missing: run that configuration first")
    try:
        metrics = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DataError(f"{path} is not JSON ({error})") from None
    if not isinstance(metrics, dict):
        raise DataError(f"{path} holds {type(metrics).__name__}, not an object of metrics")
    for key in COLUMNS:
        if key not in metrics:
            raise DataError(f"{path} lacks key {key!r}")
        value = metrics[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise DataError(f"{path}: key {key!r} is {value!r}, not a number")
    return metrics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("docs_dir", type=Path, help="the main run's --docs_dir")
    args = parser.parse_args()
    rows = [("full model", read_metrics(args.docs_dir))]
    for name, label in ABLATIONS.items():
        folder = args.docs_dir / "ablations" / name
        if folder.is_dir():
            rows.append((label, read_metrics(folder)))
    lines = [
        "| configuration | val accuracy | val macro F1 | val pairs |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {label} | {m['val_accuracy']:.4f} | {m['val_macro_f1']:.4f} | {m['val_pairs']} |"
        for label, m in rows
    ]
    write_text_atomic(args.docs_dir / "ablations.md", "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(run_reporting_errors("scripts/ablation_table.py", main))
