"""What fitted checkpoints rate beyond the outputs they were fitted on: one reference against
an exact copy, an empty output, the copy with 21 for 12, and a paraphrase.

Usage: python beyond_outputs.py CHECKPOINT [CHECKPOINT ...]
(the user-file fits: `mismatch finetune --ratings FILE [--scale ...] --out DIR`, the config's
seed 0; a checkpoint whose ratings read a source gets SOURCE below as every pair's src.)
"""

import sys

from evaluator import Evaluator

REFERENCE = (
    "The company reported a 12 percent rise in profits last year and plans to hire 300 new "
    "staff in Manchester."
)
SOURCE = (
    "The company said on Monday that its profits rose 12 percent last year. It plans to hire "
    "300 new staff in Manchester, where it opened an office in 2019."
)
OUTPUTS = {
    "copy": REFERENCE,
    "empty": "",
    "wrong number": REFERENCE.replace("12", "21"),
    "paraphrase": "The firm said profits rose 12 percent last year and it intends to hire 300 "
    "new staff in Manchester.",
}

for folder in sys.argv[1:]:
    evaluator = Evaluator.from_pretrained(folder)
    pairs = len(OUTPUTS)
    reads_source = bool(evaluator.checkpoint.model.config.source_features)
    srcs = {"srcs": [SOURCE] * pairs} if reads_source else {}
    results = evaluator.predict([REFERENCE] * pairs, list(OUTPUTS.values()), **srcs)
    print(f"{folder} (criteria {', '.join(results[0].ratings)})")
    for name, result in zip(OUTPUTS, results, strict=True):
        ratings = " / ".join(f"{value:.2f}" for value in result.ratings.values())
        print(f"  {name:<13} {ratings}   labels {', '.join(result.labels)}")
