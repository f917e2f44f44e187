"""Experiment patch (on PYTHONPATH): print, per criterion, every rating-mix candidate the
validation groups choose among: its τ, and how many contrast copies rate below their parent,
all of them and without the source copies (the article given as the summary)."""

import sys
from pathlib import Path

import numpy as np

from evaluator.finetune import rating_mix
from evaluator.finetune.agreement import kendall

sys.path.append(str(Path(__file__).resolve().parent.parent))  # this record's folder
from compared_copies import compared_copies  # noqa: E402

shipped_contrast_parts = rating_mix.contrast_parts
shipped_best_mixes = rating_mix.best_mixes
compared_kinds: list[np.ndarray] = []  # per contrast_parts call, the kind of each compared copy


def contrast_parts(model, prepared, rows, records):
    parts = shipped_contrast_parts(model, prepared, rows, records)
    if parts is not None:
        compared = compared_copies(prepared.contrast, rows)
        compared_kinds.append(np.asarray(prepared.contrast.kinds)[compared])
    return parts


def best_mixes(records, targets, copies=None, parents=None):
    kinds = compared_kinds[0] if compared_kinds else None  # the same copies for every anchor
    compared_kinds.clear()
    for column in range(targets.shape[1]):
        rated = ~np.isnan(targets[:, column])
        print(f"MIX column {column}", flush=True)
        for anchor, parts in enumerate(records):
            for share in rating_mix.SHARES:
                tau = kendall(parts.at(share, column)[rated], targets[rated, column])
                line = f"MIX   anchor {anchor} share {share:.2f} tau {tau:.3f}"
                if copies is not None and kinds is not None:
                    below = copies[anchor].at(share, column) < parents[anchor].at(share, column)
                    line += f" below {int(below.sum())} without source {int(below[kinds != 'source'].sum())}"
                print(line, flush=True)
    anchors, shares = shipped_best_mixes(records, targets, copies, parents)
    print("MIX chosen anchors", anchors.tolist(), "shares", shares.tolist(), flush=True)
    return anchors, shares


rating_mix.contrast_parts = contrast_parts
rating_mix.best_mixes = best_mixes
