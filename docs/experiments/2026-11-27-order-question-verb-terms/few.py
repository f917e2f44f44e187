"""The top classes a checkpoint gives one class's real-base pairs, from dump.py's pickle
(python few.py DUMP.pkl CHECKPOINT PredOrdErr,QuestErr)."""

import collections
import pickle
import sys

import numpy as np

from evaluator.cli.bench.realtext import Scorer
from evaluator.hub import load
from mismatch_core.taxonomy import CODES

dump, checkpoint, classes = sys.argv[1:4]
with open(dump, "rb") as handle:
    pairs = pickle.load(handle)
scorer = Scorer(load(checkpoint))
for code in classes.split(","):
    items = [p for p in pairs["items"] if p.code == code]
    refs = [pairs["refs"][p.base] for p in items]
    probabilities = scorer.score(refs, [p.text for p in items])["probabilities"]
    top = np.array(CODES)[1 + probabilities[:, 1:].argmax(axis=1)]
    print(code, len(items), f"{(top == code).mean():.3f}", collections.Counter(top).most_common(5))
    for item, row in zip(items, probabilities, strict=True):
        best = np.argsort(-row[1:])[:2] + 1
        shown = ", ".join(f"{CODES[k]} {row[k]:.2f}" for k in best)
        print(f"  {item.rule}: {shown}, NoContr {row[0]:.2f}")
