"""What moves a summarization checkpoint's ratings as SummEval summaries are cut (the 30
summaries and levels of ../2026-11-27-paraphrase-triples/truncation_probe.py): per level, the
change of each criterion's rating split into the text part (rating head), the metric map
with the frozen fit it is mixed with, and the mismatch map, and the metric columns that move
it most, averaged over every reading of a pair (each of its references), not only the
closest one. Analysis only.

Usage (from the repository root):
    python docs/experiments/2026-11-27-unfinished-end/attribution.py CHECKPOINT
"""

import runpy
import sys
from pathlib import Path

import numpy as np
import torch

from evaluator.evaluator import Evaluator

PROBE = Path(__file__).parents[1] / "2026-11-27-paraphrase-triples" / "truncation_probe.py"
PARTS = ["rating_head", "metric_rating", "ridge_rating", "mismatch_rating"]

probe = runpy.run_path(str(PROBE))
records, cut = probe["cut_summaries"]()
evaluator = Evaluator.from_pretrained(sys.argv[1])
model = evaluator.checkpoint.model
captured: dict[str, list] = {}
for part in PARTS:
    getattr(model, part).register_forward_hook(
        lambda module, inputs, output, part=part: captured.setdefault(part, []).append(
            (inputs[0].detach(), output.detach())
        )
    )
rate = model.rate
model.rate = lambda *args, **kwargs: (
    captured.setdefault("rate", []).append((None, (ratings := rate(*args, **kwargs)).detach()))
    or ratings
)  # what the parts must add up to
share = model.learned_share.numpy()
names = [
    *(evaluator.checkpoint.feature_names[j] for j in model.set_columns),
    *(f"source_{name}" for name in model.config.source_features),
]
means = []  # per level: (mean output of each part and of the rating, mean metric-map input)
for level in range(len(probe["LEVELS"]) + 1):
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
for level in range(1, len(probe["LEVELS"]) + 1):
    (before, x0), (after, x1) = means[level - 1], means[level]
    delta = {k: after[k] - before[k] for k in before}
    text = share * delta["rating_head"]
    metric = share * delta["metric_rating"] + (1 - share) * delta["ridge_rating"]
    total = text + metric + delta["mismatch_rating"]
    assert np.allclose(total, delta["rate"], atol=1e-5), (total, delta["rate"])
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
