"""Which reference should decide a multi-reference pair? Measured on WebNLG 2020's highly
rated outputs with all their references, the errors of `mismatch bench realtext` applied.
`--part train` (default): the groups training may use, where the rule is chosen;
`--part held_out`: the bench's measurement-only groups, read once the rule is chosen.

Rule "nocontr" (shipped): the reference whose reading the head finds likeliest NoContr.
Rule "closest": the reference closest on the metric columns that say closeness
(`registry.CLOSER` +1/-1, the signed sum of the scaled features), as the task ratings already
choose where they read the kind of difference. Rule "hybrid": "nocontr" where that reading
reads NoContr (the head's P >= 0.5), else "closest", so a correct output keeps its likeliest
reading and an error is named against the reference the output is closest to: what
`deciding_reference: likeliest_else_closest` gives, taken from predict itself. All rules read
the same per-reference readings; only the choice differs. Also "first": the first reference
alone (the bench's reading today). The errors are applied against the first reference
(`perturb_bases` checks a substitution against it), which favours a rule that picks it: each
rule's share of first-reference picks is reported.

    python docs/experiments/2026-12-02-deciding-reference/run.py CHECKPOINT OUT.json [--limit N]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np

from evaluator.bench.realtext import THRESHOLD, share
from evaluator.hub import load as load_checkpoint
from evaluator.inference import closest_rows, metric_closeness, predict_outputs
from evaluator.realtext_data import PARTS, highly_rated, partitions, perturb_bases
from mismatch_core.resources import data_dir
from mismatch_core.taxonomy import CODES, ERROR_CODES


def decided(checkpoint, refs: list[list[str]], gens: list[str], rule: str):
    """predict_outputs under ``rule`` (MismatchConfig.deciding_reference)."""
    config = checkpoint.model.config
    kept, config.deciding_reference = config.deciding_reference, rule
    try:
        return predict_outputs(checkpoint, refs, gens)
    finally:
        config.deciding_reference = kept


def readings(checkpoint, refs: list[list[str]], gens: list[str]):
    """Every reference of each pair read alone: (probabilities per reading, the reading each
    rule chooses per pair)."""
    owner = np.array([i for i, rs in enumerate(refs) for _ in rs])
    flat = predict_outputs(checkpoint, [r for rs in refs for r in rs], [gens[i] for i in owner])
    scaled = checkpoint.scaler.transform(flat.features)
    first_row = np.searchsorted(owner, np.arange(len(gens)))
    likeliest = decided(checkpoint, refs, gens, "likeliest")
    hybrid = decided(checkpoint, refs, gens, "likeliest_else_closest")
    choice = {
        "nocontr": first_row + likeliest.ref_index,
        "closest": closest_rows(
            metric_closeness(scaled, checkpoint.feature_names), owner, len(gens)
        ),
        "hybrid": first_row + hybrid.ref_index,
        "first": first_row,
    }
    # the rules read the same readings as predict
    for rule, outputs in (("nocontr", likeliest), ("hybrid", hybrid)):
        assert np.allclose(flat.probabilities[choice[rule]], outputs.probabilities, atol=1e-4)
    return flat.probabilities, choice, first_row


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("checkpoint")
    parser.add_argument("out", type=Path)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--part", choices=PARTS, default="train")
    args = parser.parse_args()
    checkpoint = load_checkpoint(args.checkpoint)
    bases = highly_rated(partitions(data_dir() / "human"), args.part)["webnlg2020"]
    records = [r for r in bases if len(r.refs) > 1]
    if args.limit and len(records) > args.limit:
        records = random.Random(args.seed).sample(records, args.limit)
    refs = [list(r.refs) for r in records]
    gens = [r.gen for r in records]
    items = perturb_bases([rs[0] for rs in refs], gens, [r.group for r in records], args.seed).items
    base_p, base_choice, base_first = readings(checkpoint, refs, gens)
    pert_p, pert_choice, pert_first = readings(
        checkpoint, [refs[p.base] for p in items], [p.text for p in items]
    )
    owner = np.array([p.base for p in items])
    codes = np.array([p.code for p in items])
    report = {
        "checkpoint": str(args.checkpoint),
        "part": args.part,
        "bases": len(records),
        "references_per_base": float(np.mean([len(rs) for rs in refs])),
        "pairs": len(items),
        "rules": {},
    }
    for rule in ("nocontr", "closest", "hybrid", "first"):
        base = base_p[base_choice[rule]]
        pert = pert_p[pert_choice[rule]]
        top = np.array(CODES)[1 + pert[:, 1:].argmax(axis=1)]
        per_class = {c: share(top[codes == c] == c) for c in ERROR_CODES if (codes == c).any()}
        report["rules"][rule] = {
            "base_nocontr_recall": share(base[:, 0] >= THRESHOLD),
            "drop": share(base[owner, 0] > pert[:, 0]),
            "perturbed_read_as_nocontr": share(pert[:, 0] >= THRESHOLD),
            "top_error_is_class_mean_over_classes": float(np.mean(list(per_class.values()))),
            "per_class": per_class,
            "same_choice_as_nocontr_bases": share(base_choice[rule] == base_choice["nocontr"]),
            "same_choice_as_nocontr_perturbed": share(pert_choice[rule] == pert_choice["nocontr"]),
            "first_reference_bases": share(base_choice[rule] == base_first),
            "first_reference_perturbed": share(pert_choice[rule] == pert_first),
        }
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    for rule, r in report["rules"].items():
        print(rule, {k: v for k, v in r.items() if k != "per_class"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
