"""Per criterion, test τ of the fitted model at each learned share (analysis only, no selection)."""

import os
import sys
import time
from dataclasses import replace

import numpy as np

from evaluator.cli.finetune import load_settings, prepare
from evaluator.finetune.agreement import kendall
from evaluator.finetune.datamodule import split_rows
from evaluator.finetune.evaluate import baseline_kendall
from evaluator.finetune.rating_mix import SHARES, rating_parts
from evaluator.finetune.train import fit

CACHE = os.environ.get("FEATURE_CACHE", "data/human_features")  # the feature caches

config_dir = sys.argv[1]
if os.environ.get("NO_CONSTRAINT"):  # shares by τ alone, without the contrast-copy rule
    import evaluator.finetune.rating_mix as rm

    rm.contrast_parts = lambda *a: None
for task in sys.argv[2:]:
    s = load_settings(task, f"{config_dir}/{task}.yaml")
    p = prepare(task, s.checkpoint, replace(s, cache_dir=CACHE))
    T = p.inputs.targets
    crit = [c.key for c in p.task.criteria]
    res = {}
    start = time.time()
    for seed in (0, 1, 2):
        train, test = split_rows(p.records, np.arange(len(p.records)), seed, 0.2)
        module, data, _ = fit(p, train, s, seed, checkpoint=s.checkpoint)
        chosen = module.model.learned_share.numpy().copy()
        parts = rating_parts(module.model, p, test)
        base = baseline_kendall(p, train, test)
        for k, key in enumerate(crit):
            present = ~np.isnan(T[test, k])
            row = res.setdefault(key, {})
            for sh in SHARES:
                row.setdefault(sh, []).append(
                    kendall(parts.at(sh, k)[present], T[test, k][present])
                )
            row.setdefault("chosen", []).append(float(chosen[k]))
            row.setdefault("ours", []).append(
                kendall(parts.at(float(chosen[k]), k)[present], T[test, k][present])
            )
            for m in base:
                row.setdefault(("m", m), []).append(base[m][k])
    for key, row in res.items():
        best = max((np.mean(v), kk[1]) for kk, v in row.items() if isinstance(kk, tuple))
        line = " ".join(f"s{sh}={np.mean(row[sh]):.3f}" for sh in SHARES)
        print(
            f"{task} {key:26s} ours={np.mean(row['ours']):.3f} {line} chosen={row['chosen']} best={best[1]} {best[0]:.3f}",
            flush=True,
        )
    print(task, f"{time.time() - start:.0f}s", flush=True)
