"""Experiment only: put this folder on PYTHONPATH and the triples (reference and paraphrase
triples: anchors and the error copies ranked below them) train the mismatch map alone. In
their hinge every other part of the rating (rating head, metric map, ridge mix) is detached,
so the triples decide how much a named error costs, not how the metrics are read; the
other contrast copies train as shipped (evaluator.finetune.module.RatingModule.contrast_loss).
The mismatch map's output is caught by a forward hook, so the forward pass (and the dropout
draws) are the shipped ones."""

import sys

import torch

from evaluator.finetune.contrast import ANCHOR
from evaluator.finetune.module import RatingModule


def contrast_loss(self, outputs, contrast):
    caught = []
    hook = self.model.mismatch_rating.register_forward_hook(lambda m, i, o: caught.append(o))
    try:
        full = self(contrast)
    finally:
        hook.remove()
    (mismatch,) = caught
    parent = contrast["parent"]
    below_anchor = (parent >= 0) & (parent[parent.clamp(min=0)] == ANCHOR)
    triple = (parent == ANCHOR) | below_anchor
    rated = torch.where(triple[:, None], (full - mismatch).detach() + mismatch, full)
    copies = rated.mean(dim=-1)
    parents = torch.where(
        parent >= 0, copies[parent.clamp(min=0)], outputs[contrast["owner"]].mean(dim=-1)
    )
    margin = torch.where(
        below_anchor, self.hparams["reference_margin"], self.hparams["contrast_margin"]
    )
    hinge = torch.relu(margin - (parents - copies))
    ranked = parent != ANCHOR
    return hinge[ranked].sum() / ranked.sum().clamp(min=1)


RatingModule.contrast_loss = contrast_loss
print("map_only: the triples train the mismatch map alone", file=sys.stderr)
