"""What the shipped base names on held-out highly rated real outputs it reads as errors
(the realtext bench's unperturbed bases, seed 13, up to 150 per dataset): how many, the
most likely error class of each, 12 drawn at random and every one named GramErr.

    python docs/experiments/2026-12-03-aspect-twin/false_alarms.py
"""

import random
from collections import Counter

from evaluator import Evaluator
from evaluator.cli.bench.realtext import DEFAULT_BASES_LIMIT
from evaluator.realtext_data import load_bases
from mismatch_core.resources import data_dir

bases = load_bases(data_dir() / "human", DEFAULT_BASES_LIMIT, 13)
evaluator = Evaluator.from_pretrained("checkpoints/mismatch-base")
records = [record for good in bases.values() for record in good]
read = evaluator.predict(
    [[r.refs[0]] for r in records], [r.gen for r in records], progress=False, spans=False
)
alarms = [(r, p) for r, p in zip(records, read, strict=True) if p.score < 0.5]


def top_error(prediction) -> str:
    return max((k for k in prediction.mismatch if k != "NoContr"), key=prediction.mismatch.get)


def show(record, prediction) -> str:
    error = top_error(prediction)
    return (
        f"{prediction.score:.3f} {error} {prediction.mismatch[error]:.2f}\n"
        f"  R: {record.refs[0][:160]}\n  G: {record.gen[:160]}"
    )


print(len(records), "bases;", len(alarms), "read as errors")
print(Counter(top_error(p) for _, p in alarms).most_common())
for record, prediction in random.Random(0).sample(alarms, 12):
    print(show(record, prediction))
print("\nAll named GramErr:")
for record, prediction in alarms:
    if top_error(prediction) == "GramErr":
        print(show(record, prediction))
