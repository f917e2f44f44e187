"""Experiment only: put this folder on PYTHONPATH and, in the rating mix's copy rule, the
criterion columns in MIX_MEANING_COLUMNS (comma-separated positions) count only the copies
with a meaning error (every class but GramErr and RepErr, and source copies); the other
columns count every copy, as shipped (evaluator.finetune.rating_mix.best_mixes)."""

import os
import sys

import numpy as np

import evaluator.finetune.rating_mix as rating_mix
from evaluator.finetune.contrast import ANCHOR
from mismatch_core.taxonomy import MEANING_ERROR_CODES

_columns = [int(c) for c in os.environ.get("MIX_MEANING_COLUMNS", "").split(",") if c]
_state = {}
_contrast_parts = rating_mix.contrast_parts
_best_mixes = rating_mix.best_mixes


def contrast_parts(model, prepared, rows, records):
    """As shipped; also keeps which of the compared copies carry a meaning error."""
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


def meaning_only(parts):
    return [
        rating_mix.Parts(p.learned[_state["meaning"]], p.ridge[_state["meaning"]]) for p in parts
    ]


def best_mixes(records, targets, copies=None, parents=None):
    """The shipped choice; the named columns chosen again with the meaning-error copies only."""
    anchors, shares = _best_mixes(records, targets, copies, parents)
    if _columns and copies is not None and parents is not None:
        kept = _best_mixes(records, targets, meaning_only(copies), meaning_only(parents))
        for c in _columns:
            anchors[c], shares[c] = kept[0][c], kept[1][c]
    return anchors, shares


rating_mix.contrast_parts = contrast_parts
rating_mix.best_mixes = best_mixes
print(f"meaning_copies: columns {_columns} count meaning-error copies only", file=sys.stderr)
