"""The class probabilities a checkpoint gives every real-base pair of `mismatch bench
realtext`, pickled for reading (python dump.py CHECKPOINT OUT.pkl)."""

import pickle
import sys

from evaluator.cli.bench.realtext import DEFAULT_BASES_LIMIT, Scorer
from evaluator.hub import load
from evaluator.realtext_data import load_bases, perturb_bases
from mismatch_core.resources import data_dir

SEED = 13  # the bench's default

checkpoint, out = sys.argv[1:3]
scorer = Scorer(load(checkpoint))
records = [
    r for rs in load_bases(data_dir() / "human", DEFAULT_BASES_LIMIT, SEED).values() for r in rs
]
refs, gens = [r.refs[0] for r in records], [r.gen for r in records]
items = perturb_bases(refs, gens, [r.group for r in records], SEED).items
bases = scorer.score(refs, gens)
changed = scorer.score([refs[p.base] for p in items], [p.text for p in items])
with open(out, "wb") as handle:
    pickle.dump({"refs": refs, "gens": gens, "items": items, "base": bases, "ch": changed}, handle)
