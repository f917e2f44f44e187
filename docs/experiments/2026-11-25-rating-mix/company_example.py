"""Mean rating of every task checkpoint in a folder on the company example of issue #27, as
tests/test_shipped_checkpoints.py computes it, with each criterion's learned share; then the
failed checks (the paraphrase rated at or below a copy with one error).

Usage (from the repository root): python docs/experiments/2026-11-25-rating-mix/company_example.py DIR
"""

import sys
from pathlib import Path

sys.path.insert(0, "tests")
from test_shipped_checkpoints import ERRORS, PARAPHRASE, REF, quality, sources  # noqa: E402

from evaluator.evaluator import Evaluator  # noqa: E402

print("| task | copy | negated | wrong number | wrong name | paraphrase | shares |")
print("|---|---|---|---|---|---|---|")
failed = []
for folder in sorted(Path(sys.argv[1]).glob("mismatch-*")):
    evaluator = Evaluator.from_pretrained(folder)
    if not evaluator.checkpoint.tasks:  # the base rates nothing
        continue
    texts = {"copy": REF, **ERRORS, "paraphrase": PARAPHRASE}
    refs = [REF] * len(texts)
    predictions = evaluator.predict(
        refs, list(texts.values()), sources(evaluator, refs), progress=False
    )
    by_text = dict(zip(texts, predictions, strict=True))
    model = evaluator.checkpoint.model
    shares = None if model.ridge_rating is None else model.learned_share.tolist()
    rated = {name: quality(evaluator, prediction) for name, prediction in by_text.items()}
    means = " | ".join(
        f"{rated[k]:.3f}" for k in ("copy", "negated", "number", "name", "paraphrase")
    )
    print(f"| {folder.name.removeprefix('mismatch-')} | {means} | {shares} |", flush=True)
    failed += [(folder.name, error) for error in ERRORS if rated["paraphrase"] <= rated[error]]
print(f"\n{len(failed)} failed checks: {failed}")
