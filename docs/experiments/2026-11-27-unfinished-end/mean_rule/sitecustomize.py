"""Experiment only: put this folder on PYTHONPATH and the rating mix's copy rule reads the
mean of the criteria, as the contrast loss and the stress tests do: criterion by criterion,
in order, the (anchor, share) with the best validation tau among those that keep as many
contrast copies' mean rating below their parent's as the learned ratings do, the criteria
before it as chosen, the ones after it learned (evaluator.finetune.rating_mix.best_mixes)."""

import sys

import numpy as np

import evaluator.finetune.rating_mix as rating_mix
from evaluator.finetune.agreement import kendall

_original = rating_mix.best_mixes


def best_mixes(records, targets, copies=None, parents=None):
    if copies is None or parents is None:
        return _original(records, targets, copies, parents)
    columns = targets.shape[1]
    anchors = np.zeros(columns, dtype=np.int64)
    shares = np.ones(columns)

    def mean(parts, a, s):
        return np.mean([parts[a[c]].at(s[c], c) for c in range(columns)], axis=0)

    def below(a, s):
        return int((mean(copies, a, s) < mean(parents, a, s)).sum())

    need = below(anchors, shares)
    for column in range(columns):
        present = ~np.isnan(targets[:, column])
        if present.sum() < 2:
            continue
        scored = []
        for a in range(len(records)):
            for share in rating_mix.SHARES:
                trial_a, trial_s = anchors.copy(), shares.copy()
                trial_a[column], trial_s[column] = a, share
                if below(trial_a, trial_s) < need:
                    continue
                tau = kendall(records[a].at(share, column)[present], targets[present, column])
                scored.append((tau, share, -a))
        _, shares[column], anchor = max(scored)
        anchors[column] = -anchor
    return anchors, shares


rating_mix.best_mixes = best_mixes
print("meanrule: the copy rule reads the mean rating", file=sys.stderr)
