"""On the validation groups of seeds 0-2 (inside each seed's training part; no test record is
read): τ of the ridge fit over the reference and source metric columns, at several penalties,
against the single column chosen on the fitted records. Analysis only.

Usage (from the repository root):
  FEATURE_CACHE=DIR python docs/experiments/2026-11-27-source-metrics/ridge_vs_single.py TASK CONFIG
"""

import os
import sys
from dataclasses import replace

import numpy as np
import torch

from evaluator.cli.finetune import load_settings, prepare
from evaluator.features.scaling import FeatureScaler
from evaluator.finetune.agreement import kendall
from evaluator.finetune.datamodule import VAL_SEED_OFFSET, split_rows, training_rows
from evaluator.finetune.module import ridge_fit, single_metric_fit
from evaluator.inference import over_references

CACHE = os.environ.get("FEATURE_CACHE", "data/human_features")
ALPHAS = (10, 30, 100, 300, 1000)

task, config = sys.argv[1], sys.argv[2]
settings = load_settings(task, config)
prepared = prepare(task, settings.checkpoint, replace(settings, cache_dir=CACHE))
owner = prepared.inputs.pair_owner()
columns = prepared.base.model.config.set_columns()
names = prepared.base.feature_names  # each feature's max, as the checkpoints of the day read them
maximum = over_references(prepared.features, owner, names, "max")
reference = maximum[prepared.train_pairs][:, columns]
targets = prepared.inputs.targets
found: dict[tuple[str, str], list[float]] = {}
for seed in (0, 1, 2):
    train, _ = split_rows(prepared.records, np.arange(len(prepared.records)), seed, 0.2)
    train = training_rows(prepared.records, train, prepared.train_datasets)
    fitted, val = split_rows(prepared.records, train, VAL_SEED_OFFSET + seed, 0.1)
    x = reference
    if prepared.inputs.source is not None:
        source = prepared.inputs.source
        x = np.concatenate([x, FeatureScaler.fit(source.iloc[fitted]).transform(source)], axis=1)
    x = torch.from_numpy(x).double()
    for k, criterion in enumerate(prepared.task.criteria):
        y = torch.from_numpy(targets[:, k]).double()
        fit_rows = fitted[~np.isnan(targets[fitted, k])]
        val_rows = val[~np.isnan(targets[val, k])]
        if len(val_rows) < 5:
            continue
        fits = {f"ridge {alpha}": ridge_fit(x[fit_rows], y[fit_rows], alpha) for alpha in ALPHAS}
        fits["single"] = single_metric_fit(x[fit_rows], y[fit_rows])
        for name, (weight, bias) in fits.items():
            rated = (x[val_rows] @ weight + bias).numpy()
            found.setdefault((criterion.key, name), []).append(kendall(rated, y[val_rows].numpy()))
names = ["single", *(f"ridge {alpha}" for alpha in ALPHAS)]
print("| criterion | " + " | ".join(names) + " |")
print("|---|" + "---|" * len(names))
for criterion in prepared.task.criteria:
    if (criterion.key, "single") in found:
        cells = " | ".join(f"{np.mean(found[(criterion.key, name)]):.3f}" for name in names)
        print(f"| {criterion.key} | {cells} |")
