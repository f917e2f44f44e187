"""How much of the learned rating each criterion keeps over the ridge fit of the metrics.

Fine-tuning starts the metric map at the ridge fit of the training ratings and then learns
from the text, the mismatch head and the contrast copies. On some criteria what it learns
ranks held-out outputs worse than the ridge fit it started from, and then worse than a single
metric (docs/results.md). With ``rating_mix`` each criterion's rating is
``share * learned + (1 - share) * ridge + mismatch``: learned is the rating head plus the
metric map, ridge the map's frozen start, mismatch the map of the mismatch head's class
log-probabilities, kept outside the mix so that an error the model names lowers the rating
as much whatever the share. The share is chosen on the validation groups (never on test
records), so the learned part counts only as far as it earns there, and only among shares
that keep the validation records' contrast copies below the texts they were made from as
often as the learned rating does: ranked by τ alone, the mix gave back what the copies
taught and failed stress tests BERTScore passes
(docs/experiments/2026-11-25-rating-mix/README.md). With ``single_metric_anchor`` the ridge
fit has a rival per criterion: the least-squares line of the one metric column that ranks the
training ratings best (``evaluator.finetune.module.single_metric_fit``). Where a criterion
follows one metric closely (a summary's consistency, its document's ROUGE precision), the
ridge fit over every column ranks held-out outputs worse than that metric alone; the
validation groups choose the anchor with the share, under the same rule for the copies
(docs/experiments/2026-11-27-source-metrics).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from evaluator.finetune.agreement import kendall
from evaluator.finetune.contrast import ANCHOR
from evaluator.finetune.data import TaskInputs
from evaluator.finetune.datamodule import PreparedTask
from evaluator.finetune.outputs import task_outputs
from evaluator.model import MismatchModel

SHARES = (0.0, 0.25, 0.5, 0.75, 1.0)  # coarse: a validation slice holds a few hundred records


@dataclass(frozen=True)
class Parts:
    """Rating outputs (rows, criteria) of the learned part and of the ridge fit, each with
    the mismatch map added: the rating at share s is ``s * learned + (1 - s) * ridge``."""

    learned: np.ndarray
    ridge: np.ndarray

    def at(self, share: float, column: int) -> np.ndarray:
        return share * self.learned[:, column] + (1 - share) * self.ridge[:, column]


def best_mixes(
    records: Sequence[Parts],
    targets: np.ndarray,
    copies: Sequence[Parts] | None = None,
    parents: Sequence[Parts] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per criterion column, (anchor, share): the anchor (an index into ``records``, whose
    parts share the learned rating and differ in the frozen fit it is mixed with) and the
    share in SHARES whose mix ranks the rated records best (Kendall τ-b). A tie keeps the
    larger share, then the earlier anchor; a column with fewer than two rated records keeps
    the learned rating whole. With contrast copies (``copies[a]``, each against the text it
    was made from, ``parents[a]``), only mixes that rate as many copies below their parent as
    the learned rating does are candidates: the mix must not give back what the contrast
    copies taught (the stress tests' graded errors)."""
    anchors = np.zeros(targets.shape[1], dtype=np.int64)
    shares = np.ones(targets.shape[1])
    for column in range(targets.shape[1]):
        present = ~np.isnan(targets[:, column])
        if present.sum() < 2:
            continue
        candidates = [(a, share) for a in range(len(records)) for share in SHARES]
        if copies is not None and parents is not None:
            below = {
                (a, share): int((copies[a].at(share, column) < parents[a].at(share, column)).sum())
                for a, share in candidates
            }
            candidates = [pair for pair in candidates if below[pair] >= below[(0, 1.0)]]
        scored = [
            (kendall(records[a].at(share, column)[present], targets[present, column]), share, -a)
            for a, share in candidates
        ]
        _, shares[column], anchor = max(scored)
        anchors[column] = -anchor
    return anchors, shares


