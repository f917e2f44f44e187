"""Broken verb forms read as NoContr (P(NoContr) >= 0.5) by each base given, per kind.

python docs/experiments/2026-12-03-verb-form-detector/base_kinds.py CHECKPOINT...
"""

import sys
from pathlib import Path

import numpy as np

from evaluator import Evaluator

sys.path.insert(0, str(Path(__file__).parent))
from verb_form_kinds import KINDS, corpus_pairs, kind  # noqa: E402

pairs = corpus_pairs()["verb_form"]
kinds = np.array([kind(ref, gen) for ref, gen in pairs])
kinds[~np.isin(kinds, KINDS)] = "other kinds"  # a changed -ing after be, an -ing made finite, ...
for checkpoint in sys.argv[1:]:
    read = Evaluator.from_pretrained(checkpoint).predict(
        [[ref] for ref, _ in pairs], [gen for _, gen in pairs], progress=False, spans=False
    )
    nocontr = np.array([reading.score for reading in read]) >= 0.5
    print(f"{checkpoint}: {nocontr.mean():.1%} of {len(pairs)} read as NoContr")
    for name in (*KINDS, "other kinds"):
        print(f"    {name:36s} {(kinds == name).sum():4d}  {nocontr[kinds == name].mean():6.1%}")
