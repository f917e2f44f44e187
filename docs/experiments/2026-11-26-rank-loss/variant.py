"""Per task and seed: τ of the fitted model on the validation groups (inside the training
part: what a variant is chosen on) and on the test groups (reported only). Analysis only."""

import os
import sys
import time
from dataclasses import replace

import numpy as np

from evaluator.cli.finetune import load_settings, prepare
from evaluator.finetune.agreement import kendall
from evaluator.finetune.datamodule import split_rows
from evaluator.finetune.evaluate import baseline_kendall, model_scores
from evaluator.finetune.train import fit

CACHE = os.environ.get("FEATURE_CACHE", "data/human_features")  # the feature caches

config_dir = sys.argv[1]
for task in sys.argv[2:]:
    s = load_settings(task, f"{config_dir}/{task}.yaml")
    p = prepare(task, s.checkpoint, replace(s, cache_dir=CACHE))
    T = p.inputs.targets
    crit = [c.key for c in p.task.criteria]
    start = time.time()
    val_taus, test = [], {}
    for seed in (0, 1, 2):
        train, held = split_rows(p.records, np.arange(len(p.records)), seed, 0.2)
        module, data, _ = fit(p, train, s, seed, checkpoint=s.checkpoint)
        for rows, sink in ((data.split["val"], "val"), (held, "test")):
            scores = model_scores(module, p, rows)
            taus = []
            for k, key in enumerate(crit):
                present = ~np.isnan(T[rows, k])
                if present.sum() < 2:
                    continue
                t = kendall(scores[present, k], T[rows, k][present])
                taus.append(t)
                if sink == "test":
                    test.setdefault(key, []).append(t)
            if sink == "val":
                val_taus.append(np.mean(taus))
        b = baseline_kendall(p, train, held)
        if seed == 0:
            base = {m: {} for m in b}  # the metric columns, and the source ones if read
        for m in b:
            for k, key in enumerate(crit):
                base[m].setdefault(key, []).append(b[m][k])
    test_mean = np.mean([np.mean(v) for v in test.values()])
    print(
        f"{task} val {np.mean(val_taus):.4f} test {test_mean:.4f} ({time.time() - start:.0f}s)",
        flush=True,
    )
    for key, v in test.items():
        best = max((np.mean(base[m][key]), m) for m in base)
        flag = "BELOW" if np.mean(v) < best[0] else ""
        print(f"   {key:28s} {np.mean(v):.3f}  best {best[1]} {best[0]:.3f} {flag}", flush=True)
