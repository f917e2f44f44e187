"""Experiment patch (on PYTHONPATH): the validation groups may also drop a criterion's
mismatch map. Each anchor (the ridge fit, the single-metric line) is offered with and
without the map of the mismatch head's class log-probabilities; the same rule for contrast
copies applies (as many below their parent as the learned rating with its map). A criterion
that drops the map gets a zero row in it, so the exported checkpoint rates as chosen."""

import torch

from evaluator.finetune import rating_mix, train


def choose_mix(model, prepared, val, single=None):
    ridge, mapping = model.ridge_rating, model.mismatch_rating
    assert ridge is not None and mapping is not None
    fits = [(ridge.weight.detach().clone(), ridge.bias.detach().clone())]
    fits += [single] if single is not None else []
    kept_map = (mapping.weight.detach().clone(), mapping.bias.detach().clone())
    options = [(fit, True) for fit in fits] + [(fit, False) for fit in fits]
    records, copies, parents = [], [], []
    for (weight, bias), with_map in options:
        with torch.no_grad():
            ridge.weight.copy_(weight)
            ridge.bias.copy_(bias)
            mapping.weight.copy_(kept_map[0] * with_map)
            mapping.bias.copy_(kept_map[1] * with_map)
        parts = rating_mix.rating_parts(model, prepared, val)
        records.append(parts)
        contrast = rating_mix.contrast_parts(model, prepared, val, parts)
        if contrast is not None:
            copies.append(contrast[0])
            parents.append(contrast[1])
    anchors, shares = rating_mix.best_mixes(
        records, prepared.inputs.targets[val], copies or None, parents or None
    )
    with torch.no_grad():
        mapping.weight.copy_(kept_map[0])
        mapping.bias.copy_(kept_map[1])
        for k, anchor in enumerate(anchors.tolist()):
            (weight, bias), with_map = options[anchor]
            ridge.weight[k] = weight[k]
            ridge.bias[k] = bias[k]
            if not with_map:
                mapping.weight[k] = 0.0
                mapping.bias[k] = 0.0
        model.learned_share.copy_(torch.from_numpy(shares).float())
    print("MAP CHOICE anchors", anchors.tolist(), "shares", shares.tolist(), flush=True)
    return anchors


rating_mix.choose_mix = choose_mix
train.choose_mix = choose_mix
