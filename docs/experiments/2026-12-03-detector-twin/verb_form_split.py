"""Broken verb forms (GramErr/verb_form on the same 3,000 corpus texts as detector_split.py):
how often a base reads them as NoContr, by the size of the detector's `disfluency` feature,
and twelve of those it reads as NoContr.

    python docs/experiments/2026-12-03-detector-twin/verb_form_split.py CHECKPOINT
"""

import random
import sys

import numpy as np

from evaluator import Evaluator
from evaluator.features.encoder_pass import encode_distinct
from mismatch_core.jsonl import iter_jsonl
from mismatch_core.resources import data_dir, load_spacy
from synth.perturb.base import Context
from synth.perturb.grammar import verb_form

texts = [
    record["text"]
    for name in ("coco", "multi30k", "squad", "webnlg")
    for _, record in iter_jsonl(data_dir() / "corpora" / f"{name}.jsonl.gz")
]
docs = list(load_spacy().pipe(random.Random(13).sample(texts, 3000), batch_size=64))
pairs = [
    (doc.text, change.text)
    for k, doc in enumerate(docs)
    if (change := verb_form(doc, Context(rng=random.Random(k)))) is not None
]
encoded = encode_distinct(
    [t for pair in pairs for t in pair], keep_tokens=False, keep_disfluency=True
)
diff = np.array([encoded[gen].disfluency - encoded[ref].disfluency for ref, gen in pairs])
read = Evaluator.from_pretrained(sys.argv[1]).predict(
    [[ref] for ref, _ in pairs], [gen for _, gen in pairs], progress=False, spans=False
)
nocontr = np.array([p.score for p in read]) >= 0.5
for low, high in [(-99, 0), (0, 2), (2, 4), (4, 8), (8, 99)]:
    inside = (diff > low) & (diff <= high)
    share = f"{nocontr[inside].mean():.1%}" if inside.any() else "-"
    print(f"feature in ({low}, {high}]: {inside.sum()} texts, read as NoContr {share}")
for i in random.Random(1).sample(list(np.flatnonzero(nocontr)), min(12, int(nocontr.sum()))):
    print(f"{diff[i]:+.1f} | {pairs[i][0]} -> {pairs[i][1]}")
