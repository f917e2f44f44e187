"""Score from the likeliest reading, errors named by the closest reference: measured on WebNLG
2020's highly rated outputs with all their references, the errors of `mismatch bench realtext`
applied (as docs/experiments/2026-12-02-deciding-reference/run.py, whose "hybrid" rule took
score and errors alike from the closest reference where the likeliest reading is an error).
`--part train` (default): the groups training may use, where the rule is chosen;
`--part held_out`: the bench's measurement-only groups, read once the rule is chosen.

Both rules are read from predict itself: "likeliest" (the shipped base before this record)
and "likeliest_errors_closest". Reported per rule: NoContr recall on the unperturbed outputs,
the share of perturbed texts scored below their base (drop), the share read as NoContr, and
the top error class (argmax over the 13 error classes) = the applied rule's class, per class
and averaged over classes.

    python docs/experiments/2026-12-02-errors-named-closest/run.py CHECKPOINT OUT.json \
        [--limit N] [--part train|held_out]
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
from evaluator.inference import predict_outputs
from evaluator.realtext_data import PARTS, highly_rated, partitions, perturb_bases
from mismatch_core.resources import data_dir
from mismatch_core.taxonomy import CODES, ERROR_CODES

RULES = ("likeliest", "likeliest_errors_closest")


def read(checkpoint, refs: list[list[str]], gens: list[str], rule: str):
    """predict_outputs under ``rule`` (MismatchConfig.deciding_reference)."""
    config = checkpoint.model.config
    kept, config.deciding_reference = config.deciding_reference, rule
    try:
        return predict_outputs(checkpoint, refs, gens)
    finally:
        config.deciding_reference = kept


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
    scores = {}
    for rule in RULES:
        base = read(checkpoint, refs, gens, rule)
        pert = read(checkpoint, [refs[p.base] for p in items], [p.text for p in items], rule)
        b, p = base.probabilities, pert.probabilities
        top = np.array(CODES)[1 + p[:, 1:].argmax(axis=1)]
        per_class = {c: share(top[codes == c] == c) for c in ERROR_CODES if (codes == c).any()}
        report["rules"][rule] = {
            "base_nocontr_recall": share(b[:, 0] >= THRESHOLD),
            "drop": share(b[owner, 0] > p[:, 0]),
            "perturbed_read_as_nocontr": share(p[:, 0] >= THRESHOLD),
            "top_error_is_class_mean_over_classes": float(np.mean(list(per_class.values()))),
            "per_class": per_class,
            "perturbed_named_by_first_reference": share(pert.ref_index == 0),
        }
        scores[rule] = np.concatenate([b[:, 0], p[:, 0]])
    # the rules share the score by construction: checked on every text
    report["score_max_abs_difference"] = float(np.abs(scores[RULES[0]] - scores[RULES[1]]).max())
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    for rule, r in report["rules"].items():
        print(rule, {k: v for k, v in r.items() if k != "per_class"})
    print("score max abs difference", report["score_max_abs_difference"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
