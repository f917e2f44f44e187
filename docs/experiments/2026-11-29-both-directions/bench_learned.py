"""`mismatch bench realtext --parts sick,bases,darr` where P(NoContr) is the learned reading
(learned_reading.py, fitted on the real train split's readings that stack_probe.py saved) and
each error class keeps its share of the rest; the baselines as the bench computes them.
READING is `both` (the learned reading of both ways), `one-way` (its control, the same
regression on the forward reading alone, run after `both` was read) or `calibrated` (the
control fitted on the real val split's readings, its intercept set so that it reads 183 of
that split's 242 real bases as NoContr, as the shipped base does; the rules' addendum).

    python bench_learned.py CKPT PAIRS_DIR READINGS_NPZ READING OUT_JSON
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from learned_reading import fit, fit_calibrated, fit_one_way, inputs, one_way_inputs

from evaluator.cli.bench.realtext import (
    DEFAULT_BASES_LIMIT,
    DEFAULT_DARR_LIMIT,
    OURS,
    REPORTS,
    Scorer,
    bench_bases,
    bench_darr,
    bench_sick,
    run_parts,
    write_result,
)
from evaluator.hub import load
from evaluator.inference import predict_proba
from evaluator.realtext_data import DARR, SICK_TRIAL
from mismatch_core.resources import data_dir

checkpoint, pairs, readings = load(sys.argv[1]), Path(sys.argv[2]), np.load(sys.argv[3])
reading, out = sys.argv[4], sys.argv[5]
if reading not in ("both", "one-way", "calibrated"):
    sys.exit(f"READING must be both, one-way or calibrated, got {reading!r}")
nocontr = (pd.read_parquet(pairs / "real" / "train.parquet").label == "NoContr").to_numpy()
if reading == "both":
    learned = fit(readings["train_fwd"], readings["train_rev"], nocontr)
elif reading == "one-way":
    learned = fit_one_way(readings["train_fwd"], nocontr)
else:
    val_nocontr = (pd.read_parquet(pairs / "real" / "val.parquet").label == "NoContr").to_numpy()
    shipped_reads = int((readings["val_fwd"][val_nocontr, 0] >= 0.5).sum())
    learned = fit_calibrated(readings["val_fwd"], val_nocontr, shipped_reads)
    print(f"calibrated on the real val split: {shipped_reads} of {val_nocontr.sum()} real bases")


class LearnedScorer(Scorer):
    """The bench's scorer with P(NoContr) the learned reading."""

    def score(self, refs: list[str], gens: list[str]) -> dict[str, np.ndarray]:
        scores = super().score(refs, gens)
        forward = scores["probabilities"]
        if reading == "both":
            reverse = predict_proba(self.checkpoint, gens, refs)[:, 0]
            p = learned.predict_proba(inputs(forward, reverse))[:, 1]
        else:
            p = learned.predict_proba(one_way_inputs(forward))[:, 1]
        errors = forward[:, 1:] / np.clip(forward[:, 1:].sum(axis=1, keepdims=True), 1e-12, None)
        scores["probabilities"] = np.c_[p, errors * (1 - p)[:, None]]
        scores[OURS] = p
        return scores


scorer = LearnedScorer(checkpoint)
root = data_dir()
result: dict = {"checkpoint": sys.argv[1], "reading": reading, "seconds": {}}
runs = {
    "sick": lambda: bench_sick(scorer, root / SICK_TRIAL),
    "bases": lambda: bench_bases(scorer, root / "human", DEFAULT_BASES_LIMIT, 13),
    "darr": lambda: bench_darr(scorer, root / DARR, DEFAULT_DARR_LIMIT, 13),
}
run_parts(["sick", "bases", "darr"], runs, REPORTS, result)
write_result(out, result)
