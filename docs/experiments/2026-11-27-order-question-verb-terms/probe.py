"""Reworded gens with one order word or question turned, and without (python probe.py
CHECKPOINT): the three most likely classes of each."""

import sys

from evaluator import Evaluator

PAIRS = [
    (
        "Earlier this year, the company reported a 12 percent rise in profits.",
        "Later this year, the firm said its profits had grown by 12 percent.",
    ),
    (
        "The company hired 300 new staff after it reported a rise in profits.",
        "Before announcing higher profits, the firm took on 300 new employees.",
    ),
    (
        "The rise in profits was followed by a plan to hire 300 staff.",
        "A plan to take on 300 employees was preceded by the increase in profits.",
    ),
    (
        "When will the company hire 300 new staff in Manchester?",
        "Where is the firm going to take on 300 new employees in Manchester?",
    ),
    ("Why did the company hire 300 new staff?", "Did the firm take on 300 new employees?"),
    (
        "How many staff will the company hire in Manchester?",
        "Which employees is the firm going to take on in Manchester?",
    ),
    # no change
    (
        "When will the company hire 300 new staff in Manchester?",
        "When is the firm going to take on 300 new employees in Manchester?",
    ),
    (
        "The company hired 300 new staff after it reported a rise in profits.",
        "After announcing higher profits, the firm took on 300 new employees.",
    ),
    (
        "Earlier this year, the company reported a 12 percent rise in profits.",
        "Earlier this year, the firm said its profits had grown by 12 percent.",
    ),
]

evaluator = Evaluator.from_pretrained(sys.argv[1])
predictions = evaluator.predict([r for r, _ in PAIRS], [g for _, g in PAIRS], progress=False)
for (_, gen), prediction in zip(PAIRS, predictions, strict=True):
    top = sorted(prediction.mismatch.items(), key=lambda kv: -kv[1])[:3]
    print(gen[:60], "|", ", ".join(f"{code} {p:.2f}" for code, p in top))
