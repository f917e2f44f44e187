"""Experiment patch (on PYTHONPATH), on top of ``map_choice``: for SummEval consistency the
rule for contrast copies counts only copies whose error concerns consistency (every class
but GramErr, RepErr, PredOrdErr and MissInfo: a summary may leave facts out or order them
badly and stay consistent), the other criteria every copy but the source copies (the article
given as the summary); the shares get a finer grid near 0. Prints, for consistency, every
candidate's validation τ and the copies it rates below their parent."""

import importlib.util
import sys
from pathlib import Path

import numpy as np

from evaluator.finetune import rating_mix
from evaluator.finetune.agreement import kendall
from evaluator.tasks import TASKS
from mismatch_core.taxonomy import ERROR_CODES, MEANING_ERROR_CODES

sys.path.append(str(Path(__file__).resolve().parent.parent))  # this record's folder
from compared_copies import compared_copies  # noqa: E402

MAP_CHOICE = Path(__file__).resolve().parent.parent / "map_choice" / "sitecustomize.py"
spec = importlib.util.spec_from_file_location("map_choice_patch", MAP_CHOICE)
assert spec is not None and spec.loader is not None
spec.loader.exec_module(importlib.util.module_from_spec(spec))

# the errors that leave a summary consistent: form (GramErr, RepErr), order, what is left out
NOT_ABOUT_CONSISTENCY = [c for c in ERROR_CODES if c not in MEANING_ERROR_CODES]
NOT_ABOUT_CONSISTENCY += ["PredOrdErr", "MissInfo"]
CRITERIA = [criterion.key for criterion in TASKS["summarization"].criteria]
rating_mix.SHARES = (0.0, 0.05, 0.1, 0.15, 0.25, 0.5, 0.75, 1.0)
shipped_contrast_parts = rating_mix.contrast_parts
shipped_best_mixes = rating_mix.best_mixes
compared: list[tuple[np.ndarray, np.ndarray]] = []  # (kind, class) of each compared copy


def copy_class(copy_id: str) -> str:
    """The error class in a copy's id (``<record>~<class>~<hash>``; a reference triple's
    class reads ``ref-copy-<class>``)."""
    return copy_id.split("~")[1].rsplit("-", 1)[-1]


def contrast_parts(model, prepared, rows, records):
    parts = shipped_contrast_parts(model, prepared, rows, records)
    contrast = prepared.contrast
    if parts is not None:
        ranked = compared_copies(contrast, rows)
        classes = np.array([copy_class(contrast.inputs.ids[c]) for c in ranked])
        compared.append((np.asarray(contrast.kinds)[ranked], classes))
    return parts


def column(parts: rating_mix.Parts, index: int, rows=slice(None)) -> rating_mix.Parts:
    return rating_mix.Parts(parts.learned[rows][:, [index]], parts.ridge[rows][:, [index]])


def best_mixes(records, targets, copies=None, parents=None):
    """The shipped choice, one criterion at a time, each with its own copies counted."""
    if copies is None or not compared:
        return shipped_best_mixes(records, targets, copies, parents)
    kinds, classes = compared[0]  # the same copies for every anchor
    compared.clear()
    anchors = np.zeros(targets.shape[1], dtype=np.int64)
    shares = np.ones(targets.shape[1])
    for k, criterion in enumerate(CRITERIA):
        counted = kinds != "source"
        if criterion == "consistency":
            counted &= ~np.isin(classes, NOT_ABOUT_CONSISTENCY)
            report(records, targets[:, k], copies, parents, k, counted)
        chosen = shipped_best_mixes(
            [column(parts, k) for parts in records],
            targets[:, [k]],
            [column(parts, k, counted) for parts in copies],
            [column(parts, k, counted) for parts in parents],
        )
        anchors[k], shares[k] = chosen[0][0], chosen[1][0]
    return anchors, shares


def report(records, target, copies, parents, k, counted) -> None:
    rated = ~np.isnan(target)
    needed = int((copies[0].at(1.0, k) < parents[0].at(1.0, k))[counted].sum())
    for a in range(len(records)):
        for share in rating_mix.SHARES:
            tau = kendall(records[a].at(share, k)[rated], target[rated])
            below = int((copies[a].at(share, k) < parents[a].at(share, k))[counted].sum())
            print(
                f"CONSISTENCY anchor {a} share {share:.2f} tau {tau:.3f} below {below} of "
                f"{int(counted.sum())} (needed {needed})",
                flush=True,
            )


rating_mix.contrast_parts = contrast_parts
rating_mix.best_mixes = best_mixes
