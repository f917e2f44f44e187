"""Does P(NoContr) fall as errors pile up? The real bases of the adapt val split (training
side), one chain of up to 3 errors of one class each (``contrast_records``), scored with a
checkpoint: per depth, the share of copies that score below the text they were made from.

    python graded_probe.py CHECKPOINT   (about 1 min)
"""

import sys

import numpy as np
import pandas as pd

from evaluator.evaluator import Evaluator
from evaluator.finetune.contrast import contrast_records
from evaluator.human_data import HumanRecord

frame = pd.read_parquet("/work/data/s37/pipe/real/val.parquet")
frame = frame[frame.rule == "real_base"]
records = [
    HumanRecord(id=r.id, refs=(r.ref,), gen=r.gen, src=None, group=r.group, scores={})
    for r in frame.itertuples()
]
copies, owners, parents = contrast_records(records, 9 * len(records), seed=5, depth=3)
evaluator = Evaluator.from_pretrained(sys.argv[1])


def scores(refs: list[str], gens: list[str]) -> np.ndarray:
    predictions = evaluator.predict(refs, gens, progress=False, spans=False)
    return np.array([p.mismatch["NoContr"] for p in predictions])


bases = scores([r.refs[0] for r in records], [r.gen for r in records])
copy_scores = scores([records[o].refs[0] for o in owners], [c.gen for c in copies])
depth = np.zeros(len(copies), dtype=int)
below = np.zeros(len(copies), dtype=bool)
for i, parent in enumerate(parents):
    depth[i] = 1 if parent < 0 else depth[parent] + 1
    below[i] = copy_scores[i] < (bases[owners[i]] if parent < 0 else copy_scores[parent])
for d in (1, 2, 3):
    at = depth == d
    print(
        f"depth {d}: {at.sum()} copies, below their parent {below[at].mean():.3f}, "
        f"median P(NoContr) {np.median(copy_scores[at]):.4f}"
    )
print(f"bases: median P(NoContr) {np.median(bases):.4f}")
