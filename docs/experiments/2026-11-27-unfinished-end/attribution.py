"""What moves a summarization checkpoint's ratings as SummEval summaries are cut (the 30
summaries and levels of ../2026-11-27-paraphrase-triples/truncation_probe.py): per level, the
change of each criterion's rating split into the text part (rating head), the metric map,
the ridge fit and the mismatch map, and the metric columns that move it most, averaged over
every reading of a pair (each of its references), not only the closest one. Analysis only.

Usage (from the repository root):
    python docs/experiments/2026-11-27-unfinished-end/attribution.py CHECKPOINT
"""

import random
import sys

import numpy as np
import torch

from evaluator.evaluator import Evaluator
from evaluator.tasks import get_task, load_task_records
from synth.perturb.noise import truncation
from synth.rules import parse

LEVELS = [0.10, 0.21, 0.31, 0.41]
PARTS = ["rating_head", "metric_rating", "ridge_rating", "mismatch_rating"]

rng = random.Random(0)
records = rng.sample(load_task_records(get_task("summarization"), None), 30)
cut = [
    [record.gen, *truncation(doc, rng, LEVELS)]
    for record, doc in zip(records, parse([r.gen for r in records]), strict=True)
]
evaluator = Evaluator.from_pretrained(sys.argv[1])
model = evaluator.checkpoint.model
captured: dict[str, list] = {}
for part in PARTS:
    getattr(model, part).register_forward_hook(
        lambda module, inputs, output, part=part: captured.setdefault(part, []).append(
            (inputs[0].detach(), output.detach())
        )
    )
share = model.learned_share.numpy()
names = [
    *(evaluator.checkpoint.feature_names[j] for j in model.set_columns),
    *(f"source_{name}" for name in model.config.source_features),
]
means = []  # per level: (mean output of each part, mean metric-map input)
for level in range(len(LEVELS) + 1):
    captured.clear()
    evaluator.predict(
        [list(r.refs) for r in records],
        [texts[level] for texts in cut],
        [r.src for r in records],
        progress=False,
    )
    outputs = {k: torch.cat([o for _, o in v]).mean(0).numpy() for k, v in captured.items()}
    columns = torch.cat([i for i, _ in captured["metric_rating"]]).mean(0).numpy()
    means.append((outputs, columns))
learned = model.metric_rating.weight.detach().numpy()
ridge = model.ridge_rating.weight.detach().numpy()
mixed = share[:, None] * learned + (1 - share[:, None]) * ridge
print("criteria:", [c.key for c in evaluator.criteria], "learned share:", share)
for level in range(1, len(LEVELS) + 1):
    (before, x0), (after, x1) = means[level - 1], means[level]
    delta = {k: after[k] - before[k] for k in before}
    text = share * delta["rating_head"]
    metric = share * delta["metric_rating"] + (1 - share) * delta["ridge_rating"]
    total = text + metric + delta["mismatch_rating"]
    print(f"level {level - 1} -> {level}: mean change {total.mean():+.4f}")
    for name, values in (
        ("text", text),
        ("metrics", metric),
        ("mismatch", delta["mismatch_rating"]),
    ):
        print(f"   {name:9s}", np.round(values, 4))
    contribution = mixed * (x1 - x0)[None, :]
    top = np.argsort(-np.abs(contribution.mean(0)))[:5]
    print("   top columns:", [(names[j], np.round(contribution[:, j], 4).tolist()) for j in top])
