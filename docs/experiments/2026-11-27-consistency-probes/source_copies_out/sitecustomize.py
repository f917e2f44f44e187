"""Experiment patch (on PYTHONPATH): the rating mix's rule for contrast copies leaves the
source copies (the article given as the summary) out. They still train the mean rating
through the contrast loss; an article copy is consistent and fluent, so only the mean
rating, not every criterion, should put it below the summary."""

import types

import numpy as np

from evaluator.finetune import rating_mix
from evaluator.finetune.datamodule import ContrastSet

shipped_contrast_parts = rating_mix.contrast_parts


def without_source_copies(contrast: ContrastSet) -> ContrastSet:
    kept = np.flatnonzero(np.asarray(contrast.kinds) != "source")
    position = np.full(len(contrast.kinds), -1, dtype=np.int64)
    position[kept] = np.arange(len(kept))
    parents = contrast.parents[kept].copy()
    inner = parents >= 0  # a parent that is another copy: never a source copy
    parents[inner] = position[parents[inner]]
    assert (parents[inner] >= 0).all()
    return ContrastSet(
        inputs=contrast.inputs.subset(kept),
        features=contrast.features[contrast.inputs.pair_rows(kept)],
        owners=contrast.owners[kept],
        parents=parents,
        depth=contrast.depth,
        pairs=contrast.pairs[kept],
        kinds=np.asarray(contrast.kinds)[kept],
    )


def contrast_parts(model, prepared, rows, records):
    if prepared.contrast is None:
        return shipped_contrast_parts(model, prepared, rows, records)
    view = types.SimpleNamespace(**vars(prepared))
    view.contrast = without_source_copies(prepared.contrast)
    return shipped_contrast_parts(model, view, rows, records)


rating_mix.contrast_parts = contrast_parts
