"""Per criterion and share: contrast copies of val and test records rated below their parent (analysis only)."""

import os
import sys
from dataclasses import replace

import numpy as np

from evaluator.cli.finetune import load_settings, prepare
from evaluator.finetune.datamodule import split_rows
from evaluator.finetune.rating_mix import SHARES, contrast_parts, rating_parts
from evaluator.finetune.train import fit

CACHE = os.environ.get("FEATURE_CACHE", "data/human_features")  # the feature caches

task = sys.argv[1]
s = load_settings(task, f"configs/finetune/{task}.yaml")
p = prepare(task, s.checkpoint, replace(s, cache_dir=CACHE))
for seed in (0, 1, 2):
    train, test = split_rows(p.records, np.arange(len(p.records)), seed, 0.2)
    module, data, _ = fit(p, train, s, seed, checkpoint=s.checkpoint)
    for name, rows in (("val", data.split["val"]), ("test", test)):
        rec = rating_parts(module.model, p, rows)
        copies, parents = contrast_parts(module.model, p, rows, rec)
        print(seed, name, len(copies.learned), [c.key for c in p.task.criteria])
        for k in range(p.inputs.targets.shape[1]):
            print("  ", [int((copies.at(sh, k) < parents.at(sh, k)).sum()) for sh in SHARES])
