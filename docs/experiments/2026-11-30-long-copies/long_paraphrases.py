"""Long paraphrases: k SICK TRAIN two-way paraphrase pairs joined into one text (ref: the a
sides, gen: the b sides), five texts per k; P(NoContr) and the top label of the shipped base.
Usage, from the repository root: python docs/experiments/2026-11-30-long-copies/long_paraphrases.py"""

import gzip
import json
import random

from evaluator import Evaluator
from mismatch_core.resources import data_dir

with gzip.open(data_dir() / "sick" / "sick_train.jsonl.gz", "rt") as handle:
    rows = [json.loads(line) for line in handle]
para = [r for r in rows if r["paraphrase"]]
random.Random(0).shuffle(para)
ev = Evaluator.from_pretrained("checkpoints/mismatch-base")
refs, gens, keys = [], [], []
for k in (1, 2, 4, 8, 12, 16):
    for start in range(0, 5 * k, k):
        chunk = para[start:start + k]
        refs.append(" ".join(r["a"].rstrip(".") + "." for r in chunk))
        gens.append(" ".join(r["b"].rstrip(".") + "." for r in chunk))
        keys.append(k)
preds = ev.predict(refs, gens, progress=False, spans=False)
for k in (1, 2, 4, 8, 12, 16):
    ps = [p for p, kk in zip(preds, keys, strict=True) if kk == k]
    words = sum(len(g.split()) for g, kk in zip(gens, keys, strict=True) if kk == k) / len(ps)
    print(f"{k} sentences, ~{words:.0f} words:", " ".join(f"{p.score:.2f}/{(p.labels or ['-'])[0]}" for p in ps))
