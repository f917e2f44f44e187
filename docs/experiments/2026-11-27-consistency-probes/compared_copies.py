"""The contrast copies ``rating_mix.contrast_parts`` compares for the records at ``rows``, in
its order (the copies those records own, reference-triple anchors left out), for the patches
of this record that count some of them only."""

import numpy as np

from evaluator.finetune import rating_mix


def compared_copies(contrast, rows) -> np.ndarray:
    owners = set(int(row) for row in rows)
    owned = [c for c, owner in enumerate(contrast.owners.tolist()) if owner in owners]
    return np.array([c for c in owned if contrast.parents[c] != rating_mix.ANCHOR], dtype=np.int64)
