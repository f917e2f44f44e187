"""Whole-text vs sentence-by-sentence reading of multi-sentence outputs (SICK TRAIN only).

Texts of k paraphrase pairs (ref: the a sides, gen: the b sides), 20 per k; each has an error
twin, one gen sentence replaced by the b side of a SICK TRAIN contradiction whose a side takes
that place in the ref. Sentence reading: each gen sentence against every ref sentence as a
reference (the closest decides), the text's score the minimum over its gen sentences.
Usage, from the repository root: python docs/experiments/2026-11-30-long-copies/sentence_probe.py
"""

import gzip
import json
import random

import numpy as np
from sklearn.metrics import roc_auc_score

from evaluator import Evaluator
from mismatch_core.resources import data_dir


def sentence(text: str) -> str:
    return text.rstrip(".") + "."


with gzip.open(data_dir() / "sick" / "sick_train.jsonl.gz", "rt") as handle:
    rows = [json.loads(line) for line in handle]
paraphrases = [r for r in rows if r["paraphrase"]]
contradictions = [r for r in rows if r["contradiction"]]
rng = random.Random(1)
rng.shuffle(paraphrases)
rng.shuffle(contradictions)
evaluator = Evaluator.from_pretrained("checkpoints/mismatch-base")

texts = []  # (k, kind, ref sentences, gen sentences)
used_paraphrases = used_contradictions = 0
for k in (1, 4, 8):
    for _ in range(20):
        chunk = paraphrases[used_paraphrases : used_paraphrases + k]
        used_paraphrases += k
        refs = [sentence(r["a"]) for r in chunk]
        gens = [sentence(r["b"]) for r in chunk]
        texts.append((k, "good", refs, gens))
        spot = rng.randrange(k)
        wrong = contradictions[used_contradictions]
        used_contradictions += 1
        wrong_refs, wrong_gens = list(refs), list(gens)
        wrong_refs[spot], wrong_gens[spot] = sentence(wrong["a"]), sentence(wrong["b"])
        texts.append((k, "error", wrong_refs, wrong_gens))

whole = evaluator.predict(
    [" ".join(refs) for _, _, refs, _ in texts],
    [" ".join(gens) for _, _, _, gens in texts],
    progress=False,
    spans=False,
)
owners, sentence_refs, sentence_gens = [], [], []
for index, (_, _, refs, gens) in enumerate(texts):
    for gen in gens:
        owners.append(index)
        sentence_refs.append(refs)
        sentence_gens.append(gen)
readings = evaluator.predict(sentence_refs, sentence_gens, progress=False, spans=False)
by_sentence = np.ones(len(texts))
for owner, reading in zip(owners, readings, strict=True):
    by_sentence[owner] = min(by_sentence[owner], reading.score)

for k in (1, 4, 8):
    rows_k = [i for i, text in enumerate(texts) if text[0] == k]
    good = [i for i in rows_k if texts[i][1] == "good"]
    errors = [i for i in rows_k if texts[i][1] == "error"]
    labels = [texts[i][1] == "good" for i in rows_k]
    figures = []
    for name, scores in (("whole text", [r.score for r in whole]), ("by sentence", by_sentence)):
        auroc = roc_auc_score(labels, [scores[i] for i in rows_k])
        figures.append(
            f"{name}: good read NoContr {sum(scores[i] >= 0.5 for i in good)}/20, errors read "
            f"NoContr {sum(scores[i] >= 0.5 for i in errors)}/20, AUROC {auroc:.3f}"
        )
    print(f"k={k}: " + " | ".join(figures))
