"""Could a rank average of the metrics best on the training groups beat the best single
metric where the ratings stay below it? Per task, seed and criterion: the split of
``mismatch evaluate`` (80/20 by group), inside the 80 % the validation groups of fitting
(10 %); the top-k metrics by τ on the rest of the 80 % (each oriented there), averaged as
ranks. Prints validation τ (what a choice may read) and test τ (reported only) of k = 1, 2,
3, 5, beside the best single metric chosen after the fact (the highest 3-seed mean test τ). Analysis only.

Usage: FEATURE_CACHE=DIR python ensemble.py TASK...
"""

import os
import sys

import numpy as np
from scipy.stats import rankdata

from evaluator.cli.finetune import load_settings, prepare
from evaluator.finetune.agreement import kendall
from evaluator.finetune.datamodule import VAL_SEED_OFFSET, split_rows

CACHE = os.environ.get("FEATURE_CACHE", "data/human_features")
KS = (1, 2, 3, 5)


def oriented_taus(values, targets, rows):
    """metric -> τ on ``rows`` (NaN targets skipped)."""
    present = rows[~np.isnan(targets[rows])]
    return {m: kendall(values[m][present], targets[present]) for m in values}


def rank_average(values, chosen, signs, rows):
    return np.mean([signs[m] * rankdata(values[m][rows]) for m in chosen], axis=0)


for task in sys.argv[1:]:
    settings = load_settings(task, f"configs/finetune/{task}.yaml")
    prepared = prepare(task, settings.checkpoint, CACHE, None, settings)
    targets = prepared.inputs.targets
    frame = prepared.inputs.record_features()
    values = {m: frame[m].to_numpy() for m in frame.columns}
    criteria = [c.key for c in prepared.task.criteria]
    table: dict[str, dict[str, list[float]]] = {}
    per_metric: dict[tuple[str, str], list[float]] = {}
    for seed in (0, 1, 2):
        train, test = split_rows(prepared.records, np.arange(len(prepared.records)), seed, 0.2)
        fit, val = split_rows(  # as fitting splits them (datamodule)
            prepared.records, train, VAL_SEED_OFFSET + seed, settings.val_fraction
        )
        for column, key in enumerate(criteria):
            y = targets[:, column]
            on_fit = oriented_taus(values, y, fit)
            on_train = oriented_taus(values, y, train)
            on_test = {
                m: np.sign(on_train[m]) * t for m, t in oriented_taus(values, y, test).items()
            }
            row = table.setdefault(key, {})
            for m, t in on_test.items():
                per_metric.setdefault((key, m), []).append(t)
            order = sorted(on_fit, key=lambda m: -abs(on_fit[m]))
            signs = {m: np.sign(on_fit[m]) for m in on_fit}
            for k in KS:
                for name, rows in (("val", val), ("test", test)):
                    kept = rows[~np.isnan(y[rows])]
                    score = rank_average(values, order[:k], signs, kept)
                    row.setdefault(f"top{k} {name}", []).append(kendall(score, y[kept]))
    for key, row in table.items():  # the results' best metric: the highest 3-seed mean
        row["best metric"] = [max(np.mean(v) for (k, _), v in per_metric.items() if k == key)]
    print(f"## {task}")
    header = list(next(iter(table.values())))
    print("| criterion | " + " | ".join(header) + " |")
    print("|---" * (len(header) + 1) + "|")
    for key, row in table.items():
        print(f"| {key} | " + " | ".join(f"{np.mean(row[h]):.3f}" for h in header) + " |")
    print(flush=True)
