"""`mismatch bench realtext --parts sick,bases,darr` (default sample) where P(NoContr) is the
combined reading (combined.py) of the base and a cross-encoder (xenc_train.py), fitted on the
real val split's readings and calibrated as the rules say; each error class keeps its share of
the rest; the baselines as the bench computes them.

    python bench_xenc.py CKPT PAIRS_DIR BOTH_WAYS_NPZ XENC_DIR OUT_JSON
"""

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from combined import Combined
from transformers import AutoTokenizer, BertForSequenceClassification

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
if str(both_ways["checkpoint"]) != sys.argv[1]:
    sys.exit(f"{sys.argv[3]} holds the readings of {both_ways['checkpoint']}, not {sys.argv[1]}")
tokenizer = AutoTokenizer.from_pretrained(xenc_dir / "model")
xenc = BertForSequenceClassification.from_pretrained(xenc_dir / "model").eval()
val = pd.read_parquet(pairs / "real" / "val.parquet")
nocontr = (val.label == "NoContr").to_numpy()
reads = int((both_ways["val_fwd"][nocontr, 0] >= 0.5).sum())
combined = Combined.fit(
    both_ways["val_fwd"], np.load(xenc_dir / "readings.npz")["val"][:, 0], nocontr, reads
)
print(f"fitted on the real val split, {reads} of {nocontr.sum()} bases read: {combined.describe()}")
xenc_seconds = 0.0


@torch.no_grad()
def same_meaning(refs: list[str], gens: list[str]) -> np.ndarray:
    """The cross-encoder's P(same meaning) of each pair, length-sorted batches of 64."""
    global xenc_seconds
    start = time.perf_counter()
    order = sorted(range(len(refs)), key=lambda i: len(refs[i]) + len(gens[i]))
    p = np.zeros(len(refs))
    for i in range(0, len(order), 64):
        chunk = order[i : i + 64]
        batch = tokenizer(
            [refs[j] for j in chunk],
            [gens[j] for j in chunk],
            padding=True,
            truncation=True,
            max_length=256,
            return_tensors="pt",
        )
        p[chunk] = torch.softmax(xenc(**batch).logits, -1)[:, 0].numpy()
    xenc_seconds += time.perf_counter() - start
    return p


class CombinedScorer(Scorer):
    """The bench's scorer with P(NoContr) the combined reading."""

    def score(self, refs: list[str], gens: list[str]) -> dict[str, np.ndarray]:
        scores = super().score(refs, gens)
        forward = scores["probabilities"]
        p = combined.p(forward, same_meaning(refs, gens))
        errors = forward[:, 1:] / np.clip(forward[:, 1:].sum(axis=1, keepdims=True), 1e-12, None)
        scores["probabilities"] = np.c_[p, errors * (1 - p)[:, None]]
        scores[OURS] = p
        return scores


scorer = CombinedScorer(checkpoint)
root = data_dir()
result: dict = {"checkpoint": sys.argv[1], "cross_encoder": str(xenc_dir), "seconds": {}}
runs = {
    "sick": lambda: bench_sick(scorer, root / SICK_TRIAL),
    "bases": lambda: bench_bases(scorer, root / "human", DEFAULT_BASES_LIMIT, 13),
    "darr": lambda: bench_darr(scorer, root / DARR, DEFAULT_DARR_LIMIT, 13),
}
run_parts(["sick", "bases", "darr"], runs, REPORTS, result)
result["cross_encoder_seconds"] = round(xenc_seconds, 1)
print(f"cross-encoder: {xenc_seconds:.0f} s of the run")
write_result(out, result)
