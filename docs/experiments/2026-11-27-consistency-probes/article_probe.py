"""Does the base's reading of a summary against its article rank SummEval consistency?

Scores every (article, summary) pair with the shipped base (the article as the reference)
and prints, on the training part of each `mismatch evaluate` seed (never its test groups),
Kendall τ-b between each class's -log P and every criterion. Analysis only.

    python docs/experiments/2026-11-27-consistency-probes/article_probe.py OUT.npy
"""

import sys
from pathlib import Path

import numpy as np

from evaluator.evaluator import Evaluator
from evaluator.finetune.agreement import kendall
from evaluator.finetune.datamodule import split_rows
from evaluator.tasks import get_task, load_task_records
from mismatch_core.taxonomy import CODES

CRITERIA = ("consistency", "relevance", "fluency", "coherence")

records = load_task_records(get_task("summarization"))  # as mismatch evaluate reads them
probabilities_file = Path(sys.argv[1]).with_suffix(".npy")  # np.save adds it otherwise
if not probabilities_file.exists():
    base = Evaluator.from_pretrained("checkpoints/mismatch-base")
    predictions = base.predict(
        [record.src for record in records],
        [record.gen for record in records],
        spans=False,
        progress=False,
    )
    np.save(probabilities_file, [[p.mismatch[code] for code in CODES] for p in predictions])
probabilities = np.load(probabilities_file)
for seed in (0, 1, 2):
    train, _ = split_rows(records, np.arange(len(records)), seed, 0.2)
    for criterion in CRITERIA:
        ratings = np.array([records[i].scores.get(criterion, np.nan) for i in train])
        rated = ~np.isnan(ratings)
        taus = []
        for k, code in enumerate(CODES):
            reading = -np.log(probabilities[train][rated, k] + 1e-4)  # high: class unlikely
            sign = -1 if code == "NoContr" else 1
            taus.append(f"{code} {kendall(sign * reading, ratings[rated]):+.3f}")
        print(seed, criterion, " ".join(taus), flush=True)
