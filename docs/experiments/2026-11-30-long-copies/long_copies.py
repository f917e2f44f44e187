"""Exact copies of long texts, and the same copies with one number changed, read by every shipped
checkpoint with its scaler as committed and with the density column kept to the margin (the
scaler before format 3). Texts: the first words of the first three SummEval articles of at
least 350 words (../shared/data/human/summarization). Usage, from the repository root:
python docs/experiments/2026-11-30-long-copies/long_copies.py > long_copies.txt
"""

import gzip
import json
import re

from evaluator import Evaluator
from mismatch_core.resources import data_dir

LENGTHS = (40, 80, 120, 160, 180, 190, 200, 220, 250, 300, 350)
CHECKPOINTS = ("base", "summarization", "translation", "data2text", "captioning",
               "question_generation", "dialogue", "nli")

articles: list[str] = []  # SummEval rates several summaries of each article: take distinct ones
with gzip.open(data_dir() / "human" / "summarization" / "summeval.jsonl.gz", "rt") as handle:
    for line in handle:
        text = json.loads(line)["src"]
        if len(text.split()) >= max(LENGTHS) and text not in articles:
            articles.append(text)
        if len(articles) == 3:
            break


def quality(evaluator: Evaluator, prediction) -> float:
    """The ratings as one number, as tests/test_shipped_checkpoints.py reads them: NLI's
    entailment probability, else the mean rating with each criterion mapped to [0, 1]."""
    if evaluator.kind == "classification":
        return prediction.ratings["entailment"]
    return sum(c.normalise(prediction.ratings[c.key]) for c in evaluator.criteria) / len(
        evaluator.criteria
    )


def with_changed_number(text: str) -> str | None:
    """The text with its last number of two or more digits changed, None without one."""
    found = list(re.finditer(r"\b\d{2,}\b", text))
    if not found:
        return None
    last = found[-1]
    return text[: last.start()] + str(int(last.group()) + 7) + text[last.end() :]


refs, gens, kinds = [], [], []
for a, article in enumerate(articles):
    for n in LENGTHS:
        text = " ".join(article.split()[:n])
        refs.append(text), gens.append(text), kinds.append((a, n, "copy"))
        changed = with_changed_number(text)
        if changed is not None:
            refs.append(text), gens.append(changed), kinds.append((a, n, "number"))

for name in CHECKPOINTS:
    path = "checkpoints/mismatch-" + name
    evaluator = Evaluator.from_pretrained(path)
    srcs = refs if "summarization" in name else None  # that checkpoint reads a source
    readings = {}
    for scaler_kind in ("format 3 (density clipped)", "format 2 (to the margin)"):
        if scaler_kind.startswith("format 2"):
            evaluator.checkpoint.scaler.clipped = ()
        readings[scaler_kind] = evaluator.predict(refs, gens, srcs, progress=False, spans=False)
    print(f"== {path}")
    for kind_index, (a, n, kind) in enumerate(kinds):
        cells = []
        for predictions in readings.values():
            p = predictions[kind_index]
            label = p.labels[0] if p.labels else "-"
            rating = "" if not p.ratings else f" rating {quality(evaluator, p):.3f}"
            cells.append(f"{p.score:.3f} {label:<8}{rating}")
        print(f"article {a} {n:>3} words {kind:<6} | " + " | ".join(cells))
    for scaler_kind, predictions in readings.items():
        copies = [p.score for p, k in zip(predictions, kinds, strict=True) if k[2] == "copy"]
        errors = [p.score for p, k in zip(predictions, kinds, strict=True) if k[2] == "number"]
        print(f"   {scaler_kind}: copies >= 0.95: {sum(s >= 0.95 for s in copies)}/{len(copies)}; "
              f"number changed < 0.5: {sum(s < 0.5 for s in errors)}/{len(errors)}")
        if evaluator.rating_keys:  # each copy rated above its changed-number twin
            means = [quality(evaluator, p) for p in predictions]
            above = [means[i - 1] > means[i] for i, k in enumerate(kinds) if k[2] == "number"]
            print(f"   {scaler_kind}: copy rated above its number-changed twin: "
                  f"{sum(above)}/{len(above)}")