def output_parts(model: MismatchModel, inputs: TaskInputs, features: np.ndarray) -> Parts:
    """The learned and ridge outputs of every record of ``inputs`` (``features``: the scaled
    features of all its (record, reference) pairs), read as predict reads them."""
    kept = model.learned_share.clone()
    outputs = []
    try:
        for share in (1.0, 0.0):
            model.learned_share.fill_(share)
            _, _, ratings = task_outputs(model, features, inputs)
            assert ratings is not None  # a rating_mix model has a rating head
            outputs.append(ratings)
    finally:
        model.learned_share.copy_(kept)
    return Parts(outputs[0], outputs[1])


def rating_parts(model: MismatchModel, prepared: PreparedTask, rows: np.ndarray) -> Parts:
    """The learned and ridge outputs of the records at ``rows``."""
    features = prepared.features[prepared.inputs.pair_rows(rows)]
    return output_parts(model, prepared.inputs.subset(rows), features)


def contrast_parts(
    model: MismatchModel, prepared: PreparedTask, rows: np.ndarray, records: Parts
) -> tuple[Parts, Parts] | None:
    """(copies, parents): the outputs of the contrast copies made from the records at
    ``rows`` (whose outputs are ``records``) and of the text each must rate below; None
    when the task has no such copies."""
    contrast = prepared.contrast
    if contrast is None:
        return None
    position = {int(row): k for k, row in enumerate(rows)}
    owned = np.array(
        [c for c, owner in enumerate(contrast.owners.tolist()) if owner in position],
        dtype=np.int64,
    )  # the copies of these records, reference-triple anchors included (they are parents)
    compared = [k for k, c in enumerate(owned.tolist()) if contrast.parents[c] != ANCHOR]
    if not compared:
        return None
    outputs = output_parts(
        model,
        contrast.inputs.subset(owned),
        contrast.features[contrast.inputs.pair_rows(owned)],
    )
    among = {int(c): k for k, c in enumerate(owned)}
    parent_parts = []
    for parent_outputs, own in ((records.learned, outputs.learned), (records.ridge, outputs.ridge)):
        parent_parts.append(np.stack([
            parent_outputs[position[int(contrast.owners[c])]] if contrast.parents[c] < 0
            else own[among[int(contrast.parents[c])]]
            for c in owned[compared]
        ]))  # fmt: skip
    copies = Parts(outputs.learned[compared], outputs.ridge[compared])
    return copies, Parts(parent_parts[0], parent_parts[1])


def choose_mix(
    model: MismatchModel,
    prepared: PreparedTask,
    val: np.ndarray,
    single: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> np.ndarray:
    """Set ``model.learned_share`` and each criterion's frozen anchor (``model.ridge_rating``:
    its ridge fit or, with ``single``, the (weight, bias) of the single-metric lines, that
    criterion's row) from the validation records at ``val`` and the contrast copies made from
    them (never trained on: a training batch carries only the copies of its own records).
    Returns the chosen anchor per criterion (0: ridge, 1: single metric)."""
    ridge = model.ridge_rating
    assert ridge is not None  # a rating_mix model
    fits = [(ridge.weight.detach().clone(), ridge.bias.detach().clone())]
    fits += [single] if single is not None else []
    records, copies, parents = [], [], []
    for weight, bias in fits:
        with torch.no_grad():
            ridge.weight.copy_(weight)
            ridge.bias.copy_(bias)
        parts = rating_parts(model, prepared, val)
        records.append(parts)
        contrast = contrast_parts(model, prepared, val, parts)
        if contrast is not None:
            copies.append(contrast[0])
            parents.append(contrast[1])
    anchors, shares = best_mixes(
        records, prepared.inputs.targets[val], copies or None, parents or None
    )
    with torch.no_grad():
        for k, anchor in enumerate(anchors.tolist()):
            ridge.weight[k] = fits[anchor][0][k]
            ridge.bias[k] = fits[anchor][1][k]
        model.learned_share.copy_(torch.from_numpy(shares).float())
    return anchors
