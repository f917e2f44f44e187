"""Training-side probe: P(NoContr) read one way, (ref, gen), against readings of both ways
combined (mean, geometric mean, min), on the SICK TRAIN pairs of the real val split and on
the whole real val split (real bases, and errors applied to them).

    python probe.py CKPT REAL_VAL_PARQUET SICK_TRAIN_JSONL_GZ

REAL_VAL_PARQUET is the val split of `mismatch adapt pairs --sick-substitutions`. Never reads
SICK TRIAL or DARR (measurement only).
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from evaluator.hub import load
from evaluator.inference import predict_proba
from evaluator.training.real_bases import sick_rows
from mismatch_core.jsonl import iter_jsonl

model = load(sys.argv[1])
val = pd.read_parquet(sys.argv[2])
sick_train = Path(sys.argv[3])
_, held = sick_rows(sick_train, substitutions=True)
held_groups = {row["group"] for row in held}
other = pd.DataFrame(
    [
        {"ref": value["a"], "gen": value["b"]}
        for _, value in iter_jsonl(sick_train)
        if value["contradiction"] and f"sick:{value['id']}" not in held_groups
    ]
)
sick = {
    "paraphrases": val[(val.rule == "real_base") & (val.source == "sick")],
    "contradictions": pd.concat(
        [val[val.rule.isin(["sick_contradiction", "sick_substitution"])], other]
    ),
}


def both_ways(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    forward = predict_proba(model, list(frame.ref), list(frame.gen))[:, 0]
    reverse = predict_proba(model, list(frame.gen), list(frame.ref))[:, 0]
    return forward, reverse


readings = {name: both_ways(frame) for name, frame in sick.items()}
real = both_ways(val)
correct = (val.label == "NoContr").to_numpy()
combine = {
    "one way": lambda f, r: f,
    "mean": lambda f, r: (f + r) / 2,
    "geometric mean": lambda f, r: np.sqrt(f * r),
    "min": np.minimum,
}
print("| reading | SICK AUROC | SICK contradictions at 96 / 100 / 104 paraphrases | real val AUROC | real val errors at 200 NoContr |")  # fmt: skip
print("|---|---|---|---|---|")
for name, rule in combine.items():
    para = rule(*readings["paraphrases"])
    contra = rule(*readings["contradictions"])
    auc = roc_auc_score([1] * len(para) + [0] * len(contra), np.r_[para, contra])
    counts = []
    for k in (96, 100, 104):  # the threshold that reads k paraphrases as NoContr
        threshold = np.sort(para)[::-1][k - 1]
        counts.append(str(int((contra >= threshold).sum())))
    score = rule(*real)
    threshold = np.sort(score[correct])[::-1][199]
    errors = int((score[~correct] >= threshold).sum())
    print(
        f"| {name} | {auc:.4f} | {' / '.join(counts)} of {len(contra)} | "
        f"{roc_auc_score(correct, score):.4f} | {errors} of {(~correct).sum()} |"
    )
