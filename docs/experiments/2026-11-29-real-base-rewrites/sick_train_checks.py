"""Training-side SICK checks of this record: SICK TRAIN's pairs in the real val split and its
contradictions that no training pair holds, read by each checkpoint.

    python sick_train_checks.py REAL_VAL_PARQUET SICK_TRAIN_JSONL_GZ NAME=CKPT ...

REAL_VAL_PARQUET is the val split of `mismatch adapt pairs --sick-substitutions` (without
rewrites). Each checkpoint is loaded once and reads every set (`predict_proba`, what
`mismatch predict` reports).
"""

import sys
from pathlib import Path

import pandas as pd
from sklearn.metrics import roc_auc_score

from evaluator.cli.bench.realtext import THRESHOLD
from evaluator.hub import load
from evaluator.inference import predict_proba
from evaluator.training.real_bases import sick_rows
from mismatch_core.jsonl import iter_jsonl

real_val, sick_train = Path(sys.argv[1]), Path(sys.argv[2])
checkpoints = dict(arg.split("=", 1) for arg in sys.argv[3:])

val = pd.read_parquet(real_val)
# the contradictions the training pairs hold (negations, one changed word), by SICK group
_, held = sick_rows(sick_train, substitutions=True)
held_groups = {row["group"] for row in held}
other = [
    {"id": value["id"], "ref": value["a"], "gen": value["b"]}
    for _, value in iter_jsonl(sick_train)
    if value["contradiction"] and f"sick:{value['id']}" not in held_groups
]
sets = {
    "val_paraphrases": val[(val.rule == "real_base") & (val.source == "sick")],
    "val_contradictions": val[val.rule.isin(["sick_contradiction", "sick_substitution"])],
    "other_contradictions": pd.DataFrame(other),
}


def share(p: list[float]) -> str:
    read = sum(x >= THRESHOLD for x in p)
    return f"{read} / {len(p)}"


print("| checkpoint | val paraphrases read as NoContr | val contradictions | AUROC | other contradictions |")  # fmt: skip
print("|---|---|---|---|---|")
for label, checkpoint in checkpoints.items():
    model = load(checkpoint)
    p = {
        name: list(predict_proba(model, list(f.ref), list(f.gen))[:, 0]) for name, f in sets.items()
    }
    para, con, oth = p["val_paraphrases"], p["val_contradictions"], p["other_contradictions"]
    auroc = roc_auc_score([1] * len(para) + [0] * len(con), para + con)
    other_share = 100 * sum(x >= THRESHOLD for x in oth) / len(oth)
    print(
        f"| {label} | {share(para)} | {share(con)} | {auroc:.4f} | {share(oth)} ({other_share:.1f} %) |"
    )
