"""Real outputs with a short reference: how P(NoContr), chrF and BERTScore-MiniLM rank WMT DA
outputs whose (first) reference has fewer than SHORT_REFERENCE_WORDS words, beside as many
outputs with a longer one drawn at random (seed 0) from the same files.

    python docs/experiments/2026-12-03-short-texts/real_short.py [CHECKPOINT]

Kendall tau-b against each record's DA z-score, per group of records, with a 95 % range from
1,000 resamples of the group's distinct references (the records of one reference stay
together: many short ones are one byline or headline rated for many systems). WMT15-17 and
WMT21 DA
are training data of the translation checkpoint, and WMT15-17's held-in groups gave the base
real bases; nothing here is fitted or selected, it only reads.
"""

from __future__ import annotations

import gzip
import json
import sys

import numpy as np
from scipy.stats import kendalltau

from evaluator.bench.realtext import Scorer
from evaluator.evaluator import SHORT_REFERENCE_WORDS
from evaluator.hub import load
from mismatch_core.pairs import word_count
from mismatch_core.resources import REPO_ROOT

DATA = REPO_ROOT.parent / "shared" / "data" / "human" / "translation"
FILES = ["wmt15_da", "wmt16_da", "wmt17_da", "wmt21_da"]
RESAMPLES = 1000

records = []
for name in FILES:
    with gzip.open(DATA / f"{name}.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            ref = record["ref"] if isinstance(record["ref"], str) else record["ref"][0]
            records.append((ref, record["gen"], record["scores"]["da_z"]))
short = [r for r in records if word_count(r[0]) < SHORT_REFERENCE_WORDS]
longer = [r for r in records if word_count(r[0]) >= SHORT_REFERENCE_WORDS]
rng = np.random.default_rng(0)
drawn = [longer[i] for i in rng.choice(len(longer), size=len(short), replace=False)]

checkpoint = sys.argv[1] if len(sys.argv) > 1 else REPO_ROOT / "checkpoints" / "mismatch-base"
scorer = Scorer(load(checkpoint))
print(f"{len(records)} records; {len(short)} with a reference of < {SHORT_REFERENCE_WORDS} words")
print("| records | n | references | " + " | ".join(scorer.metrics) + " |")
print("|---|---|---|" + "---|" * len(scorer.metrics))
for label, group in (("short reference", short), ("longer reference, drawn", drawn)):
    scores = scorer.score([r[0] for r in group], [r[1] for r in group])
    z = np.array([r[2] for r in group])
    by_reference: dict[str, list[int]] = {}
    for index, record in enumerate(group):
        by_reference.setdefault(record[0], []).append(index)
    members = list(by_reference.values())
    cells = []
    for metric in scorer.metrics:
        tau = kendalltau(scores[metric], z).statistic
        resampled = []
        for _ in range(RESAMPLES):
            picked = rng.integers(len(members), size=len(members))
            rows = np.concatenate([members[i] for i in picked])
            resampled.append(kendalltau(scores[metric][rows], z[rows]).statistic)
        low, high = np.nanquantile(resampled, [0.025, 0.975])
        cells.append(f"{tau:.3f} [{low:.3f}, {high:.3f}]")
    print(f"| {label} | {len(group)} | {len(members)} | " + " | ".join(cells) + " |")
    read_correct = np.mean(scores["P(NoContr)"] >= 0.5)
    top = z >= np.quantile(z, 0.75)
    print(
        f"  read as NoContr: all {read_correct:.3f}, top quarter by DA z "
        f"{np.mean(scores['P(NoContr)'][top] >= 0.5):.3f}"
    )
