"""How a checkpoint reads pairs whose reference has fewer than SHORT_REFERENCE_WORDS words (short
answers, an emoji) beside sentences that make the same kinds of change.

    python docs/experiments/2026-12-03-short-texts/probe.py [CHECKPOINT]

Reads pairs.jsonl beside this file: each pair lists the classes that would name it right
("expect"). A pair reads right when its most likely class is one of them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from evaluator import Evaluator
from evaluator.evaluator import SHORT_REFERENCE_WORDS
from mismatch_core.pairs import word_count
from mismatch_core.resources import REPO_ROOT

HERE = Path(__file__).parent
checkpoint = sys.argv[1] if len(sys.argv) > 1 else REPO_ROOT / "checkpoints" / "mismatch-base"
pairs = [json.loads(line) for line in (HERE / "pairs.jsonl").read_text().splitlines()]
evaluator = Evaluator.from_pretrained(checkpoint)
predictions = evaluator.predict(
    [p["ref"] for p in pairs], [p["gen"] for p in pairs], progress=False
)
right: dict[str, list[bool]] = {"short": [], "sentence": []}
print("| reference | generated | P(NoContr) | most likely | expected | right |")
print("|---|---|---|---|---|---|")
for pair, prediction in zip(pairs, predictions, strict=True):
    top = max(prediction.mismatch, key=prediction.mismatch.get)
    is_right = top in pair["expect"]
    length = "short" if word_count(pair["ref"]) < SHORT_REFERENCE_WORDS else "sentence"
    right[length].append(is_right)
    print(
        f"| {pair['ref']} | {pair['gen']} | {prediction.score:.3f} | {top} "
        f"{prediction.mismatch[top]:.2f} | {' or '.join(pair['expect'])} | "
        f"{'yes' if is_right else '**no**'} |"
    )
for length, marks in right.items():
    print(f"{length}: {sum(marks)} of {len(marks)} right")
