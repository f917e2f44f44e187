"""Mean rating per criterion of a summarization checkpoint as 30 SummEval summaries (drawn
with seed 0) are cut from the end, at the stress test's truncation levels. Analysis only.

Usage (from the repository root):
    python docs/experiments/2026-11-27-paraphrase-triples/truncation_probe.py CHECKPOINT
"""

import random
import sys

import numpy as np

from evaluator.evaluator import Evaluator
from evaluator.human_data import HumanRecord
from evaluator.tasks import get_task, load_task_records
from synth.perturb.noise import truncation
from synth.rules import parse

LEVELS = [0.10, 0.21, 0.31, 0.41]  # the stress test's noise ratios on SummEval


def cut_summaries() -> tuple[list[HumanRecord], list[list[str]]]:
    """The 30 records and, per record, its summary uncut and at each of LEVELS."""
    rng = random.Random(0)
    records = rng.sample(load_task_records(get_task("summarization"), None), 30)
    cut = [
        [record.gen, *truncation(doc, rng, LEVELS)]
        for record, doc in zip(records, parse([r.gen for r in records]), strict=True)
    ]
    return records, cut


def main(checkpoint: str) -> None:
    records, cut = cut_summaries()
    evaluator = Evaluator.from_pretrained(checkpoint)
    print("level | " + " | ".join(c.key for c in evaluator.criteria) + " | mean | P(NoContr)")
    for level in range(len(LEVELS) + 1):
        predictions = evaluator.predict(
            [list(r.refs) for r in records],
            [texts[level] for texts in cut],
            [r.src for r in records],
            progress=False,
        )
        means = [
            np.mean([c.normalise(p.ratings[c.key]) for p in predictions])
            for c in evaluator.criteria
        ]
        shown = " | ".join(f"{m:.4f}" for m in means)
        noise = 0.0 if level == 0 else LEVELS[level - 1]
        score = np.mean([p.score for p in predictions])
        print(f"{noise:.2f} | {shown} | {np.mean(means):.4f} | {score:.3f}")


if __name__ == "__main__":
    main(sys.argv[1])
