"""Experiment only: put this folder on PYTHONPATH and, in the rating mix's copy rule, the
criterion columns in MIX_MEANING_COLUMNS (comma-separated positions) count only the copies
with a meaning error (every class but GramErr and RepErr, and source copies); the other
columns count every copy, as shipped (evaluator.finetune.rating_mix.best_mixes)."""

import os
import sys

import numpy as np

import evaluator.finetune.rating_mix as rating_mix
from evaluator.finetune.agreement import kendall
from evaluator.finetune.contrast import ANCHOR
from mismatch_core.taxonomy import MEANING_ERROR_CODES

_columns = [int(c) for c in os.environ.get("MIX_MEANING_COLUMNS", "").split(",") if c]
_state = {}
_contrast_parts = rating_mix.contrast_parts


def contrast_parts(model, prepared, rows, records):
    result = _contrast_parts(model, prepared, rows, records)
    contrast = prepared.contrast
    if result is not None:
        position = {int(r) for r in rows}
        owned = [c for c, owner in enumerate(contrast.owners.tolist()) if owner in position]
        compared = [c for c in owned if contrast.parents[c] != ANCHOR]
        kinds = [contrast.inputs.ids[c].split("~")[1] for c in compared]
        _state["meaning"] = np.array(
            [k.rsplit("-", 1)[-1] in MEANING_ERROR_CODES or k == "copy-source" for k in kinds]
        )
        assert len(_state["meaning"]) == len(result[0].learned)
    return result


def best_mixes(records, targets, copies=None, parents=None):
    anchors = np.zeros(targets.shape[1], dtype=np.int64)
    shares = np.ones(targets.shape[1])
    for column in range(targets.shape[1]):
        present = ~np.isnan(targets[:, column])
        if present.sum() < 2:
            continue
        candidates = [(a, s) for a in range(len(records)) for s in rating_mix.SHARES]
        if copies is not None and parents is not None:
            keep = _state["meaning"] if column in _columns else slice(None)
            below = {
                (a, s): int((copies[a].at(s, column)[keep] < parents[a].at(s, column)[keep]).sum())
                for a, s in candidates
            }
            candidates = [p for p in candidates if below[p] >= below[(0, 1.0)]]
        scored = [
            (kendall(records[a].at(s, column)[present], targets[present, column]), s, -a)
            for a, s in candidates
        ]
        _, shares[column], anchor = max(scored)
        anchors[column] = -anchor
    return anchors, shares


rating_mix.contrast_parts = contrast_parts
rating_mix.best_mixes = best_mixes
print(f"concern: columns {_columns} count meaning-error copies only", file=sys.stderr)
