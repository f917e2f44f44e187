"""Experiment only: put this folder on PYTHONPATH and the rating mix chooses the criterion
columns named in MIX_BY_TAU (comma-separated positions, e.g. 1 for summarization's
consistency) by validation tau alone, without the contrast-copy rule; every other column as
shipped (evaluator.finetune.rating_mix.best_mixes)."""

import os
import sys

import evaluator.finetune.rating_mix as rating_mix

_columns = [int(c) for c in os.environ.get("MIX_BY_TAU", "").split(",") if c]
_best_mixes = rating_mix.best_mixes


def best_mixes(records, targets, copies=None, parents=None):
    anchors, shares = _best_mixes(records, targets, copies, parents)
    if _columns and copies is not None:
        free_anchors, free_shares = _best_mixes(records, targets, None, None)
        for c in _columns:
            anchors[c], shares[c] = free_anchors[c], free_shares[c]
    return anchors, shares


rating_mix.best_mixes = best_mixes
print(f"mix_by_tau: columns {_columns} chosen by tau alone", file=sys.stderr)
