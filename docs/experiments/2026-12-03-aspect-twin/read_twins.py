"""How the shipped base reads the new harmless twin: every pair of a synth output folder
whose rule is NoContr/simple_aspect (the present progressive as the simple present), and
the pairs of the same folder where a GramErr/verb_form error was applied ('is riding' ->
'is ride') for contrast.

    python docs/experiments/2026-12-03-aspect-twin/read_twins.py SYNTH_DIR [CHECKPOINT]
"""

import sys
from collections import Counter

import pandas as pd

from evaluator import Evaluator

folder = sys.argv[1]
checkpoint = sys.argv[2] if len(sys.argv) > 2 else "checkpoints/mismatch-base"
pairs = pd.concat([pd.read_parquet(f"{folder}/{split}.parquet") for split in ("train", "val")])
evaluator = Evaluator.from_pretrained(checkpoint)
for rule in ("NoContr/simple_aspect", "GramErr/verb_form"):
    chosen = pairs[pairs["rule"] == rule]
    read = evaluator.predict(
        [[ref] for ref in chosen["ref"]], list(chosen["gen"]), progress=False, spans=False
    )
    as_nocontr = sum(p.score >= 0.5 for p in read)
    top = Counter(max(p.mismatch, key=p.mismatch.get) for p in read)
    print(
        f"{rule}: {len(read)} pairs, read as NoContr (P >= 0.5) {as_nocontr} "
        f"({as_nocontr / max(len(read), 1):.1%}); most likely class: {dict(top.most_common())}"
    )
