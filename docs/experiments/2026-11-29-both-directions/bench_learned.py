"""`mismatch bench realtext --parts sick,bases,darr` where P(NoContr) is the learned reading
of both ways (learned_reading.py, fitted on the real train split's readings that
stack_probe.py saved) and each error class keeps its share of the rest; the baselines as the
bench computes them.

    python bench_learned.py CKPT PAIRS_DIR READINGS_NPZ OUT_JSON
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from learned_reading import fit, inputs

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
from evaluator.inference import predict_outputs
from evaluator.realtext_data import DARR, SICK_TRIAL
from mismatch_core.resources import data_dir

checkpoint, pairs, readings, out = (
    load(sys.argv[1]),
    Path(sys.argv[2]),
    np.load(sys.argv[3]),
    sys.argv[4],
)
train = pd.read_parquet(pairs / "real" / "train.parquet")
learned = fit(readings["train_fwd"], readings["train_rev"], (train.label == "NoContr").to_numpy())


class LearnedScorer(Scorer):
    """The bench's scorer with P(NoContr) read both ways."""

    def score(self, refs: list[str], gens: list[str]) -> dict[str, np.ndarray]:
        scores = super().score(refs, gens)
        forward = scores["probabilities"]
        reverse = np.zeros(len(refs))
        for start in range(0, len(refs), 2000):
            chunk = slice(start, start + 2000)
            outputs = predict_outputs(self.checkpoint, gens[chunk], refs[chunk])
            reverse[chunk] = outputs.probabilities[:, 0]
        nocontr = learned.predict_proba(inputs(forward, reverse))[:, 1]
        errors = forward[:, 1:] / np.clip(forward[:, 1:].sum(axis=1, keepdims=True), 1e-12, None)
        scores["probabilities"] = np.c_[nocontr, errors * (1 - nocontr)[:, None]]
        scores[OURS] = nocontr
        return scores


scorer = LearnedScorer(checkpoint)
root = data_dir()
result: dict = {"checkpoint": sys.argv[1], "reading": "learned, both ways", "seconds": {}}
runs = {
    "sick": lambda: bench_sick(scorer, root / SICK_TRIAL),
    "bases": lambda: bench_bases(scorer, root / "human", DEFAULT_BASES_LIMIT, 13),
    "darr": lambda: bench_darr(scorer, root / DARR, DEFAULT_DARR_LIMIT, 13),
}
run_parts(["sick", "bases", "darr"], runs, REPORTS, result)
write_result(out, result)
