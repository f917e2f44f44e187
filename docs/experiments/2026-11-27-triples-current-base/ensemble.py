"""Could a rank average of the metrics best on the training groups beat the best single
metric where the ratings stay below it? Per task, seed and criterion: the split of
``mismatch evaluate`` (80/20 by group), inside the 80 % the fit and validation groups of
fitting (``RatingDataModule``); the top-k metrics by τ on the fit groups (each oriented
there), averaged as ranks. Prints validation τ (what a choice may read) and test τ
(reported only) of k = 1, 2, 3, 5, beside the best single metric chosen after the fact (the
highest 3-seed mean test τ, as ``mismatch evaluate`` reports it). Analysis only.

Usage: FEATURE_CACHE=DIR python ensemble.py TASK...
"""

import os
import sys
from dataclasses import replace

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from evaluator.cli.finetune import load_settings, prepare
from evaluator.finetune.agreement import kendall
from evaluator.finetune.datamodule import RatingDataModule, split_rows
from evaluator.finetune.evaluate import baseline_kendall, markdown_table

CACHE = os.environ.get("FEATURE_CACHE", "data/human_features")
KS = (1, 2, 3, 5)

for task in sys.argv[1:]:
    settings = load_settings(task, None)
    prepared = prepare(task, settings.checkpoint, replace(settings, cache_dir=CACHE))
    targets = prepared.inputs.targets
    inputs = prepared.inputs  # each feature's max, as record_features read them then
    frame = inputs.features.groupby(inputs.pair_owner()).max().reset_index(drop=True)
    if inputs.source is not None:
        frame = pd.concat([frame, inputs.source.add_prefix("source_")], axis=1)
    criteria = [c.key for c in prepared.task.criteria]
    taus: dict[tuple[str, str], list[float]] = {}  # (criterion, column) -> per seed
    for seed in (0, 1, 2):
        train, test = split_rows(prepared.records, np.arange(len(prepared.records)), seed, 0.2)
        data = RatingDataModule.for_rows(
            prepared, train, seed, settings.val_fraction, settings.batch_size
        )
        data.setup()
        fit, val = data.split["train"], data.split["val"]
        on_fit = baseline_kendall(prepared, fit, fit)
        on_test = baseline_kendall(prepared, train, test)
        for column, key in enumerate(criteria):
            for metric, by_column in on_test.items():
                taus.setdefault((key, metric), []).append(by_column[column])
            order = sorted(on_fit, key=lambda m: -on_fit[m][column])[: max(KS)]
            values = {m: frame[m].to_numpy() for m in order}
            rated = fit[~np.isnan(targets[fit, column])]
            sign = {
                m: 1.0 if kendall(values[m][rated], targets[rated, column]) >= 0 else -1.0
                for m in order
            }
            for k in KS:
                for name, rows in (("val", val), ("test", test)):
                    kept = rows[~np.isnan(targets[rows, column])]
                    ranks = [sign[m] * rankdata(values[m][kept]) for m in order[:k]]
                    taus.setdefault((key, f"top{k} {name}"), []).append(
                        kendall(np.mean(ranks, axis=0), targets[kept, column])
                    )
    header = [f"top{k} {name}" for k in KS for name in ("val", "test")]
    rows = []
    for key in criteria:
        best = max(np.mean(v) for (c, m), v in taus.items() if c == key and m in frame.columns)
        rows.append([key, *(f"{np.mean(taus[(key, h)]):.3f}" for h in header), f"{best:.3f}"])
    print(f"## {task}")
    print("\n".join(markdown_table(["criterion", *header, "best metric"], rows)), flush=True)
