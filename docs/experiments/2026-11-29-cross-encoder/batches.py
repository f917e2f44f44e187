"""One epoch's training batches for the cross-encoders (xenc_train.py, shallow_train.py): the
examples shuffled, each pool of 50 batches' worth sorted by length and cut into batches, and
the batches shuffled, so a batch pads little."""

import numpy as np


def length_pooled(lengths: list[int], batch: int, rng: np.random.Generator) -> list[list[int]]:
    """Batches of example indices, given each example's length."""
    pool_size = 50 * batch
    order = rng.permutation(len(lengths))
    cut = []
    for start in range(0, len(order), pool_size):
        pool = sorted(order[start : start + pool_size], key=lambda j: lengths[j])
        cut += [pool[i : i + batch] for i in range(0, len(pool), batch)]
    return [cut[i] for i in rng.permutation(len(cut))]
