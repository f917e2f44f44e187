"""Usage, from the checkout: python THIS.py FEATURE_CACHE_DIR [TASK ...].
Per criterion test tau of the model's own ridge start (rating = ridge fit on the scaled
features of each record's closest reference; nothing trained), alpha chosen on the fit's
validation groups, against ours (docs/results)."""

import json
import sys
from dataclasses import replace

import numpy as np
import torch

from evaluator.cli.finetune import load_settings, prepare
from evaluator.finetune.datamodule import RatingDataModule, split_rows
from evaluator.finetune.evaluate import kendall, model_scores
from evaluator.finetune.module import RatingModule

res = json.load(open("docs/results/results.json"))["tasks"]
tasks = sys.argv[2:] or [
    "summarization",
    "data2text",
    "captioning",
    "translation",
    "dialogue",
    "question_generation",
]
ALPHAS = (1, 10, 100, 1000, 10000)
for task in tasks:
    settings = load_settings(task, f"configs/finetune/{task}.yaml")
    prep = prepare(task, "checkpoints/mismatch-base", replace(settings, cache_dir=sys.argv[1]))
    crit = [c.key for c in prep.task.criteria]
    out = {k: [] for k in crit}
    for seed in range(3):
        train, test = split_rows(prep.records, np.arange(len(prep.records)), seed, 0.2)
        data = RatingDataModule.for_rows(
            prep, train, seed, settings.val_fraction, settings.batch_size
        )
        data.setup("fit")
        fit_rows, val_rows = data.split["train"], data.split["val"]
        feats = torch.from_numpy(prep.features[prep.train_pairs[fit_rows]]).float()
        targ = torch.from_numpy(prep.inputs.targets[fit_rows]).float()
        per_alpha = {}
        for a in ALPHAS:
            m = RatingModule(task, checkpoint="checkpoints/mismatch-base", ridge_alpha=a)
            m.start_from_metric_fit(feats, targ)
            m.eval()
            per_alpha[a] = (model_scores(m, prep, val_rows), model_scores(m, prep, test))
        Y = prep.inputs.targets
        for c, k in enumerate(crit):

            def tau(s, rows, c=c, Y=Y):
                p = ~np.isnan(Y[rows, c])
                return kendall(s[p, c], Y[rows, c][p])

            best = max(ALPHAS, key=lambda a: tau(per_alpha[a][0], val_rows))
            out[k].append((tau(per_alpha[best][1], test), tau(per_alpha[10][1], test), best))
    for k in crit:
        row = res[task]["criteria"][k]
        bm = max(row["baselines"], key=lambda m: row["baselines"][m]["kendall"])
        r = np.array(out[k])
        print(
            f"{task:20s} {k:28s} ours {row['ours']['kendall']:.3f} best {bm} {row['baselines'][bm]['kendall']:.3f} | start(val a) {r[:, 0].mean():.3f} start(a=10) {r[:, 1].mean():.3f} alphas {r[:, 2].tolist()}",
            flush=True,
        )
