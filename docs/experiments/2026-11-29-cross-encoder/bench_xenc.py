"""`mismatch bench realtext --parts sick,bases,darr` (default sample) where P(NoContr) is the
combined reading (combined.py) of the base and a cross-encoder (xenc_train.py), fitted on the
real val split's readings and calibrated as the rules say; each error class keeps its share of
the rest; the baselines as the bench computes them.

    python bench_xenc.py CKPT PAIRS_DIR BOTH_WAYS_NPZ XENC_DIR OUT_JSON [int8]

With `int8` the cross-encoder reads with its linear layers quantized to int8 and the
regression is fitted on its int8 readings (XENC_DIR/readings_int8.npz, shallow_train.py).
"""

import sys
from pathlib import Path

import numpy as np
from combined import Combined
from cross_encoder import CrossEncoder

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
from evaluator.realtext_data import DARR, SICK_TRIAL
from mismatch_core.resources import data_dir

checkpoint, pairs, both_ways = load(sys.argv[1]), Path(sys.argv[2]), np.load(sys.argv[3])
xenc_dir, out = Path(sys.argv[4]), sys.argv[5]
if sys.argv[6:] not in ([], ["int8"]):
    sys.exit(f"the last argument may only be int8, got {sys.argv[6:]}")
int8 = sys.argv[6:] == ["int8"]
if str(both_ways["checkpoint"]) != sys.argv[1]:
    sys.exit(f"{sys.argv[3]} holds the readings of {both_ways['checkpoint']}, not {sys.argv[1]}")
xenc = CrossEncoder(xenc_dir, int8)
readings = xenc_dir / ("readings_int8.npz" if int8 else "readings.npz")
combined = Combined.fit_on_val(pairs, both_ways, readings)
print(f"fitted on the real val split: {combined.describe()}")


class CombinedScorer(Scorer):
    """The bench's scorer with P(NoContr) the combined reading."""

    def score(self, refs: list[str], gens: list[str]) -> dict[str, np.ndarray]:
        scores = super().score(refs, gens)
        scores["probabilities"] = combined.with_shares(
            scores["probabilities"], xenc.same_meaning(refs, gens)
        )
        scores[OURS] = scores["probabilities"][:, 0]
        return scores


scorer = CombinedScorer(checkpoint)
root = data_dir()
result: dict = {
    "checkpoint": sys.argv[1],
    "cross_encoder": str(xenc_dir),
    "int8": int8,
    "seconds": {},
}
runs = {
    "sick": lambda: bench_sick(scorer, root / SICK_TRIAL),
    "bases": lambda: bench_bases(scorer, root / "human", DEFAULT_BASES_LIMIT, 13),
    "darr": lambda: bench_darr(scorer, root / DARR, DEFAULT_DARR_LIMIT, 13),
}
run_parts(["sick", "bases", "darr"], runs, REPORTS, result)
result["cross_encoder_seconds"] = round(xenc.seconds, 1)
print(f"cross-encoder: {xenc.seconds:.0f} s of the run")
write_result(out, result)
