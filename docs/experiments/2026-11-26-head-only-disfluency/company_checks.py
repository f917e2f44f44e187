"""The company example of issue #27 for every task checkpoint in a folder: each text's mean
rating (as tests/test_shipped_checkpoints.py computes it) and top label, then the failed
checks (the paraphrase rated at or below a copy with one error).

Usage (from the repository root):
python docs/experiments/2026-11-26-head-only-disfluency/company_checks.py DIR
"""

import sys
from pathlib import Path

sys.path.insert(0, "tests")
from test_shipped_checkpoints import ERRORS, PARAPHRASE, REF, quality  # noqa: E402

from evaluator.evaluator import Evaluator  # noqa: E402

failed = []
for folder in sorted(Path(sys.argv[1]).glob("mismatch-*")):
    evaluator = Evaluator.from_pretrained(folder)
    if not evaluator.checkpoint.tasks:  # the base rates nothing
        continue
    texts = {"copy": REF, **ERRORS, "paraphrase": PARAPHRASE}
    predictions = evaluator.predict([REF] * len(texts), list(texts.values()), progress=False)
    by_text = dict(zip(texts, predictions, strict=True))
    rated = {name: quality(evaluator, prediction) for name, prediction in by_text.items()}
    labels = {name: prediction.labels[:1] for name, prediction in by_text.items()}
    print(folder.name, {name: round(value, 4) for name, value in rated.items()}, labels)
    failed += [(folder.name, error) for error in ERRORS if rated["paraphrase"] <= rated[error]]
print(len(failed), "failed:", failed)
