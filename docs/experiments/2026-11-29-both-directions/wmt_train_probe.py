"""Training-side probe of where the one-way regression's ranking gain comes from: Kendall
τ-b between each score and DA z on the WMT15-17 records of the groups training may use
(`evaluator.realtext_data.partitions`, "train"; never the bench's held-out groups or DARR).

    python wmt_train_probe.py CKPT PAIRS_DIR READINGS_NPZ

Scores: P(NoContr); the one-way regression (learned_reading.fit_one_way on the real train
split's readings, as bench_learned.py fits it); the regression without the 1e-6 clip of its
inputs (clip at 1e-30); P(NoContr) with the pairs below 1e-6 ordered by the regression.
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from learned_reading import FLOOR, fit_one_way
from scipy.stats import kendalltau

from evaluator.hub import load
from evaluator.inference import predict_proba
from evaluator.realtext_data import partitions
from mismatch_core.resources import data_dir

checkpoint, pairs, readings = load(sys.argv[1]), Path(sys.argv[2]), np.load(sys.argv[3])
nocontr = (pd.read_parquet(pairs / "real" / "train.parquet").label == "NoContr").to_numpy()
control = fit_one_way(readings["train_fwd"], nocontr)
weights, intercept = control.coef_[0], control.intercept_[0]


def regression(probabilities: np.ndarray, floor: float) -> np.ndarray:
    """The regression's log-odds with its inputs floored at ``floor`` (FLOOR as fitted)."""
    return np.log(np.clip(probabilities, floor, 1)) @ weights + intercept


print("| dataset | records | share P(NoContr) < 1e-6 | P(NoContr) | regression | regression, no clip | P(NoContr), below 1e-6 by the regression |")  # fmt: skip
print("|---|---|---|---|---|---|---|")
for name, parts in partitions(data_dir() / "human").items():
    if not name.startswith("wmt"):
        continue
    records = parts["train"]
    refs = [r.refs[0] for r in records]  # WMT DA: one reference each
    z = np.array([r.scores["da_z"] for r in records])
    p = predict_proba(checkpoint, refs, [r.gen for r in records])
    score = p[:, 0]
    learned = regression(p, FLOOR)
    low = score < FLOOR
    # below the clip, the regression's order; above it, P(NoContr)'s (shifted above the rest)
    hybrid = np.where(low, learned - learned.max() - 1, np.log(score))
    taus = [kendalltau(s, z).statistic for s in (score, learned, regression(p, 1e-30), hybrid)]
    print(
        f"| {name} | {len(records)} | {low.mean():.3f} | "
        + " | ".join(f"{t:.4f}" for t in taus)
        + " |"
    )
