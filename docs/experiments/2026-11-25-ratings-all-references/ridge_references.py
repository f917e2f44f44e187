"""Usage, from the checkout: python THIS.py FEATURE_CACHE_DIR [TASK ...].
Ridge on raw metric features (standardised on the fit part, alpha chosen on validation
groups) per criterion: features of the closest reference (the pair the model reads,
prepared.train_pairs) vs max over all references (what the metric baselines read)."""

import json
import sys
from dataclasses import replace

import numpy as np

from evaluator.cli.finetune import load_settings, prepare
from evaluator.finetune.datamodule import split_rows
from evaluator.finetune.evaluate import kendall

res = json.load(open("docs/results/results.json"))["tasks"]
tasks = sys.argv[2:] or [
    "summarization",
    "captioning",
    "data2text",
    "translation",
    "dialogue",
    "question_generation",
]


def ridge(Z, Y, f, v, t, c):
    best = None
    for a in (1, 10, 100, 1000, 10000):
        A = np.c_[Z[f], np.ones(len(f))]
        w = np.linalg.solve(A.T @ A + a * np.diag([1] * Z.shape[1] + [0]), A.T @ Y[f, c])
        tv = kendall(np.c_[Z[v], np.ones(len(v))] @ w, Y[v, c])
        if best is None or tv > best[0]:
            best = (tv, w)
    return kendall(np.c_[Z[t], np.ones(len(t))] @ best[1], Y[t, c])


for task in tasks:
    settings = load_settings(task, f"configs/finetune/{task}.yaml")
    prep = prepare(task, "checkpoints/mismatch-base", replace(settings, cache_dir=sys.argv[1]))
    inputs = prep.inputs  # each feature's max, as record_features read them then
    Xmax = inputs.features.groupby(inputs.pair_owner()).max().to_numpy()
    Xclose = prep.inputs.features.to_numpy()[prep.train_pairs]
    Y = prep.inputs.targets
    crit = [c.key for c in prep.task.criteria]
    acc = {k: [] for k in crit}
    for seed in range(3):
        train, test = split_rows(prep.records, np.arange(len(prep.records)), seed, 0.2)
        fit, val = split_rows(prep.records, train, 1000 + seed, 0.1)
        for c, key in enumerate(crit):
            f = fit[~np.isnan(Y[fit, c])]
            v = val[~np.isnan(Y[val, c])]
            t = test[~np.isnan(Y[test, c])]
            row = []
            for X in (Xclose, Xmax):
                Z = (X - X[fit].mean(0)) / (X[fit].std(0) + 1e-9)
                row.append(ridge(Z, Y, f, v, t, c))
            acc[key].append(row)
    for key in crit:
        row = res[task]["criteria"][key]
        bm = max(row["baselines"], key=lambda m: row["baselines"][m]["kendall"])
        r = np.mean(acc[key], axis=0)
        print(
            f"{task:20s} {key:28s} ours {row['ours']['kendall']:.3f} best {bm} {row['baselines'][bm]['kendall']:.3f} | ridge closest ref {r[0]:.3f} | ridge max over refs {r[1]:.3f}",
            flush=True,
        )
