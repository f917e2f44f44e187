"""SICK TRIAL contradictions that each base given reads with P(NoContr) >= 0.3, with the score.

python docs/experiments/2026-12-03-verb-form-detector/sick_contradictions.py CHECKPOINT...
"""

import sys

from evaluator import Evaluator
from evaluator.realtext_data import load_sick
from mismatch_core.resources import data_dir

pairs = [p for p in load_sick(data_dir() / "sick" / "sick_trial.jsonl.gz") if p.contradiction]
for checkpoint in sys.argv[1:]:
    read = Evaluator.from_pretrained(checkpoint).predict(
        [[p.ref] for p in pairs], [p.gen for p in pairs], progress=False, spans=False
    )
    print(f"{checkpoint}: {sum(r.score >= 0.5 for r in read)} of {len(pairs)} read as NoContr")
    for pair, reading in zip(pairs, read, strict=True):
        if reading.score >= 0.3:
            print(f"   {reading.score:.3f} | {pair.ref} || {pair.gen}")
