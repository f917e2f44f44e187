"""Held-out τ of the ridge fit of the metrics per alpha vs best single metric (analysis only)."""

import os
import sys
from dataclasses import replace

import numpy as np
from sklearn.model_selection import GroupKFold

from evaluator.cli.finetune import load_settings, prepare
from evaluator.finetune.agreement import kendall
from evaluator.finetune.datamodule import split_rows, training_rows
from evaluator.finetune.evaluate import baseline_kendall
from evaluator.inference import over_references

CACHE = os.environ.get("FEATURE_CACHE", "data/human_features")  # the feature caches

ALPHAS = [1, 10, 100, 1000, 10000, 100000]


def ridge(x, y, a):
    mx, my = x.mean(0), y.mean()
    c = x - mx
    w = np.linalg.solve(c.T @ c + a * np.eye(x.shape[1]), c.T @ (y - my))
    return w, my - mx @ w


for task in sys.argv[1:]:
    s = load_settings(task, f"configs/finetune/{task}.yaml")
    p = prepare(task, s.checkpoint, replace(s, cache_dir=CACHE))
    names = p.base.feature_names  # each feature's max, as max_over_references read them then
    X = np.nan_to_num(over_references(p.features, p.inputs.pair_owner(), names, "max"))
    # record level: first pair row of each record after max
    X = X[p.inputs.pair_starts()]
    T = p.inputs.targets
    groups = np.array([r.group for r in p.records])
    crit = [c.key for c in p.task.criteria]
    res = {}
    for seed in (0, 1, 2):
        train, test = split_rows(p.records, np.arange(len(p.records)), seed, 0.2)
        train = training_rows(p.records, train, p.train_datasets)
        base = baseline_kendall(p, train, test)
        for k, key in enumerate(crit):
            tr = train[~np.isnan(T[train, k])]
            te = test[~np.isnan(T[test, k])]
            if len(tr) < 10:
                continue
            row = res.setdefault(key, {})
            for a in ALPHAS:
                w, b = ridge(X[tr], T[tr, k], a)
                row.setdefault(a, []).append(kendall(X[te] @ w + b, T[te, k]))
            # CV choice of alpha on train groups
            cv = {a: [] for a in ALPHAS}
            for f_tr, f_va in GroupKFold(5).split(tr, groups=groups[tr]):
                for a in ALPHAS:
                    w, b = ridge(X[tr[f_tr]], T[tr[f_tr], k], a)
                    cv[a].append(kendall(X[tr[f_va]] @ w + b, T[tr[f_va], k]))
            best_a = max(ALPHAS, key=lambda a: (np.mean(cv[a]), a))
            w, b = ridge(X[tr], T[tr, k], best_a)
            row.setdefault("cv", []).append(kendall(X[te] @ w + b, T[te, k]))
            row.setdefault("cv_alpha", []).append(best_a)
            for m in base:
                row.setdefault(("m", m), []).append(base[m][k])
            row.setdefault("n", []).append(len(tr))
    for key, row in res.items():
        line = " ".join(f"a{a}={np.mean(row[a]):.3f}" for a in ALPHAS)
        print(
            f"{task} {key:24s} n={np.mean(row['n']):.0f} {line} cv={np.mean(row['cv']):.3f} {row['cv_alpha']} best_metric={max(np.mean(v) for kk, v in row.items() if isinstance(kk, tuple)):.3f}",
            flush=True,
        )
