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
(docs/experiments/2026-11-25-rating-mix/README.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from evaluator.finetune.agreement import kendall
from evaluator.finetune.contrast import ANCHOR
from evaluator.finetune.data import TaskInputs
from evaluator.finetune.datamodule import PreparedTask
from evaluator.finetune.outputs import closest_outputs
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


def best_shares(
    records: Parts, targets: np.ndarray, copies: Parts | None = None, parents: Parts | None = None
) -> np.ndarray:
    """Per criterion column, the share in SHARES whose mix ranks the rated records best
    (Kendall τ-b); a tie keeps the larger share, and a column with fewer than two rated
    records keeps the learned rating whole. With contrast copies (``copies``, each against
    the text it was made from, ``parents``), only shares that rate as many copies below
    their parent as the learned rating does are candidates: the mix must not give back what
    the contrast copies taught (the stress tests' graded errors)."""
    shares = np.ones(targets.shape[1])
    for column in range(targets.shape[1]):
        present = ~np.isnan(targets[:, column])
        if present.sum() < 2:
            continue
        candidates = list(SHARES)
        if copies is not None and parents is not None:
            below = {
                share: int((copies.at(share, column) < parents.at(share, column)).sum())
                for share in SHARES
            }
            candidates = [share for share in SHARES if below[share] >= below[1.0]]
        scored = [
            (kendall(records.at(share, column)[present], targets[present, column]), share)
            for share in candidates
        ]
        shares[column] = max(scored)[1]
    return shares


def output_parts(model: MismatchModel, inputs: TaskInputs, features: np.ndarray) -> Parts:
    """The learned and ridge outputs of every record of ``inputs`` (``features``: the scaled
    features of all its (record, reference) pairs), read as predict reads them."""
    kept = model.learned_share.clone()
    outputs = []
    try:
        for share in (1.0, 0.0):
            model.learned_share.fill_(share)
            _, _, ratings = closest_outputs(model, features, inputs)
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


def choose_learned_shares(model: MismatchModel, prepared: PreparedTask, val: np.ndarray) -> None:
    """Set ``model.learned_share`` from the validation records at ``val`` and the contrast
    copies made from them (never trained on: a training batch carries only the copies of
    its own records)."""
    records = rating_parts(model, prepared, val)
    contrast = contrast_parts(model, prepared, val, records)
    copies, parents = contrast if contrast is not None else (None, None)
    shares = best_shares(records, prepared.inputs.targets[val], copies, parents)
    with torch.no_grad():
        model.learned_share.copy_(torch.from_numpy(shares).float())
