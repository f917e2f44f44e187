"""The class probabilities a checkpoint gives every real-base pair of `mismatch bench
realtext`, pickled for reading (python dump.py CHECKPOINT OUT.pkl)."""

import pickle
import sys

from evaluator.cli.bench.realtext import DEFAULT_BASES_LIMIT, Scorer
from evaluator.hub import load
from evaluator.realtext_data import real_base_set
from mismatch_core.resources import data_dir

SEED = 13  # the bench's default

checkpoint, out = sys.argv[1:3]
scorer = Scorer(load(checkpoint))
base_set = real_base_set(data_dir() / "human", DEFAULT_BASES_LIMIT, SEED)
refs, gens, items = base_set.refs, base_set.gens, base_set.perturbations.items
bases = scorer.score(refs, gens)
changed = scorer.score([refs[p.base] for p in items], [p.text for p in items])
with open(out, "wb") as handle:
    pickle.dump({"refs": refs, "gens": gens, "items": items, "base": bases, "ch": changed}, handle)
