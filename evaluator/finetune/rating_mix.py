"""How much of the learned rating each criterion keeps over the ridge fit of the metrics.

Fine-tuning starts the metric map at the ridge fit of the training ratings and then learns
from the text, the mismatch head and the contrast copies. On some criteria what it learns
ranks held-out outputs worse than the ridge fit it started from, and then worse than a single
metric (docs/results.md). With ``rating_mix`` each criterion's rating is
``share * learned + (1 - share) * ridge + mismatch``: learned is the rating head plus the
metric map, ridge the map's frozen start, mismatch the map of the mismatch head's class
log-probabilities, kept outside the mix so that an error the model names lowers the rating
as much whatever the share. The share is chosen on the validation groups (never on test
records), so the learned part counts only as far as it earns there.
"""

from __future__ import annotations

import numpy as np
import torch

from evaluator.finetune.agreement import kendall
from evaluator.finetune.datamodule import PreparedTask
from evaluator.finetune.outputs import closest_outputs
from evaluator.model import MismatchModel

SHARES = (0.0, 0.25, 0.5, 0.75, 1.0)  # coarse: a validation slice holds a few hundred records


def best_shares(learned: np.ndarray, ridge: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Per criterion column, the share in SHARES whose mix ranks the rated records best
    (Kendall τ-b); a tie keeps the larger share, and a column with fewer than two rated
    records keeps the learned rating whole."""
    shares = np.ones(targets.shape[1])
    for column in range(targets.shape[1]):
        present = ~np.isnan(targets[:, column])
        if present.sum() < 2:
            continue
        taus = [
            kendall(share * learned[present, column] + (1 - share) * ridge[present, column],
                    targets[present, column])
            for share in SHARES
        ]  # fmt: skip
        best = max(range(len(SHARES)), key=lambda k: (taus[k], SHARES[k]))
        shares[column] = SHARES[best]
    return shares


def rating_parts(
    model: MismatchModel, prepared: PreparedTask, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(learned, ridge) rating outputs of the records at ``rows``, read as predict reads them."""
    inputs = prepared.inputs.subset(rows)
    features = prepared.features[prepared.inputs.pair_rows(rows)]
    kept = model.learned_share.clone()
    parts = []
    try:
        for share in (1.0, 0.0):
            model.learned_share.fill_(share)
            _, _, ratings = closest_outputs(model, features, inputs)
            assert ratings is not None  # a rating_mix model has a rating head
            parts.append(ratings)
    finally:
        model.learned_share.copy_(kept)
    return parts[0], parts[1]


def choose_learned_shares(model: MismatchModel, prepared: PreparedTask, val: np.ndarray) -> None:
    """Set ``model.learned_share`` from the validation records at ``val``."""
    learned, ridge = rating_parts(model, prepared, val)
    shares = best_shares(learned, ridge, prepared.inputs.targets[val])
    with torch.no_grad():
        model.learned_share.copy_(torch.from_numpy(shares).float())
